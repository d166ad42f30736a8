"""CPU kernels of the activation ops and their backward ops (NOTE [activation ops]).

Each computes PyTorch's formula elementwise with NumPy, in float32 for float16 inputs
(PyTorch's opmath), and keeps PyTorch's choice at the kinks (``x <= 0`` or ``x > 0``) and
for NaN inputs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.backends.cpu.pointwise import (
    _erf,
    _opmath,
    arg,
    broadcast_error,
    check_gelu,
    result,
)
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.activation import check_floating, glu_dim
from ember.ops.native.promotion import POINTWISE, pointwise_dtypes
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU


def _inputs(
    name: str, tensors: tuple[Any, ...], args: tuple[Any, ...]
) -> tuple[list[Any], np.dtype[Any], np.dtype[Any]]:
    """The ``tensors`` as arrays in the op's computation dtype (float32 for float16), that
    dtype, and the result dtype; ``args`` (every positional argument) go through the op's
    checks, which raise for bad values and for dtypes the op has no kernel for."""
    cdt, rdt = pointwise_dtypes(name, POINTWISE[name], args)
    c = _opmath(cdt.np)
    return [arg(t, c) for t in tensors], c, rdt.np


def _floats(name: str, self: Tensor) -> tuple[np.ndarray, np.dtype[Any]]:
    """A floating input of an op that is not pointwise, in its computation dtype, and the
    result dtype (other dtypes raise PyTorch's NotImplementedError)."""
    check_floating(name, self.dtype)
    r = self.dtype.np
    return arg(self, _opmath(r)), r


def _scalar(value: Any, npdt: np.dtype[Any]) -> Any:
    """A Scalar argument in the computation dtype (an integer dtype truncates, as C++)."""
    return np.asarray(value).astype(npdt) if npdt.kind in "iu" else value


def _run(name: str, fn: Any, tensors: tuple[Any, ...], args: tuple[Any, ...]) -> Tensor:
    """``fn(compute dtype, *arrays)`` of the ``tensors`` (``args``: see ``_inputs``)."""
    xs, c, r = _inputs(name, tensors, args)
    with quiet_block():
        try:
            out = fn(c, *xs)
        except ValueError:
            broadcast_error(name, *tensors)
            raise
    return result(out, r)


# --------------------------------------------------------------------------- forward ops


@impl(aten.leaky_relu.default, CPU)
def leaky_relu(self: Any, negative_slope: Any = 0.01) -> Tensor:
    return _run(
        "leaky_relu.default",
        lambda c, x: np.where(x > 0, x, x * negative_slope),
        (self,),
        (self, negative_slope),
    )


def _elu(x: Any, alpha: Any, scale: Any, input_scale: Any) -> Any:
    return np.where(x <= 0, np.expm1(x * input_scale) * (alpha * scale), x * scale)


@impl(aten.elu.default, CPU)
def elu(self: Any, alpha: Any = 1, scale: Any = 1, input_scale: Any = 1) -> Tensor:
    return _run(
        "elu.default",
        lambda c, x: _elu(x, alpha, scale, input_scale),
        (self,),
        (self, alpha, scale, input_scale),
    )


@impl(aten.celu.default, CPU)
def celu(self: Any, alpha: Any = 1.0) -> Tensor:
    return _run("celu.default", lambda c, x: _elu(x, alpha, 1, 1.0 / alpha), (self,), (self, alpha))


@impl(aten.softplus.default, CPU)
def softplus(self: Any, beta: Any = 1, threshold: Any = 20) -> Tensor:
    def fn(c: Any, x: Any) -> Any:
        xb = x * beta
        return np.where(xb > threshold, x, np.log1p(np.exp(xb)) / beta)

    return _run("softplus.default", fn, (self,), (self, beta, threshold))


@impl(aten.hardtanh.default, CPU)
def hardtanh(self: Any, min_val: Any = -1, max_val: Any = 1) -> Tensor:
    def fn(c: Any, x: Any) -> Any:
        return np.minimum(np.maximum(x, _scalar(min_val, c)), _scalar(max_val, c))

    return _run("hardtanh.default", fn, (self,), (self, min_val, max_val))


def _hardsigmoid(x: Any) -> Any:
    return np.minimum(np.maximum(x + 3, 0), 6) / 6


@impl(aten.hardswish.default, CPU)
def hardswish(self: Any) -> Tensor:
    return _run("hardswish.default", lambda c, x: x * _hardsigmoid(x), (self,), (self,))


@impl(aten.hardsigmoid.default, CPU)
def hardsigmoid(self: Any) -> Tensor:
    return _run("hardsigmoid.default", lambda c, x: _hardsigmoid(x), (self,), (self,))


@impl(aten.mish.default, CPU)
def mish(self: Any) -> Tensor:
    return _run("mish.default", lambda c, x: x * np.tanh(np.log1p(np.exp(x))), (self,), (self,))


@impl(aten.softshrink.default, CPU)
def softshrink(self: Any, lambd: Any = 0.5) -> Tensor:
    def fn(c: Any, x: Any) -> Any:
        return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, x * 0))

    return _run("softshrink.default", fn, (self,), (self, lambd))


def _inside(x: Any, lambd: Any) -> Any:
    return (x >= -lambd) & (x <= lambd)


@impl(aten.hardshrink.default, CPU)
def hardshrink(self: Any, lambd: Any = 0.5) -> Tensor:
    return _run(
        "hardshrink.default", lambda c, x: np.where(_inside(x, lambd), 0, x), (self,), (self, lambd)
    )


@impl(aten.threshold.default, CPU)
def threshold(self: Any, threshold: Any, value: Any) -> Tensor:
    def fn(c: Any, x: Any) -> Any:
        return np.where(x <= _scalar(threshold, c), _scalar(value, c), x)

    return _run("threshold.default", fn, (self,), (self, threshold, value))


@impl(aten._prelu_kernel.default, CPU)
def _prelu_kernel(self: Any, weight: Any) -> Tensor:
    return _run(
        "_prelu_kernel.default",
        lambda c, x, w: np.where(x > 0, x, w * x),
        (self, weight),
        (self, weight),
    )


@impl(aten.log_sigmoid_forward.default, CPU)
def log_sigmoid_forward(self: Tensor) -> tuple[Tensor, Tensor]:
    x, r = _floats("log_sigmoid_forward", self)
    with quiet_block():
        z = np.exp(-np.abs(x))  # the buffer, as PyTorch's: log(sigmoid(x)) = min(x, 0) - log1p(z)
        out = np.minimum(x, 0) - np.log1p(z)
    return result(out, r), result(z, r)


def _glu_halves(x: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    h = x.shape[d] // 2
    first = (slice(None),) * d + (slice(0, h),)
    second = (slice(None),) * d + (slice(h, None),)
    return x[first], x[second]


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + np.exp(-x))


@impl(aten.glu.default, CPU)
def glu(self: Tensor, dim: int = -1) -> Tensor:
    d = glu_dim(tuple(self.shape), dim)
    x, r = _floats("glu", self)
    a, b = _glu_halves(x, d)
    with quiet_block():
        return result(a * _sigmoid(b), r)


# --------------------------------------------------------------------------- backward ops


@impl(aten.leaky_relu_backward.default, CPU)
def leaky_relu_backward(
    grad_output: Any, self: Any, negative_slope: Any, self_is_result: bool
) -> Tensor:
    return _run(
        "leaky_relu_backward.default",
        lambda c, g, x: np.where(x > 0, g, g * negative_slope),
        (grad_output, self),
        (grad_output, self, negative_slope, self_is_result),
    )


@impl(aten.elu_backward.default, CPU)
def elu_backward(
    grad_output: Any,
    alpha: Any,
    scale: Any,
    input_scale: Any,
    is_result: bool,
    self_or_result: Any,
) -> Tensor:
    neg = alpha * scale

    def fn(c: Any, g: Any, x: Any) -> Any:
        if is_result:
            return np.where(x <= 0, g * input_scale * (x + neg), g * scale)
        return np.where(x <= 0, g * input_scale * neg * np.exp(x * input_scale), g * scale)

    return _run(
        "elu_backward.default",
        fn,
        (grad_output, self_or_result),
        (grad_output, alpha, scale, input_scale, is_result, self_or_result),
    )


@impl(aten.softplus_backward.default, CPU)
def softplus_backward(grad_output: Any, self: Any, beta: Any, threshold: Any) -> Tensor:
    def fn(c: Any, g: Any, x: Any) -> Any:
        xb = x * beta
        z = np.exp(xb)
        return np.where(xb > threshold, g, g * z / (z + 1))

    return _run("softplus_backward.default", fn, (grad_output, self), (grad_output, self))


@impl(aten.hardtanh_backward.default, CPU)
def hardtanh_backward(grad_output: Any, self: Any, min_val: Any, max_val: Any) -> Tensor:
    def fn(c: Any, g: Any, x: Any) -> Any:
        return np.where((x <= min_val) | (x >= max_val), 0, g)

    return _run("hardtanh_backward.default", fn, (grad_output, self), (grad_output, self))


@impl(aten.hardswish_backward.default, CPU)
def hardswish_backward(grad_output: Any, self: Any) -> Tensor:
    def fn(c: Any, g: Any, x: Any) -> Any:
        # at the kinks as PyTorch: 0 at -3, g at 3 (its double backward's open interval)
        return np.where(x <= -3, 0, np.where(x < 3, g * (x / 3 + 0.5), g))

    return _run("hardswish_backward.default", fn, (grad_output, self), (grad_output, self))


@impl(aten.hardsigmoid_backward.default, CPU)
def hardsigmoid_backward(grad_output: Any, self: Any) -> Tensor:
    def fn(c: Any, g: Any, x: Any) -> Any:
        return np.where((x > -3) & (x < 3), g / 6, 0)

    return _run("hardsigmoid_backward.default", fn, (grad_output, self), (grad_output, self))


@impl(aten.mish_backward.default, CPU)
def mish_backward(grad_output: Any, self: Any) -> Tensor:
    def fn(c: Any, g: Any, x: Any) -> Any:
        t = np.tanh(np.log1p(np.exp(x)))
        return g * (t + x * _sigmoid(x) * (1 - t * t))

    return _run("mish_backward.default", fn, (grad_output, self), (grad_output, self))


@impl(aten.softshrink_backward.default, CPU)
def softshrink_backward(grad_output: Any, self: Any, lambd: Any) -> Tensor:
    return _run(
        "softshrink_backward.default",
        lambda c, g, x: np.where(_inside(x, lambd), 0, g),
        (grad_output, self),
        (grad_output, self, lambd),
    )


@impl(aten.hardshrink_backward.default, CPU)
def hardshrink_backward(grad_out: Any, self: Any, lambd: Any) -> Tensor:
    return _run(
        "hardshrink_backward.default",
        lambda c, g, x: np.where(_inside(x, lambd), 0, g),
        (grad_out, self),
        (grad_out, self, lambd),
    )


@impl(aten.log_sigmoid_backward.default, CPU)
def log_sigmoid_backward(grad_output: Any, self: Any, buffer: Any) -> Tensor:
    def fn(c: Any, g: Any, x: Any) -> Any:
        z = arg(buffer, c)  # exp(-|x|)
        neg = x < 0
        return g * (np.where(neg, 1, 0) - np.where(neg, 1, -1) * (z / (1 + z)))

    return _run("log_sigmoid_backward.default", fn, (grad_output, self), (grad_output, self))


@impl(aten._prelu_kernel_backward.default, CPU)
def _prelu_kernel_backward(grad_output: Tensor, self: Tensor, weight: Tensor) -> tuple[Any, Any]:
    xs, c, r = _inputs("_prelu_kernel.default", (self, weight), (self, weight))
    x, w = xs
    g = arg(grad_output, c)
    with quiet_block():
        pos = x > 0
        gi = np.where(pos, g, w * g)
        gw = np.where(pos, 0, x * g)
    return result(gi, r), result(gw, r)


@impl(aten.glu_backward.default, CPU)
def glu_backward(grad_output: Tensor, self: Tensor, dim: int) -> Tensor:
    d = glu_dim(tuple(self.shape), dim)
    x, r = _floats("glu_backward", self)
    a, b = _glu_halves(x, d)
    g = arg(grad_output, x.dtype)
    with quiet_block():
        s = _sigmoid(b)
        out = np.concatenate([g * s, g * a * s * (1 - s)], axis=d)
    return wrap(out.astype(r, copy=False))


_SQRT_HALF, _INV_SQRT_2PI = math.sqrt(0.5), 1 / math.sqrt(2 * math.pi)
_K_TANH, _C_TANH = math.sqrt(2 / math.pi), 0.044715


@impl(aten.gelu_backward.default, CPU)
def gelu_backward(grad_output: Any, self: Any, *, approximate: str = "none") -> Tensor:
    """gelu's derivative times the gradient, in one pass (erf's or tanh's form)."""
    check_gelu("gelu_backward.default", approximate)

    def fn(c: Any, g: Any, x: Any) -> Any:
        if approximate == "tanh":
            t = np.tanh(_K_TANH * (x + _C_TANH * x * x * x))
            d_inner = _K_TANH * (1 + 3 * _C_TANH * x * x)
            return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d_inner)
        cdf = 0.5 * (1 + _erf(x * _SQRT_HALF))
        return g * (cdf + x * (np.exp(-0.5 * x * x) * _INV_SQRT_2PI))

    return _run("gelu_backward.default", fn, (grad_output, self), (grad_output, self))


@impl(aten.silu_backward.default, CPU)
def silu_backward(grad_output: Any, self: Any) -> Tensor:
    """silu's derivative ``s (1 + x (1 - s))`` times the gradient (not conjugated for complex
    inputs, as PyTorch's kernel: silu's formula passes ``conj(self)`` for that)."""

    def fn(c: Any, g: Any, x: Any) -> Any:
        s = _sigmoid(x)
        return g * (s * (1 + x * (1 - s)))

    return _run("silu_backward.default", fn, (grad_output, self), (grad_output, self))


@impl(aten.tanh_backward.default, CPU)
def tanh_backward(grad_output: Any, output: Any) -> Tensor:
    """``grad_output * conj(1 - output²)``: tanh's derivative from its result."""
    return _run(
        "tanh_backward.default",
        lambda c, g, y: g * np.conjugate(1 - y * y),
        (grad_output, output),
        (grad_output, output),
    )


@impl(aten.sigmoid_backward.default, CPU)
def sigmoid_backward(grad_output: Any, output: Any) -> Tensor:
    """``grad_output * conj((1 - output) output)``: sigmoid's derivative from its result."""
    return _run(
        "sigmoid_backward.default",
        lambda c, g, y: g * np.conjugate((1 - y) * y),
        (grad_output, output),
        (grad_output, output),
    )
