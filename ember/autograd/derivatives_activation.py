"""Derivative lines of the activation ops (format: ``function_table.py``), PyTorch's
derivatives.yaml entries: each forward op through its backward op (NOTE [activation ops] in
``ember/ops/native/activation.py``), each backward op through itself (it is linear in the
incoming gradient) and a formula for the input (double backward; not for
``hardsigmoid_backward`` and ``silu_backward``, which PyTorch does not differentiate
either: silu's formula in ``derivatives.py`` decomposes when it is recorded, as PyTorch's).
The compositions (``selu``, ``relu6``, ``prelu``, ``log_sigmoid``) need no line: their parts
are differentiated.
"""

from __future__ import annotations

import math
from typing import Any

from ember.autograd.derivatives import conj
from ember.autograd.function_table import defvjp
from ember.ops.registry import ops

aten = ops.aten
_zeros_like = aten.zeros_like.default


def _zero(like: Any) -> Any:
    return aten.zeros.default([], dtype=like.dtype)


# --------------------------------------------------------------------------- forward ops

defvjp(aten.leaky_relu.default, lambda g, self, negative_slope=0.01: (
    aten.leaky_relu_backward.default(g, self, negative_slope, False),))  # fmt: skip
defvjp(aten.elu.default, lambda g, self, alpha=1, scale=1, input_scale=1: (
    aten.elu_backward.default(g, alpha, scale, input_scale, False, self),))  # fmt: skip
defvjp(aten.celu.default, lambda g, self, alpha=1.0: (
    aten.elu_backward.default(g, alpha, 1, 1.0 / alpha, False, self),))  # fmt: skip
defvjp(aten.softplus.default, lambda g, self, beta=1, threshold=20: (
    aten.softplus_backward.default(g, self, beta, threshold),))  # fmt: skip
defvjp(aten.hardtanh.default, lambda g, self, min_val=-1, max_val=1: (
    aten.hardtanh_backward.default(g, self, min_val, max_val),))  # fmt: skip
defvjp(aten.hardswish.default, lambda g, self: (aten.hardswish_backward.default(g, self),))
defvjp(aten.hardsigmoid.default, lambda g, self: (aten.hardsigmoid_backward.default(g, self),))
defvjp(aten.softshrink.default, lambda g, self, lambd=0.5: (
    aten.softshrink_backward.default(g, self, lambd),))  # fmt: skip
defvjp(aten.hardshrink.default, lambda g, self, lambd=0.5: (
    aten.hardshrink_backward.default(g, self, lambd),))  # fmt: skip
defvjp(aten.threshold.default, lambda g, self, threshold, value: (
    aten.threshold_backward.default(g, self, threshold),))  # fmt: skip
defvjp(aten._prelu_kernel.default, lambda g, self, weight: (
    aten._prelu_kernel_backward.default(g, self, weight)))  # fmt: skip
defvjp(
    aten.log_sigmoid_forward.default,
    lambda g, self, *, result: (aten.log_sigmoid_backward.default(g[0], self, result[1]),),
    outputs=(True, False),  # the buffer carries no gradient, as in PyTorch
    name="LogSigmoidBackward0",  # PyTorch's name: derivatives.yaml calls the op log_sigmoid
)
defvjp(aten.glu.default, lambda g, self, dim=-1: (aten.glu_backward.default(g, self, dim),))


def _mish(g: Any, self: Any) -> tuple[Any]:
    # mish_backward decomposes into differentiable ops when it is recorded (create_graph),
    # and runs its one kernel otherwise, as PyTorch's
    return (aten.mish_backward.default(g, self),)


defvjp(aten.mish.default, _mish)

# --------------------------------------------------------------------------- backward ops


def _elu_double(
    g: Any,
    grad_output: Any,
    alpha: Any,
    scale: Any,
    input_scale: Any,
    is_result: bool,
    self_or_result: Any,
) -> tuple[Any, Any]:
    negative = (self_or_result < 0).to(g.dtype)
    if is_result:
        second = g * grad_output * input_scale * negative
    else:
        gg = g * grad_output * input_scale
        second = (
            aten.elu_backward.default(gg, alpha, scale, input_scale, is_result, self_or_result)
            * negative
        )
    return aten.elu_backward.default(
        g, alpha, scale, input_scale, is_result, self_or_result
    ), second


def _softplus_double(
    g: Any, grad_output: Any, self: Any, beta: Any, threshold: Any
) -> tuple[Any, Any]:
    x = self * beta
    s = x.sigmoid()
    second = g * grad_output * s * (1 - s) * (x < threshold).to(g.dtype) * beta
    return aten.softplus_backward.default(g, self, beta, threshold), second


def _prelu_double(g: Any, grad_output: Any, self: Any, weight: Any) -> tuple[Any, Any, Any]:
    gg_self, gg_weight = g
    pos = self >= 0  # PyTorch's formula tests >= here (the forward tests >)
    zero = _zero(grad_output)
    if gg_self is not None:
        other = gg_self * weight if gg_weight is None else gg_self * weight + gg_weight * self
        g_out = aten.where.self(pos, gg_self, other)
    else:
        g_out = aten.where.self(pos, zero, gg_weight * self)
    g_self = (
        _zeros_like(self)
        if gg_weight is None
        else aten.where.self(pos, zero, grad_output * gg_weight)
    )
    g_weight = (
        _zeros_like(self) if gg_self is None else aten.where.self(pos, zero, grad_output * gg_self)
    )
    return g_out, g_self, g_weight


def _glu_double(g: Any, grad_output: Any, self: Any, dim: int) -> tuple[Any, Any]:
    d = dim % self.ndim
    h = self.shape[d] // 2
    a, b = self.narrow(d, 0, h), self.narrow(d, h, h)
    s = b.sigmoid()
    one_minus = 1 - s
    s1 = s * one_minus
    gg_a, gg_b = g.narrow(d, 0, h), g.narrow(d, h, h)
    g_first = gg_b * grad_output * s1
    second_order = s1 * one_minus - s * s * one_minus
    g_second = gg_b * a * grad_output * second_order + gg_a * grad_output * s1
    g_self = aten.cat.default([g_first, g_second], d)
    ones = aten.ones_like.default(a)
    tmp = g * aten.glu_backward.default(ones, self, d)
    return tmp.narrow(d, 0, h) + tmp.narrow(d, h, h), g_self


defvjp(aten.leaky_relu_backward.default, lambda g, grad_output, self, negative_slope, self_is_result: (
    aten.leaky_relu_backward.default(g, self, negative_slope, False), _zeros_like(g)))  # fmt: skip
defvjp(aten.elu_backward.default, _elu_double)
defvjp(aten.softplus_backward.default, _softplus_double)
defvjp(aten.hardtanh_backward.default, lambda g, grad_output, self, min_val, max_val: (
    aten.hardtanh_backward.default(g, self, min_val, max_val), _zeros_like(g)))  # fmt: skip
defvjp(aten.hardswish_backward.default, lambda g, grad_output, self: (
    aten.hardswish_backward.default(g, self),
    aten.where.self((self > -3.0) & (self < 3.0), g * grad_output / 3.0, _zero(g))))  # fmt: skip
defvjp(aten.softshrink_backward.default, lambda g, grad_output, self, lambd: (
    aten.softshrink_backward.default(g, self, lambd), _zeros_like(g)))  # fmt: skip
defvjp(aten.hardshrink_backward.default, lambda g, grad_out, self, lambd: (
    aten.hardshrink_backward.default(g, self, lambd), _zeros_like(g)))  # fmt: skip
defvjp(aten.log_sigmoid_backward.default, lambda g, grad_output, self, buffer: (
    aten.log_sigmoid_backward.default(g, self, buffer),
    g * grad_output * (self.sigmoid() - 1) * self.sigmoid(), None))  # fmt: skip
defvjp(aten._prelu_kernel_backward.default, _prelu_double)
defvjp(aten.glu_backward.default, _glu_double)


def _gelu_double(g: Any, grad_output: Any, self: Any, approximate: str = "none") -> tuple[Any, Any]:
    """derivatives.yaml's ``gelu_double_backward``: gelu's second derivative, in ember ops."""
    if approximate == "tanh":
        k, c = math.sqrt(2 / math.pi), 0.044715
        x2 = self * self
        t = (k * (self + c * x2 * self)).tanh()
        d_inner = k * (1 + 3 * c * x2)
        one_minus = 1 - t * t
        # (1 - t²) (u' - x t u'² + x u''/2), u = k (x + c x³)
        second = one_minus * (d_inner - self * t * d_inner * d_inner + 3 * k * c * x2)
    else:
        pdf = (-0.5 * self * self).exp() * (1 / math.sqrt(2 * math.pi))
        second = pdf * (2 - self * self)  # 2 pdf + x pdf', pdf' = -x pdf
    return (
        aten.gelu_backward.default(g, self, approximate=approximate),
        g * grad_output * second,
    )


defvjp(aten.gelu_backward.default, _gelu_double)
defvjp(aten.tanh_backward.default, lambda g, grad_output, output: (
    aten.tanh_backward.default(g, conj(output)),
    conj(g) * (-2 * conj(output) * grad_output)))  # fmt: skip
defvjp(aten.sigmoid_backward.default, lambda g, grad_output, output: (
    aten.sigmoid_backward.default(g, conj(output)),
    conj(g) * grad_output * (-2 * conj(output) + 1)))  # fmt: skip
