"""The activation ops: schemas (catalogue) of PyTorch's activation functions and their
backward ops, and the decompositions of those PyTorch defines as compositions (``selu``,
``relu6``, ``prelu``, ``log_sigmoid``).

# NOTE [activation ops]
Each activation with a kernel in PyTorch (``leaky_relu``, ``elu``, ``softplus``, ``hardtanh``,
...) is a pointwise op here too, with its in-place and ``out=`` variants, and differentiates
through PyTorch's own backward op (``leaky_relu_backward``, ``elu_backward``, ...), declared
beside it as a pointwise op without variants, so ``__torch_dispatch__`` code and tracers see
what they see on PyTorch. Scalar parameters (``negative_slope``, ``alpha``, ``beta``, ...)
never take part in type promotion: the result has the input's dtype.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ember.dispatch.keys import DispatchKey
from ember.dtypes import bool_, dtype, uint8
from ember.ops.native._define import define
from ember.ops.native.pointwise import COMPLEX, NO_BOOL_COMPLEX, ONLY_FLOAT, pointwise
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_FN = ("function",)
_FM = ("function", "method")
_SELF = ("self",)
_GRAD = ("grad_output", "self")

# --------------------------------------------------------------------------- shared checks

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def glu_dim(shape: tuple[int, ...], dim: int) -> int:
    """``glu``'s halved dim, wrapped; raises PyTorch's errors for 0-dim and odd sizes."""
    if len(shape) == 0:
        raise RuntimeError("glu: glu does not support 0-dimensional tensors")
    n = len(shape)
    if not -n <= dim < n:
        raise IndexError(
            f"glu: Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {dim})"
        )
    d = dim % n
    if shape[d] % 2:
        raise RuntimeError(
            f"glu: Halving dimension must be even, but dimension {d} is size {shape[d]}"
        )
    return d


def check_floating(name: str, d: dtype) -> None:
    """Ops with floating kernels only (``glu``, ``log_sigmoid_forward``) refuse other dtypes."""
    if not d.is_floating_point:
        raise NotImplementedError(
            f"{name}: \"{name}_cpu\" not implemented for '{d._short}'; pass a floating tensor"
        )


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], i: int, name: str, default: Any) -> Any:
    return args[i] if len(args) > i else kwargs.get(name, default)


def hardtanh_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Bool inputs refuse hardtanh; unsigned ones a negative lower bound (a RuntimeError in
    PyTorch, not a missing kernel)."""
    if cdt is bool_:
        raise RuntimeError(f"{name}: Bool inputs not supported for hardtanh")
    if cdt is uint8 and _arg(args, kwargs, 1, "min_val", -1) < 0:
        raise RuntimeError(f"{name}: cannot do hardtanh on an unsigned type with negative limits")


def softshrink_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """softshrink's ``lambd`` must be non-negative."""
    lambd = _arg(args, kwargs, 1, "lambd", 0.5)
    if cdt.is_floating_point and lambd < 0:
        raise RuntimeError(
            f"{name}: lambda must be in range [0, 3.40282e+38] for input dtype "
            f"{cdt._short}, but found {lambd}"
        )


def celu_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """celu divides by ``alpha``."""
    if cdt.is_floating_point and _arg(args, kwargs, 1, "alpha", 1.0) == 0:
        raise RuntimeError(f"{name}: ZeroDivisionError: alpha cannot be 0 for CELU")


def leaky_relu_backward_check(
    name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """The in-place forward's backward (from the result) cannot invert a negative slope."""
    if (
        _arg(args, kwargs, 3, "self_is_result", False)
        and _arg(args, kwargs, 2, "negative_slope", 0) < 0
    ):
        raise RuntimeError(
            f"{name}: In-place leakyReLu backward calculation is triggered with a negative slope "
            "which is not supported. This is caused by calling in-place forward function with "
            "a negative slope, please call out-of-place version instead."
        )


def elu_backward_check(
    name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """As ``leaky_relu_backward_check``, for a negative ``alpha``."""
    if _arg(args, kwargs, 4, "is_result", False) and _arg(args, kwargs, 1, "alpha", 1) < 0:
        raise RuntimeError(
            f"{name}: In-place elu backward calculation is triggered with a negative slope "
            "which is not supported. This is caused by calling in-place forward function with "
            "a negative slope, please call out-of-place version instead."
        )


def threshold_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The replacement ``value`` must fit a floating input's dtype."""
    value = _arg(args, kwargs, 2, "value", 0)
    if cdt.is_floating_point and cdt.np.itemsize < 8 and isinstance(value, (int, float)):
        big = float(np.finfo(cdt.np).max)
        if math.isfinite(value) and abs(value) > big:
            raise RuntimeError(
                f"{name}: value cannot be converted to type {cdt.name} without overflow"
            )


def prelu_weight_shape(self: Tensor, weight: Tensor) -> list[int] | None:
    """The shape ``prelu`` reshapes ``weight`` to (None: as it is); raises PyTorch's errors."""
    if self.dtype is not weight.dtype:
        raise RuntimeError(
            f"prelu: Type promoting not supported. Got {self.dtype._short} and "
            f"{weight.dtype._short}; cast the weight with .to(input.dtype)"
        )
    n = weight.numel()
    if n != 1:
        if self.ndim == 0:
            raise RuntimeError("prelu: Not allow zero-dim input tensor.")
        channels = self.shape[1] if self.ndim > 1 else 1
        if channels != n:
            raise RuntimeError(
                f"prelu: Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {n} and channel size = {channels}."
            )
    if weight.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}"
        )
    if self.ndim == weight.ndim:
        return None
    shape = [1] * self.ndim
    if self.ndim > 1:
        shape[1] = n
    return shape


# --------------------------------------------------------------------------- forward ops

pointwise("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
          unsupported=ONLY_FLOAT, operands=_SELF, variants=_FN)  # fmt: skip
pointwise("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
          unsupported=ONLY_FLOAT, operands=_SELF, variants=_FN)  # fmt: skip
pointwise("celu(Tensor self, Scalar alpha=1.) -> Tensor",
          unsupported=ONLY_FLOAT, operands=_SELF, variants=_FN, out=False,
          check=celu_check)  # fmt: skip
pointwise("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
          unsupported=ONLY_FLOAT, operands=_SELF, variants=_FN, inplace=False)  # fmt: skip
pointwise("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
          unsupported=COMPLEX, operands=_SELF, variants=_FN, check=hardtanh_check)  # fmt: skip
for _name in ("hardswish", "hardsigmoid", "mish"):
    pointwise(f"{_name}(Tensor self) -> Tensor", unsupported=ONLY_FLOAT, variants=_FN)
pointwise("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
          unsupported=ONLY_FLOAT, operands=_SELF, variants=_FN, inplace=False,
          check=softshrink_check)  # fmt: skip
pointwise("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
          unsupported=ONLY_FLOAT, operands=_SELF, variants=_FM, inplace=False)  # fmt: skip
pointwise("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
          unsupported=NO_BOOL_COMPLEX, operands=_SELF, variants=_FN,
          check=threshold_check)  # fmt: skip
pointwise("_prelu_kernel(Tensor self, Tensor weight) -> Tensor",
          unsupported=ONLY_FLOAT, operands=("self", "weight"), variants=_FN,
          inplace=False, out=False)  # fmt: skip
define("log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)", variants=_FN)
define("glu(Tensor self, int dim=-1) -> Tensor", variants=_FN)

# the compositions (CompositeImplicitAutograd in PyTorch too)
define("selu(Tensor self) -> Tensor", variants=_FN, inplace=True)
define("relu6(Tensor self) -> Tensor", variants=_FN, inplace=True)
define("prelu(Tensor self, Tensor weight) -> Tensor", variants=_FM)
define("log_sigmoid(Tensor self) -> Tensor", variants=_FN)

# --------------------------------------------------------------------------- backward ops

_NONE = ()
pointwise("leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, "
          "bool self_is_result) -> Tensor", unsupported=ONLY_FLOAT, operands=_GRAD,
          variants=_NONE, inplace=False, out=False, check=leaky_relu_backward_check)  # fmt: skip
for _schema in (
    "softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
    "hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor",
    "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor",
    "hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor",
    "mish_backward(Tensor grad_output, Tensor self) -> Tensor",
    "softshrink_backward(Tensor grad_output, Tensor self, Scalar lambd) -> Tensor",
    "log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor",
):
    pointwise(_schema, unsupported=ONLY_FLOAT, operands=_GRAD, variants=_NONE,
              inplace=False, out=False)  # fmt: skip
pointwise("hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor",
          unsupported=ONLY_FLOAT, operands=("grad_out", "self"), variants=_NONE,
          inplace=False, out=False)  # fmt: skip
pointwise("elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, "
          "bool is_result, Tensor self_or_result) -> Tensor",
          unsupported=ONLY_FLOAT, operands=("grad_output", "self_or_result"), variants=_NONE,
          inplace=False, out=False, check=elu_backward_check)  # fmt: skip
define("_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> "
       "(Tensor, Tensor)", variants=_NONE)  # fmt: skip
define("glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor", variants=_NONE)

# --------------------------------------------------------------------------- decompositions

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


@impl(aten.selu.default, _CIA)
def selu(self: Tensor) -> Tensor:
    return aten.elu.default(self, _SELU_ALPHA, _SELU_SCALE)


@impl(aten.selu_.default, _CIA)
def selu_(self: Tensor) -> Tensor:
    return aten.elu_.default(self, _SELU_ALPHA, _SELU_SCALE)


@impl(aten.relu6.default, _CIA)
def relu6(self: Tensor) -> Tensor:
    return aten.hardtanh.default(self, 0, 6)


@impl(aten.relu6_.default, _CIA)
def relu6_(self: Tensor) -> Tensor:
    return aten.hardtanh_.default(self, 0, 6)


@impl(aten.prelu.default, _CIA)
def prelu(self: Tensor, weight: Tensor) -> Tensor:
    shape = prelu_weight_shape(self, weight)
    return aten._prelu_kernel.default(self, weight if shape is None else weight.reshape(shape))


@impl(aten.mish_backward.default, _CIA)
def mish_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    # as in PyTorch, a composition for autograd (differentiable again) beside the CPU kernel
    t = aten.softplus.default(self).tanh()
    return grad_output * (t + self * self.sigmoid() * (1 - t * t))


@impl(aten.log_sigmoid.default, _CIA)
def log_sigmoid(self: Tensor) -> Tensor:
    return aten.log_sigmoid_forward.default(self)[0]
