"""The activation functions of ``ember.nn.functional`` (re-exported there): fronts over the
activation ops (``ember/ops/native/activation.py``) and the few PyTorch writes in Python
(``softsign``, ``tanhshrink``, ``softmin``).

Each takes PyTorch's ``__torch_function__`` route: ``@python_route()`` where PyTorch's is a
Python function, ``@guard_function`` where it is bound in C++ (``softplus``, ``logsigmoid``,
``softshrink``, ``prelu`` and the in-place ``elu_``-style names).
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.overrides import guard_function, python_route

aten = ops.aten

__all__ = [
    "celu",
    "celu_",
    "elu",
    "elu_",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "logsigmoid",
    "mish",
    "prelu",
    "relu6",
    "selu",
    "selu_",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanhshrink",
    "threshold",
    "threshold_",
]


@python_route()
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x``.

    >>> import ember.nn.functional as F
    >>> F.leaky_relu(ember.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2000,  3.0000])
    """
    if inplace:
        return aten.leaky_relu_.default(input, negative_slope)  # type: ignore[no-any-return]
    return aten.leaky_relu.default(input, negative_slope)  # type: ignore[no-any-return]


@guard_function
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``.

    >>> import ember.nn.functional as F
    >>> F.leaky_relu_(ember.tensor([-2.0, 3.0]))
    tensor([-0.0200,  3.0000])
    """
    return aten.leaky_relu_.default(input, negative_slope)  # type: ignore[no-any-return]


@python_route()
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    >>> import ember.nn.functional as F
    >>> F.elu(ember.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    if inplace:
        return aten.elu_.default(input, alpha)  # type: ignore[no-any-return]
    return aten.elu.default(input, alpha)  # type: ignore[no-any-return]


@guard_function
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``.

    >>> import ember.nn.functional as F
    >>> F.elu_(ember.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return aten.elu_.default(input, alpha)  # type: ignore[no-any-return]


@python_route()
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants.

    >>> import ember.nn.functional as F
    >>> F.selu(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """
    if inplace:
        return aten.selu_.default(input)  # type: ignore[no-any-return]
    return aten.selu.default(input)  # type: ignore[no-any-return]


@guard_function
def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``.

    >>> import ember.nn.functional as F
    >>> F.selu_(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """
    return aten.selu_.default(input)  # type: ignore[no-any-return]


@python_route()
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import ember.nn.functional as F
    >>> F.celu(ember.tensor([0.0, 2.0]), alpha=2.0)
    tensor([0., 2.])
    """
    if inplace:
        return aten.celu_.default(input, alpha)  # type: ignore[no-any-return]
    return aten.celu.default(input, alpha)  # type: ignore[no-any-return]


@guard_function
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``.

    >>> import ember.nn.functional as F
    >>> F.celu_(ember.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return aten.celu_.default(input, alpha)  # type: ignore[no-any-return]


@guard_function
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    >>> import ember.nn.functional as F
    >>> F.softplus(ember.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    return aten.softplus.default(input, beta, threshold)  # type: ignore[no-any-return]


@python_route()
def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """``x`` clamped to ``[min_val, max_val]``.

    >>> import ember.nn.functional as F
    >>> F.hardtanh(ember.tensor([-3.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("hardtanh: min_val cannot be greater than max_val")
    if inplace:
        return aten.hardtanh_.default(input, min_val, max_val)  # type: ignore[no-any-return]
    return aten.hardtanh.default(input, min_val, max_val)  # type: ignore[no-any-return]


@guard_function
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``.

    >>> import ember.nn.functional as F
    >>> F.hardtanh_(ember.tensor([-3.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """
    return aten.hardtanh_.default(input, min_val, max_val)  # type: ignore[no-any-return]


@python_route()
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``.

    >>> import ember.nn.functional as F
    >>> F.relu6(ember.tensor([-1.0, 3.0, 9.0]))
    tensor([0., 3., 6.])
    """
    if inplace:
        return aten.relu6_.default(input)  # type: ignore[no-any-return]
    return aten.relu6.default(input)  # type: ignore[no-any-return]


@python_route()
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``.

    >>> import ember.nn.functional as F
    >>> F.hardswish(ember.tensor([-4.0, 0.0, 4.0]))
    tensor([-0., 0., 4.])
    """
    if inplace:
        return aten.hardswish_.default(input)  # type: ignore[no-any-return]
    return aten.hardswish.default(input)  # type: ignore[no-any-return]


@python_route()
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``.

    >>> import ember.nn.functional as F
    >>> F.hardsigmoid(ember.tensor([-4.0, 0.0, 4.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    if inplace:
        return aten.hardsigmoid_.default(input)  # type: ignore[no-any-return]
    return aten.hardsigmoid.default(input)  # type: ignore[no-any-return]


@python_route()
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``.

    >>> import ember.nn.functional as F
    >>> F.mish(ember.tensor([0.0]))
    tensor([0.])
    """
    if inplace:
        return aten.mish_.default(input)  # type: ignore[no-any-return]
    return aten.mish.default(input)  # type: ignore[no-any-return]


@guard_function
def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably.

    >>> import ember.nn.functional as F
    >>> F.logsigmoid(ember.tensor([0.0]))
    tensor([-0.6931])
    """
    return aten.log_sigmoid.default(input)  # type: ignore[no-any-return]


@guard_function
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    >>> import ember.nn.functional as F
    >>> F.softshrink(ember.tensor([-1.0, 0.2, 1.0]))
    tensor([-0.5000,  0.0000,  0.5000])
    """
    return aten.softshrink.default(input, lambd)  # type: ignore[no-any-return]


@python_route()
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0.

    >>> import ember.nn.functional as F
    >>> F.hardshrink(ember.tensor([-1.0, 0.2, 1.0]))
    tensor([-1.,  0.,  1.])
    """
    return aten.hardshrink.default(input, lambd)  # type: ignore[no-any-return]


@python_route()
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``.

    >>> import ember.nn.functional as F
    >>> F.threshold(ember.tensor([1.0, 3.0]), 2.0, -1.0)
    tensor([-1.,  3.])
    """
    if inplace:
        return aten.threshold_.default(input, threshold, value)  # type: ignore[no-any-return]
    return aten.threshold.default(input, threshold, value)  # type: ignore[no-any-return]


@guard_function
def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``.

    >>> import ember.nn.functional as F
    >>> F.threshold_(ember.tensor([1.0, 3.0]), 2.0, -1.0)
    tensor([-1.,  3.])
    """
    return aten.threshold_.default(input, threshold, value)  # type: ignore[no-any-return]


@python_route()
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)`` of the two halves of ``dim``.

    >>> import ember.nn.functional as F
    >>> F.glu(ember.tensor([1.0, 0.0]))
    tensor([0.5000])
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return aten.glu.default(input, dim)  # type: ignore[no-any-return]


@guard_function
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where ``x > 0``, else ``weight * x`` (one weight, or one per channel, dim 1).

    >>> import ember.nn.functional as F
    >>> F.prelu(ember.tensor([-2.0, 3.0]), ember.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    return aten.prelu.default(input, weight)  # type: ignore[no-any-return]


@python_route()
def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``.

    >>> import ember.nn.functional as F
    >>> F.softsign(ember.tensor([1.0, -3.0]))
    tensor([ 0.5000, -0.7500])
    """
    return input / (input.abs() + 1)


@python_route()
def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``.

    >>> import ember.nn.functional as F
    >>> F.tanhshrink(ember.tensor([0.0]))
    tensor([0.])
    """
    return input - input.tanh()


@python_route()
def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``softmax(-x, dim)``.

    >>> import ember.nn.functional as F
    >>> F.softmin(ember.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return aten.softmax.int(-input, dim, dtype)  # type: ignore[no-any-return]
