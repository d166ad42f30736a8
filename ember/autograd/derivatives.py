"""The derivative table: one line per differentiable op (format: ``function_table.py``).

Formulas are written in ember ops, so they dispatch like any op, run on any backend, and
record a graph of their own under ``create_graph=True`` (higher-order gradients). Inputs'
broadcasting and dtype are undone by the engine, so formulas return the natural gradient.
Ops with a CompositeImplicitAutograd kernel need no line: their parts are differentiated.

# NOTE [formulas on the public functions]
Some formulas read best with the public functions (``E.where(mask, g, 0.0)`` picks the
overload from its arguments, where ``aten.where.ScalarOther`` would have to be named). They
come from ``ember.functional``, the module that generates them, never from the top-level
``ember`` package, which imports this file: the autograd formulas are core, and the core
does not import the package it is part of (``tests/test_architecture.py``).
"""

from __future__ import annotations

import cmath
import math
import sys
from typing import Any

import numpy as np

from ember import functional as E  # NOTE [formulas on the public functions]
from ember._tensor import Tensor
from ember.autograd.function_table import defvjp, nondifferentiable
from ember.autograd.grad_mode import is_grad_enabled
from ember.dtypes import COMPLEX, bool_
from ember.ops.registry import ops
from ember.ops.shapes import wrap_dim

aten = ops.aten


def _dims(dim: Any, ndim: int) -> list[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(d % max(ndim, 1) for d in dims)


def unreduce(g: Any, shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    """Broadcast a reduction's gradient back over the reduced dims."""
    if not keepdim and len(shape):
        for d in _dims(dim, len(shape)):
            g = g.unsqueeze(d)
    return g.expand(shape)


def _count(shape: tuple[int, ...], dim: Any) -> int:
    return math.prod(shape[d] for d in _dims(dim, len(shape))) if shape else 1


def _nz(g: Any) -> Any:
    return E.zeros_like(g)


# ----------------------------------------------------------------------- complex numbers
# NOTE [complex gradients]
# ember follows PyTorch's convention: for ``s = f(z)`` and the incoming gradient ``g``, the
# gradient of a complex input is the conjugate Wirtinger derivative
#     g * conj(∂s/∂z) + conj(g) * ∂s/∂z*
# that is ``g * conj(f'(z))`` for a holomorphic op (``mul``: ``g * conj(other)``, ``exp``:
# ``g * conj(result)``, ``mm``: ``g @ mat2.mH``), and, for ops with a real output (``abs``,
# ``var``, ``linalg_vector_norm``), the formulas of PyTorch's derivatives.yaml (``abs``:
# ``g * sgn(z)``). Ops linear over the complex numbers (``add``, ``sum``, views, indexing)
# need nothing. A real input of a complex-valued op takes the real part of its gradient
# (the engine's ``_sum_to`` does it, as PyTorch's does).
# ``conj`` and ``real`` below return a real tensor or scalar itself, so real training pays one
# dtype check per conjugated factor; for complex tensors they are the ops ``_conj_physical``
# (what ``conj_physical`` runs for complex inputs) and ``real`` (a view, NOTE [complex views]
# in ``ember/ops/native/views.py``), which have derivatives of their own, so formulas using
# them differentiate to any order.

_CONJ = aten._conj_physical.default
_T = aten.t.default._dispatch  # the ops' dispatch, called directly (formulas run hot)
_MM = aten.mm.default._dispatch
_REAL = aten.real.default


def conj(t: Any) -> Any:
    """The complex conjugate of a tensor or Python scalar; real ones are returned themselves.

    >>> from ember.autograd.derivatives import conj
    >>> conj(ember.tensor([1 + 2j])), conj(2 - 1j)
    (tensor([1.-2.j]), (2+1j))
    """
    if isinstance(t, Tensor):
        return _CONJ(t) if t._edata.dtype.kind == "c" else t  # the array's: no dtype lookup
    return t.conjugate() if type(t) is complex else t


def real(t: Any) -> Any:
    """The real part of ``t`` (a real view, of the matching precision, of a complex tensor); a
    real tensor is returned itself. Unlike ``t.to(float64)`` it does not warn.

    >>> from ember.autograd.derivatives import real
    >>> real(ember.tensor([1 + 2j]))
    tensor([1.])
    """
    return _REAL(t) if t._edata.dtype.kind == "c" else t


def _sgn(x: Any) -> Any:
    """``sign`` of a real tensor, ``z / |z|`` (0 at 0) of a complex one: d|z| (PyTorch's sgn)."""
    if x.dtype.category != COMPLEX:
        return x.sign()
    a = x.abs()
    return x / a.masked_fill(a == 0, 1)


def _scalar_log(x: Any, complex_result: bool) -> Any:
    """The log of ``pow``'s scalar base, as computed in the result's dtype: -inf at 0, and
    below 0 complex for a complex result, nan (a real log) otherwise."""
    if x == 0:
        return -math.inf
    if type(x) is complex or complex_result:
        return cmath.log(x)
    return math.log(x) if x > 0 else math.nan


# ----------------------------------------------------------------------- pointwise
defvjp(aten.add.Tensor, lambda g, self, other, alpha=1: (g, g if alpha == 1 else g * conj(alpha)))
defvjp(aten.add.Scalar, lambda g, self, other, alpha=1: (g,))
defvjp(aten.sub.Tensor, lambda g, self, other, alpha=1: (g, -g if alpha == 1 else g * -conj(alpha)))
defvjp(aten.sub.Scalar, lambda g, self, other, alpha=1: (g,))
defvjp(aten.rsub.Tensor, lambda g, self, other, alpha=1: (
    -g if alpha == 1 else g * -conj(alpha), g))  # fmt: skip
defvjp(aten.rsub.Scalar, lambda g, self, other, alpha=1: (-g if alpha == 1 else g * -conj(alpha),))
defvjp(aten.mul.Tensor, lambda g, self, other: (g * conj(other), g * conj(self)))
defvjp(aten.mul.Scalar, lambda g, self, other: (aten.mul.Scalar(g, conj(other)),))  # as PyTorch
defvjp(aten.div.Tensor, lambda g, self, other: (
    g / conj(other), -g * conj(self / (other * other))))  # fmt: skip
defvjp(aten.div.Tensor_mode, lambda g, self, other, *, rounding_mode: (
    g / conj(other) if rounding_mode is None else _nz(g),
    -g * conj(self / (other * other)) if rounding_mode is None else _nz(g)))  # fmt: skip
defvjp(aten.div.Scalar, lambda g, self, other: (g / conj(other),))
defvjp(aten.neg.default, lambda g, self: (-g,))
defvjp(aten.positive.default, lambda g, self: (g,))
defvjp(aten.exp.default, lambda g, self, *, result: (g * conj(result),))
defvjp(aten.expm1.default, lambda g, self, *, result: (g * conj(result + 1),))
defvjp(aten.log.default, lambda g, self: (g / conj(self),))
defvjp(aten.log2.default, lambda g, self: (g / (conj(self) * math.log(2.0)),))
defvjp(aten.log1p.default, lambda g, self: (g / conj(self + 1),))
defvjp(aten.sqrt.default, lambda g, self, *, result: (g / (2 * conj(result)),))
defvjp(aten.rsqrt.default, lambda g, self, *, result: (g * -0.5 * conj(result * result * result),))
defvjp(aten.sin.default, lambda g, self: (g * conj(self.cos()),))
defvjp(aten.cos.default, lambda g, self: (-g * conj(self.sin()),))
defvjp(aten.tan.default, lambda g, self, *, result: (g * conj(1 + result * result),))
defvjp(aten.tanh.default, lambda g, self, *, result: (aten.tanh_backward.default(g, result),))
defvjp(aten.sigmoid.default, lambda g, self, *, result: (aten.sigmoid_backward.default(g, result),))
defvjp(
    aten.relu.default, lambda g, self, *, result: (aten.threshold_backward.default(g, result, 0),)
)
defvjp(aten.threshold_backward.default, lambda g, grad_output, self, threshold: (
    aten.threshold_backward.default(g, self, threshold), _nz(g)))  # fmt: skip
defvjp(aten.erf.default, lambda g, self: (g * (2 / math.sqrt(math.pi)) * (-self * self).exp(),))
defvjp(aten.reciprocal.default, lambda g, self, *, result: (-g * conj(result * result),))
defvjp(aten.square.default, lambda g, self: (2 * g * conj(self),), name="PowBackward0")
defvjp(aten.abs.default, lambda g, self: (g * _sgn(self),))
for _op in (aten.floor.default, aten.ceil.default, aten.round.default, aten.trunc.default,
            aten.sign.default, aten.round.decimals):  # fmt: skip
    defvjp(_op, lambda g, self, *a, **k: (_nz(g),))
defvjp(aten.pow.Tensor_Scalar, lambda g, self, exponent: (_pow_self_grad(g, self, exponent),),
       name="PowBackward0")  # fmt: skip


def _nonnegative(exponent: Any) -> Any:
    """Where a real or complex exponent (a tensor or a number) is a real number >= 0
    (``z == |z|``; NaN is not)."""
    return exponent == abs(exponent)


_POW_SCALAR = aten.pow.Tensor_Scalar


def _pow_self_grad(g: Any, self: Any, exponent: Any) -> Any:
    """``pow(self, exponent)``'s gradient for ``self``: ``g * conj(exponent * self **
    (exponent - 1))``, and 0 where the exponent is 0 (``0 ** -1`` would make it NaN), as in
    PyTorch (NOTE [derivatives at zeros]). A number exponent takes ``pow.Tensor_Scalar``,
    as PyTorch's does (``(-0.0) ** -0.5`` is ``-inf`` there)."""
    if not isinstance(exponent, Tensor):
        if exponent == 0:
            return _nz(g)
        return g * conj(exponent * _POW_SCALAR(self, exponent - 1))
    return E.where(exponent == 0, 0.0, g * conj(exponent * self.pow(exponent - 1)))


def _pow_exponent_grad(g: Any, self: Any, exponent: Any, result: Any) -> Any:
    """``pow(self, exponent)``'s gradient for a tensor exponent: ``g * conj(result *
    log(self))``, 0 where ``self`` is 0 and the exponent a real number >= 0 (a negative one
    keeps ``inf * -inf``, as in PyTorch); the log in the result's dtype (complex for a real
    base and a complex exponent)."""
    base = self if self.dtype is result.dtype else self.to(result.dtype)
    zero = (self == 0) & _nonnegative(exponent)
    return g * E.where(zero, 0.0, conj(result * E.where(zero, 1.0, base).log()))


def _pow_scalar(g: Any, self: Any, exponent: Any, result: Any) -> tuple[Any]:
    """``pow(scalar, exponent)``'s gradient: ``g * conj(result * log(self))``; for a 0 base,
    0 where the exponent is real and non-negative (``z == |z|``), as in PyTorch."""
    grad = g * conj(result * _scalar_log(self, result.dtype.is_complex))
    if self == 0:
        grad = E.where(_nonnegative(exponent), 0.0, grad)
    return (grad,)


defvjp(aten.pow.Tensor_Tensor, lambda g, self, exponent, *, result: (
    _pow_self_grad(g, self, exponent), _pow_exponent_grad(g, self, exponent, result)),
    name="PowBackward1")  # fmt: skip
defvjp(aten.pow.Scalar, _pow_scalar)
defvjp(aten.maximum.default, lambda g, self, other: (
    E.where(self == other, g / 2, g).masked_fill(self < other, 0),
    E.where(self == other, g / 2, g).masked_fill(self > other, 0)))  # fmt: skip
defvjp(aten.minimum.default, lambda g, self, other: (
    E.where(self == other, g / 2, g).masked_fill(self > other, 0),
    E.where(self == other, g / 2, g).masked_fill(self < other, 0)))  # fmt: skip


def _atan2(g: Any, self: Any, other: Any) -> tuple[Any, Any]:
    """``d atan2(y, x) = (x dy - y dx) / (x² + y²)``, 0 where ``1 / (x² + y²)`` is inf (at
    the origin, or where the squares underflow), as in PyTorch."""
    recip = (self * self + other * other).reciprocal()
    recip = recip.masked_fill(recip.isinf(), 0)
    return g * other * recip, -g * self * recip


defvjp(aten.atan2.default, _atan2)
defvjp(aten.where.self, lambda g, condition, self, other: (
    None, E.where(condition, g, 0.0), E.where(condition, 0.0, g)))  # fmt: skip
defvjp(aten.clamp.default, lambda g, self, min=None, max=None: (E.where(
    ((self >= min) if min is not None else E.ones_like(self, dtype=bool_))
    & ((self <= max) if max is not None else E.ones_like(self, dtype=bool_)), g, 0.0),),
    name="ClampBackward1")  # fmt: skip
defvjp(aten.lerp.Scalar, lambda g, self, end, weight: (g * conj(1 - weight), g * conj(weight)))
defvjp(aten.lerp.Tensor, lambda g, self, end, weight: (
    g * conj(1 - weight), g * conj(weight), g * conj(end - self)))  # fmt: skip
defvjp(aten.addcmul.default, lambda g, self, tensor1, tensor2, *, value=1: (
    g, g * conj(value * tensor2), g * conj(value * tensor1)))  # fmt: skip
defvjp(aten.addcdiv.default, lambda g, self, tensor1, tensor2, *, value=1: (
    g, g * conj(value / tensor2), -g * conj(value * tensor1 / (tensor2 * tensor2))))  # fmt: skip
defvjp(
    aten.remainder.Tensor,
    lambda g, self, other: (g, -g * self.div(other, rounding_mode="floor")),
    name="RemainderBackward1",
)
defvjp(
    aten.fmod.Tensor,
    lambda g, self, other: (g, -g * self.div(other, rounding_mode="trunc")),
    name="FmodBackward1",
)
defvjp(aten.remainder.Scalar, lambda g, self, other: (g,), name="RemainderBackward0")
defvjp(aten.remainder.Scalar_Tensor, lambda g, self, other: (
    -g * E.full_like(other, self).div(other, rounding_mode="floor"),))  # fmt: skip
defvjp(aten.fmod.Scalar, lambda g, self, other: (g,), name="FmodBackward0")
defvjp(aten.div.Scalar_mode, lambda g, self, other, *, rounding_mode: (
    g / conj(other) if rounding_mode is None else _nz(g),))  # fmt: skip
defvjp(aten.floor_divide.default, lambda g, self, other: (_nz(g), _nz(g)))
defvjp(aten.floor_divide.Scalar, lambda g, self, other: (_nz(g),))
defvjp(aten.where.ScalarOther, lambda g, condition, self, other: (
    None, E.where(condition, g, 0.0)), name="WhereBackward0")  # fmt: skip
defvjp(aten.where.ScalarSelf, lambda g, condition, self, other: (
    None, E.where(condition, 0.0, g)), name="WhereBackward0")  # fmt: skip
defvjp(aten.clamp_min.default, lambda g, self, min: (E.where(self >= min, g, 0.0),))
defvjp(aten.clamp_max.default, lambda g, self, max: (E.where(self <= max, g, 0.0),))
defvjp(aten.clamp_min.Tensor, lambda g, self, min: (
    E.where(self >= min, g, 0.0), E.where(self < min, g, 0.0)))  # fmt: skip
defvjp(aten.clamp_max.Tensor, lambda g, self, max: (
    E.where(self <= max, g, 0.0), E.where(self > max, g, 0.0)))  # fmt: skip
defvjp(aten.nan_to_num.default, lambda g, self, nan=None, posinf=None, neginf=None: (
    E.where(self.isfinite(), g, 0.0),))  # fmt: skip

# complex numbers: conjugation is its own derivative (conj_physical decomposes into
# _conj_physical; its line serves conj_physical_, which takes its functional op's formula);
# view_as_real's gradient puts the pairs back together, ``g[..., 0] + 1j * g[..., 1]``, so
# ``real``'s (a select of it) is ``g`` and ``imag``'s ``1j * g``
defvjp(aten._conj_physical.default, lambda g, self: (conj(g),))
defvjp(aten.conj_physical.default, lambda g, self: (conj(g),))
defvjp(aten.view_as_real.default, lambda g, self: (g.select(-1, 0) + g.select(-1, 1) * 1j,))
# the inverse view and the two constructors from real parts (derivatives.yaml's lines;
# polar's through ``sgn(result)``, so the gradient of ``abs`` is 0 where ``abs`` is 0)
defvjp(aten.view_as_complex.default, lambda g, self: (aten.view_as_real.default(g.contiguous()),))
defvjp(aten.complex.default, lambda g, real, imag: (g.real, g.imag))
defvjp(aten.polar.default, lambda g, abs, angle, *, result: (
    (conj(g) * _sgn(result)).real, (conj(g) * result * 1j).real))  # fmt: skip


defvjp(aten.gelu.default, lambda g, self, approximate="none": (
    aten.gelu_backward.default(g, self, approximate=approximate),))  # fmt: skip


def _silu(g: Any, self: Any) -> tuple[Any]:
    # as derivatives.yaml: silu_backward's one kernel, or, when the gradient is itself
    # recorded (create_graph), differentiable ops (PyTorch does not differentiate
    # silu_backward). The kernel does not conjugate; sigmoid commutes with conj, so
    # silu_backward(g, conj(z)) is g * conj(silu'(z)), the complex gradient
    if is_grad_enabled():
        s = self.sigmoid()
        return (g * conj(s * (1 + self * (1 - s))),)
    return (aten.silu_backward.default(g, conj(self)),)


defvjp(aten.silu.default, _silu)

# inverse trigonometric and hyperbolic functions, log10, angle conversions (derivatives.yaml)
defvjp(aten.asin.default, lambda g, self: (g * conj((1 - self * self).rsqrt()),))
defvjp(aten.acos.default, lambda g, self: (-g * conj((1 - self * self).rsqrt()),))
defvjp(aten.atan.default, lambda g, self: (g / conj(self * self + 1),))
defvjp(aten.sinh.default, lambda g, self: (g * conj(self.cosh()),))
defvjp(aten.cosh.default, lambda g, self: (g * conj(self.sinh()),))
defvjp(aten.asinh.default, lambda g, self: (g * conj((self * self + 1).rsqrt()),))
# (x² - 1)^-1/2 for a real x; (z + 1)^-1/2 (z - 1)^-1/2 for a complex z, on the principal
# branch (PyTorch's formulas)
defvjp(aten.acosh.default, lambda g, self: (g * (
    conj((self + 1).rsqrt() * (self - 1).rsqrt()) if self.dtype.is_complex
    else (self * self - 1).rsqrt()),))  # fmt: skip
defvjp(aten.atanh.default, lambda g, self: (g / conj(1 - self * self),))
defvjp(aten.log10.default, lambda g, self: (g / (conj(self) * math.log(10.0)),))
defvjp(aten.frac.default, lambda g, self: (g,))
defvjp(aten.deg2rad.default, lambda g, self: (g * (math.pi / 180),))
defvjp(aten.rad2deg.default, lambda g, self: (g * (180 / math.pi),))


def _sgn_grad(g: Any, self: Any, result: Any) -> tuple[Any]:
    """0 for a real input; for a complex one ``(g - Re(conj(g) s) s) / |z|`` (0 at 0)."""
    if not self.dtype.is_complex:
        return (_nz(g),)
    a = self.abs()
    grad = (g - real(conj(g) * result) * result) / a.masked_fill(a == 0, 1)
    return (grad.masked_fill(a == 0, 0),)


def _angle_grad(g: Any, self: Any) -> tuple[Any]:
    """0 for a real input; ``g * i z / |z|²`` (0 at 0) for a complex one."""
    if not self.dtype.is_complex:
        return (_nz(g),)
    sq = self.abs().square()
    grad = g * self * 1j / sq.masked_fill(sq == 0, 1)
    return (grad.masked_fill(sq == 0, 0),)


defvjp(aten.sgn.default, lambda g, self, *, result: _sgn_grad(g, self, result))
defvjp(aten.angle.default, _angle_grad)

# binary
defvjp(aten.hypot.default, lambda g, self, other, *, result: (
    g * self / result, g * other / result))  # fmt: skip


def _logaddexp(g: Any, self: Any, other: Any, two: bool) -> tuple[Any, Any]:
    """``g / (1 + exp(other - self))`` and the same swapped (base 2 for logaddexp2); a bool
    operand is taken as numbers (its gradient is not wanted, but the difference is)."""
    a = self.to(g.dtype) if self.dtype is bool_ else self
    b = other.to(g.dtype) if other.dtype is bool_ else other
    if two:
        return g / (1 + E.pow(2, b - a)), g / (1 + E.pow(2, a - b))
    return g / conj(1 + (b - a).exp()), g / conj(1 + (a - b).exp())


defvjp(aten.logaddexp.default, lambda g, self, other: _logaddexp(g, self, other, False))
defvjp(aten.logaddexp2.default, lambda g, self, other: _logaddexp(g, self, other, True))


def _copysign_self(g: Any, self: Any, result: Any) -> Any:
    """``g * result / self``, 0 where ``self`` is 0, as PyTorch's."""
    zero = self == 0
    return g * (result / self.masked_fill(zero, 1)).masked_fill(zero, 0)


defvjp(aten.copysign.Tensor, lambda g, self, other, *, result: (
    _copysign_self(g, self, result), _nz(other)))  # fmt: skip
defvjp(aten.copysign.Scalar, lambda g, self, other, *, result: (_copysign_self(g, self, result),))
# nextafter: the identity, except where self == other (PyTorch's: the result is other there)
defvjp(aten.nextafter.default, lambda g, self, other: (g.masked_fill(self == other, 0), _nz(other)))
defvjp(aten.fmax.default, lambda g, self, other: (
    g.masked_fill(((self >= other) | other.isnan()).logical_not(), 0),
    g.masked_fill((self >= other) | other.isnan(), 0)))  # fmt: skip
defvjp(aten.fmin.default, lambda g, self, other: (
    g.masked_fill(((self <= other) | other.isnan()).logical_not(), 0),
    g.masked_fill((self <= other) | other.isnan(), 0)))  # fmt: skip

# ----------------------------------------------------------------------- reductions
defvjp(
    aten.sum.default, lambda g, self, *, dtype=None: (g.expand(self.shape),), name="SumBackward0"
)
defvjp(aten.sum.dim_IntList, lambda g, self, dim, keepdim=False, *, dtype=None: (
    unreduce(g, self.shape, dim, keepdim),), name="SumBackward1")  # fmt: skip
defvjp(aten.mean.default, lambda g, self, *, dtype=None: (
    aten.div.Scalar(g.expand(self.shape), max(self.numel(), 1)),))  # fmt: skip
defvjp(aten.mean.dim, lambda g, self, dim, keepdim=False, *, dtype=None: (
    unreduce(g, self.shape, dim, keepdim) / _count(self.shape, dim),))  # fmt: skip


def _like(self: Any, result: Any) -> Any:
    """``self`` in the dtype of ``result`` (a reduction's ``dtype=``), as PyTorch's formulas
    take ``self.to(grad.scalar_type())``: complex to real keeps the real part."""
    if self.dtype is result.dtype:
        return self
    return (real(self) if not result.dtype.is_complex else self).to(result.dtype)


# NOTE [derivatives at zeros]
# A formula that divides by an input or an output (``prod``'s ``result / x``, ``cumprod``'s,
# ``std``'s ``1 / std``, ``atan2``'s ``1 / (x² + y²)``) is NaN or inf exactly where that
# input or output is 0, though the derivative is finite there. Each follows PyTorch's
# FunctionsManual.cpp: ``prod`` takes the product of the other elements (two exclusive
# cumulative products) when its input has a zero, ``cumprod`` splits each slice at its first
# zero, ``std`` and ``vector_norm`` give 0 where the result is 0, ``pow`` gives 0 for an
# exponent of 0, ``atan2`` 0 at the origin. Whether an input has a zero is read from the
# data, as PyTorch does (``_has_zero``); the fast formula runs otherwise. Everything stays in
# ember ops, so double backward works through the zero-safe paths too.


def _has_zero(x: Any) -> bool:
    """Whether ``x`` has an element equal to 0 (True for a tensor without data, such as a
    meta one: the zero-safe path is right for any value)."""
    d = x._edata
    return type(d) is not np.ndarray or bool((d == 0).any())


def _exclusive_prod(x: Any, dim: int) -> Any:
    """Per element of ``x``, the product of the others along ``dim`` (no division)."""
    n = x.shape[dim]
    ones = E.ones_like(x.narrow(dim, 0, 1))
    before = E.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    after = E.cat([ones, x.narrow(dim, 1, n - 1).flip(dim)], dim).cumprod(dim).flip(dim)
    return before * after


def _prod(g: Any, self: Any, *, dtype: Any = None, result: Any) -> tuple[Any]:
    """NOTE [derivatives at zeros]: ``g * result / self`` without zeros; otherwise the
    product of the others, or (two zeros, no double backward) 0, as PyTorch."""
    x = _like(self, result)
    if self.ndim == 0:
        return (g.expand(self.shape),)
    if self.numel() == 0 or not _has_zero(self):
        return (g * conj(result / x),)
    if not is_grad_enabled() and int((self == 0).sum()) > 1:
        return (E.zeros_like(x),)
    return ((g * conj(_exclusive_prod(x.reshape(-1), 0))).reshape(self.shape),)


def _prod_dim(
    g: Any, self: Any, dim: int, keepdim: bool = False, *, dtype: Any = None, result: Any
) -> tuple[Any]:
    """``prod(dim)``'s gradient (NOTE [derivatives at zeros])."""
    x = _like(self, result)
    if self.ndim == 0:
        return (g.expand(self.shape),)
    gu = unreduce(g, self.shape, dim, keepdim)
    if not _has_zero(self) or self.numel() == 0:
        return (gu * conj(unreduce(result, self.shape, dim, keepdim) / x),)
    return (gu * conj(_exclusive_prod(x, dim % self.ndim)),)


def _reverse_cumsum(x: Any, dim: int) -> Any:
    return x.flip(dim).cumsum(dim).flip(dim)


def _cumprod(g: Any, self: Any, dim: int, *, dtype: Any = None, result: Any) -> tuple[Any]:
    """``cumprod``'s gradient, ``grad_k = sum_{j >= k} g_j prod_{i <= j, i != k} x_i``
    (NOTE [derivatives at zeros]). Without zeros, ``reverse_cumsum(g * result) / x``. With
    zeros, per slice: before the first zero that formula still holds (``x_k != 0``); at the
    first zero the products skip it, so they are the cumulative products of ``x`` with that
    zero set to 1 (a later zero makes them 0 by itself); after it every product has the zero."""
    x = _like(self, result)
    if self.ndim == 0:
        return (g,)
    if not _has_zero(self):
        return (_reverse_cumsum(g * conj(result), dim) / conj(x),)
    if is_grad_enabled():  # create_graph: every dependence kept, so it differentiates
        return (_cumprod_pairs(g, x, dim),)
    zero = self == 0
    count = zero.cumsum(dim)
    before, first = count == 0, zero & (count == 1)
    head = _reverse_cumsum((g * conj(result)).masked_fill(~before, 0), dim)
    head = head / conj(x.masked_fill(~before, 1))
    at_zero = _reverse_cumsum(g * conj(x.masked_fill(first, 1).cumprod(dim)), dim)
    return (E.where(before, head, E.where(first, at_zero, 0.0)),)


def _cumprod_pairs(g: Any, x: Any, dim: int) -> Any:
    """``cumprod``'s gradient as the sum over ``j >= k`` of ``g_j`` times the cumulative
    product of ``x`` with ``x_k`` set to 1: quadratic in the length of ``dim``, but made of
    differentiable ops only (the linear-time path masks some dependences away), as
    PyTorch's under create_graph."""
    xt = x.transpose(dim, -1)
    n = xt.shape[-1]
    k = E.arange(n, device=x.device)
    later = k.unsqueeze(0) >= k.unsqueeze(1)  # [k, j]: j >= k
    prods = xt.unsqueeze(-2).expand([*xt.shape[:-1], n, n]).masked_fill(later & later.t(), 1)
    terms = g.transpose(dim, -1).unsqueeze(-2) * conj(prods.cumprod(-1))
    terms = terms.masked_fill(~later, 0)
    return terms.sum(-1).transpose(dim, -1)


defvjp(aten.prod.default, _prod)
defvjp(aten.prod.dim_int, _prod_dim)


def _select_grad(g: Any, self: Any, dim: int, indices: Any, keepdim: bool) -> Any:
    gv = g[0] if isinstance(g, tuple) else g
    if not keepdim and self.ndim:
        gv, indices = gv.unsqueeze(dim), indices.unsqueeze(dim)
    return E.zeros_like(self).scatter(dim, indices, gv) if self.ndim else gv


def _evenly(
    g: Any, self: Any, result: Any, dim: Any = None, keepdim: bool = False, nan: bool = True
) -> tuple[Any]:
    """Share the gradient equally among the elements equal to the result. With ``nan``, a NaN
    result's gradient goes to the NaNs (max/min); amax/amin, as in PyTorch, give NaN."""
    full = unreduce(result, self.shape, dim, keepdim)
    mask = self == full
    if nan:
        mask = mask | (self.isnan() & full.isnan())
    count = mask.sum(_dims(dim, self.ndim), keepdim=True) if self.ndim else mask.sum()
    return (unreduce(g, self.shape, dim, keepdim) * mask / count,)


defvjp(aten.max.dim, lambda g, self, dim, keepdim=False, *, result: (
    _select_grad(g, self, dim, result[1], keepdim),), name="MaxBackward0")  # fmt: skip
defvjp(aten.min.dim, lambda g, self, dim, keepdim=False, *, result: (
    _select_grad(g, self, dim, result[1], keepdim),), name="MinBackward0")  # fmt: skip
defvjp(aten.max.default, lambda g, self, *, result: _evenly(g, self, result), name="MaxBackward1")
defvjp(aten.min.default, lambda g, self, *, result: _evenly(g, self, result), name="MinBackward1")
defvjp(
    aten.amax.default,
    lambda g, self, dim=(), keepdim=False, *, result: _evenly(g, self, result, dim, keepdim, False),
)
defvjp(
    aten.amin.default,
    lambda g, self, dim=(), keepdim=False, *, result: _evenly(g, self, result, dim, keepdim, False),
)


def _var(
    g: Any, self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any]:
    n = _count(self.shape, dim) - (1 if correction is None else correction)
    mean = self.mean(_dims(dim, self.ndim), keepdim=True)
    if n <= 0:  # no degrees of freedom: PyTorch gives inf, or nan where x equals the mean
        return (unreduce(g, self.shape, dim, keepdim) * (self - mean).abs() * math.inf,)
    return (unreduce(g, self.shape, dim, keepdim) * 2 * (self - mean) / n,)


def _std(
    g: Any,
    self: Any,
    dim: Any = None,
    *,
    correction: Any = None,
    keepdim: bool = False,
    result: Any,
) -> tuple[Any]:
    # d std = d var / (2 std), 0 where std is 0 (a constant slice), as PyTorch
    # (NOTE [derivatives at zeros])
    half = E.where(result == 0, 0.0, g / (2 * result))
    return _var(half, self, dim, correction=correction, keepdim=keepdim)


defvjp(aten.var.correction, _var, name="VarBackward0")
defvjp(aten.std.correction, _std, name="StdBackward0")
defvjp(aten.logsumexp.default, lambda g, self, dim, keepdim=False, *, result: (
    unreduce(g, self.shape, dim, keepdim) * conj((self - unreduce(result, self.shape, dim, keepdim)).exp()),))  # fmt: skip
# (half_to_float is refused on CPU, so the input's dtype is the result's)
defvjp(aten._softmax.default, lambda g, self, dim, half_to_float, *, result: (
    aten._softmax_backward_data.default(g, result, dim, result.dtype),))  # fmt: skip
defvjp(aten._log_softmax.default, lambda g, self, dim, half_to_float, *, result: (
    aten._log_softmax_backward_data.default(g, result, dim, result.dtype),))  # fmt: skip
# their backward ops, differentiated in both arguments (double backward)
defvjp(aten._softmax_backward_data.default, lambda gg, grad_output, output, dim, input_dtype: (
    output * (gg - (gg * output).sum(dim, keepdim=True)),
    gg * (grad_output - (grad_output * output).sum(dim, keepdim=True))
    - grad_output * (gg * output).sum(dim, keepdim=True)))  # fmt: skip
defvjp(aten._log_softmax_backward_data.default, lambda gg, grad_output, output, dim, input_dtype: (
    gg - (gg * output.exp()).sum(dim, keepdim=True),
    -gg * output.exp() * grad_output.sum(dim, keepdim=True)))  # fmt: skip
defvjp(
    aten.cumsum.default, lambda g, self, dim, *, dtype=None: (g.flip(dim).cumsum(dim).flip(dim),)
)
defvjp(aten.cumprod.default, _cumprod)
defvjp(aten.sort.default, lambda g, self, dim=-1, descending=False, *, result: (
    E.zeros_like(self).scatter(dim, result[1], g[0]) if self.ndim else g[0],))  # fmt: skip
defvjp(aten.sort.stable, lambda g, self, *, stable, dim=-1, descending=False, result: (
    E.zeros_like(self).scatter(dim, result[1], g[0]) if self.ndim else g[0],))  # fmt: skip
defvjp(aten.topk.default, lambda g, self, k, dim=-1, largest=True, sorted=True, *, result: (
    E.zeros_like(self).scatter(dim, result[1], g[0]) if self.ndim else g[0],))  # fmt: skip

# ----------------------------------------------------------------------- linear algebra
# ``needs`` (one flag per tensor input) skips gradients no input wants, e.g. the data batch's
# (complex: the adjoint, ``mat2.mH``, takes the transpose's place: NOTE [complex gradients])
defvjp(aten.mm.default, lambda g, self, mat2, *, needs: (
    _grad_mat1(g, mat2, self) if needs[0] else None,
    _grad_mat2(g, self, mat2) if needs[1] else None))  # fmt: skip
defvjp(aten.bmm.default, lambda g, self, mat2, *, needs: (
    g.bmm(conj(mat2).transpose(1, 2)) if needs[0] else None,
    conj(self).transpose(1, 2).bmm(g) if needs[1] else None))  # fmt: skip
defvjp(aten.mv.default, lambda g, self, vec: (
    g.unsqueeze(1) * conj(vec).unsqueeze(0), conj(self).t().mv(g)))  # fmt: skip
defvjp(aten.dot.default, lambda g, self, tensor: (g * conj(tensor), g * conj(self)))
# vdot(a, b) = dot(conj(a), b): conj(g) * b for a (the conjugate's gradient conjugated)
defvjp(aten.vdot.default, lambda g, self, other: (conj(g) * other, g * self))
defvjp(aten.addmm.default, lambda g, self, mat1, mat2, *, beta=1, alpha=1, needs: (
    (g if beta == 1 else g * conj(beta)) if needs[0] else None,
    (_grad_mat1(g, mat2, mat1) if alpha == 1 else _grad_mat1(g, mat2, mat1) * conj(alpha))
    if needs[1] else None,
    (_grad_mat2(g, mat1, mat2) if alpha == 1 else _grad_mat2(g, mat1, mat2) * conj(alpha))
    if needs[2] else None))  # fmt: skip

# ----------------------------------------------------------------------- shapes and views
defvjp(aten.view.default, lambda g, self, size: (g.reshape(self.shape),))
defvjp(aten._unsafe_view.default, lambda g, self, size: (g.reshape(self.shape),))
defvjp(aten.transpose.int, lambda g, self, dim0, dim1: (g.transpose(dim0, dim1),))
defvjp(aten.t.default, lambda g, self: (g.t(),))
defvjp(aten.permute.default, lambda g, self, dims: (g.permute(_inverse(dims)),))
defvjp(aten.expand.default, lambda g, self, size, *, implicit=False: (g,))  # engine sums to shape


def _unsqueeze_to(g: Any, dims: Any, shape: Any) -> Any:
    """PyTorch's ``unsqueeze_to``: ``g`` with the size-1 dims of ``shape`` among ``dims``
    (all of them for None) put back, one ``unsqueeze`` each, in increasing order."""
    n = len(shape)
    if dims is None:
        dims = range(n)
    elif isinstance(dims, int):
        dims = [dims]
    for d in sorted({d % n if n else 0 for d in dims}):
        if n and shape[d] == 1:
            g = aten.unsqueeze.default(g, d)
    return g


# PyTorch's formulas (squeeze's gradient unsqueezes, unsqueeze's squeezes), so a dispatch
# mode sees its ops, not a view
defvjp(aten.unsqueeze.default, lambda g, self, dim: (aten.squeeze.dim(g, dim),))
defvjp(aten.squeeze.default, lambda g, self: (_unsqueeze_to(g, None, self.shape),))
defvjp(aten.squeeze.dim, lambda g, self, dim: (_unsqueeze_to(g, dim, self.shape),))
defvjp(aten.squeeze.dims, lambda g, self, dim: (_unsqueeze_to(g, dim, self.shape),))
defvjp(aten.alias.default, lambda g, self: (g,))
defvjp(aten.select.int, lambda g, self, dim, index: (
    aten.select_backward(g, self.shape, dim, index),))  # fmt: skip
defvjp(aten.slice.Tensor, lambda g, self, dim=0, start=None, end=None, step=1: (
    aten.slice_backward(g, self.shape, dim, 0 if start is None else start,
                              sys.maxsize if end is None else end, step),))  # fmt: skip
defvjp(aten.diagonal.default, lambda g, self, offset=0, dim1=0, dim2=1: (
    aten.diagonal_backward(g, self.shape, offset, dim1, dim2),))  # fmt: skip
defvjp(aten.unbind.int, lambda g, self, dim=0: (_unbind_grad(g, self, dim),))
defvjp(aten.split.Tensor, lambda g, self, split_size, dim=0: (
    _cat_or_zeros(g, self, dim, _split_sizes(self.shape[dim], split_size)),))  # fmt: skip
defvjp(
    aten.split_with_sizes.default,
    lambda g, self, split_sizes, dim=0: (_cat_or_zeros(g, self, dim, split_sizes),),
)
defvjp(aten.cat.default, lambda g, tensors, dim=0: (_cat_grad(g, tensors, dim),))
# stack's gradient: the pieces of the output's gradient (PyTorch's stack_tensors_backward)
defvjp(aten.stack.default, lambda g, tensors, dim=0: (
    list(aten.unbind.int(g, wrap_dim(dim, g.ndim, "stack"))),))  # fmt: skip
defvjp(aten.flip.default, lambda g, self, dims: (g.flip(dims),))
defvjp(aten.roll.default, lambda g, self, shifts, dims=(): (
    g.roll([-s for s in (shifts if isinstance(shifts, (list, tuple)) else [shifts])], dims),))  # fmt: skip
defvjp(aten.tril.default, lambda g, self, diagonal=0: (g.tril(diagonal),))
defvjp(aten.triu.default, lambda g, self, diagonal=0: (g.triu(diagonal),))
defvjp(aten.gather.default, lambda g, self, dim, index, *, sparse_grad=False: (
    E.zeros_like(self).scatter_add(dim, index, g), None))  # fmt: skip
defvjp(aten.scatter.src, lambda g, self, dim, index, src: (
    g.scatter(dim, index, 0), None, _pad_to(g.gather(dim, index), src.shape)))  # fmt: skip
defvjp(aten.scatter.value, lambda g, self, dim, index, value: (g.scatter(dim, index, 0), None))
defvjp(
    aten.scatter_add.default,
    lambda g, self, dim, index, src: (g, None, _pad_to(g.gather(dim, index), src.shape)),
)
defvjp(
    aten.index_select.default,
    lambda g, self, dim, index: (_index_select_grad(g, self, dim, index), None),
)
defvjp(aten.masked_fill.Scalar, lambda g, self, mask, value: (g.masked_fill(mask, 0), None))
defvjp(aten.masked_fill.Tensor, lambda g, self, mask, value: (
    g.masked_fill(mask, 0), None, E.where(mask, g, 0.0).sum()))  # fmt: skip
defvjp(aten.index.Tensor, lambda g, self, indices: (
    E.zeros_like(self).index_put(indices, g, True), None))  # fmt: skip
defvjp(aten.index_put.default, lambda g, self, indices, values, accumulate=False: (
    g if accumulate else g.index_put(indices, E.zeros_like(values), False), None,
    aten.index.Tensor(g, indices)))  # fmt: skip
defvjp(aten.clone.default, lambda g, self, *, memory_format=None: (g,))
# the engine casts to self's dtype; a copy across devices sends the gradient back to self's
defvjp(aten._to_copy.default, lambda g, self, **kwargs: (
    g if g.device == self.device else aten._to_copy.default(g, device=self.device),))  # fmt: skip
defvjp(aten.copy.default, lambda g, self, src, non_blocking=False: (_nz(g), g))
defvjp(aten.fill.Scalar, lambda g, self, value: (_nz(g),))
defvjp(aten.fill.Tensor, lambda g, self, value: (_nz(g), g.sum()))
defvjp(aten.zero.default, lambda g, self: (_nz(g),))
defvjp(aten.repeat.default, lambda g, self, repeats: (_repeat_grad(g, self, repeats),))


def _grad_mat1(g: Any, mat2: Any, mat1: Any) -> Any:
    """``g @ mat2ᴴ``, laid out like ``mat1``."""
    if mat2._edata.dtype.kind == "c":
        mat2 = conj(mat2)
    d = mat1._edata  # _transposed(mat1), inlined: this runs for every Linear layer
    if d.ndim == 2 and d.strides[0] == d.itemsize and d.strides[1] != d.itemsize:
        return _T(_MM(mat2, _T(g)))
    return _MM(g, _T(mat2))


def _grad_mat2(g: Any, mat1: Any, mat2: Any) -> Any:
    """``mat1ᴴ @ g``, laid out like ``mat2``: for a transposed ``mat2``, such as a Linear
    weight used as ``W.t()``, ``(gᵀ conj(mat1))ᵀ``, so the gradient that reaches ``W`` is
    contiguous (and can be kept as ``W.grad`` without a copy), in two transposes."""
    if mat1._edata.dtype.kind == "c":
        mat1 = conj(mat1)
    d = mat2._edata
    if d.ndim == 2 and d.strides[0] == d.itemsize and d.strides[1] != d.itemsize:
        return _T(_MM(_T(g), mat1))
    return _MM(_T(mat1), g)


def _cat_grad(g: Any, tensors: Any, dim: int) -> list[Any]:
    """Split cat's gradient back into its inputs (legacy empty 1-D inputs get empty grads)."""
    legacy = [tuple(t.shape) == (0,) for t in tensors]
    if all(legacy):
        return [E.zeros_like(t) for t in tensors]
    sizes = [0 if leg else t.shape[dim] for t, leg in zip(tensors, legacy, strict=True)]
    parts = g.split_with_sizes(sizes, dim)
    return [E.zeros_like(t) if leg else p for t, p, leg in zip(tensors, parts, legacy, strict=True)]


def _grad_list(g: Any) -> list[Any]:
    """The gradients of a ``Tensor[]`` output as a list: the node passes a lone output's
    gradient bare, so ``split`` into one piece must not iterate over that tensor's rows."""
    return [g] if isinstance(g, Tensor) else list(g)


def _split_sizes(n: int, split_size: int) -> list[int]:
    """The sizes of ``split(split_size)``'s pieces of a dim of size ``n``."""
    if n == 0:
        return [0]
    return [min(split_size, n - i) for i in range(0, n, split_size)]


def _cat_or_zeros(g: Any, self: Any, dim: int, sizes: Any) -> Any:
    """Split's gradient: the pieces' gradients side by side, zeros for a piece that got none
    (NOTE [undefined output gradients] in engine.py)."""
    gs = _grad_list(g)
    if not gs:
        return E.zeros_like(self)
    if any(p is None for p in gs):
        d = dim % self.ndim
        like = next(p for p in gs if p is not None)
        shape = list(self.shape)
        gs = [
            like.new_zeros(shape[:d] + [n] + shape[d + 1 :]) if p is None else p
            for p, n in zip(gs, sizes, strict=True)
        ]
    return E.cat(gs, dim)


def _unbind_grad(g: Any, self: Any, dim: int) -> Any:
    """Unbind's gradient: the slices' gradients stacked, zeros for a slice that got none."""
    gs = _grad_list(g)
    if any(p is None for p in gs):
        like = next(p for p in gs if p is not None)
        gs = [like.new_zeros(like.shape) if p is None else p for p in gs]
    return E.stack(gs, dim)


def _pad_to(g: Any, shape: Any) -> Any:
    """``g`` in the leading corner of zeros of ``shape`` (scatter's src may exceed index)."""
    if tuple(g.shape) == tuple(shape):
        return g
    pads: list[int] = []
    for have, want in zip(reversed(g.shape), reversed(shape), strict=True):
        pads += [0, want - have]
    return aten.constant_pad_nd.default(g, pads, 0.0)


def _inverse(dims: Any) -> list[int]:
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return inv


def _index_select_grad(g: Any, self: Any, dim: int, index: Any) -> Any:
    if not self.ndim:
        return g
    shape = [1] * g.ndim
    shape[dim] = -1
    return E.zeros_like(self).scatter_add(dim, index.reshape(shape).expand(g.shape), g)


def _repeat_grad(g: Any, self: Any, repeats: Any) -> Any:
    lead = len(repeats) - self.ndim
    g = g.sum(list(range(lead))) if lead else g
    shape: list[int] = []
    for r, n in zip(repeats[lead:], self.shape, strict=True):
        shape += [r, n]
    return g.reshape(shape).sum(list(range(0, len(shape), 2)))


# ----------------------------------------------------------------------- the *_backward ops
defvjp(
    aten.select_backward.default,
    lambda g, grad_output, input_sizes, dim, index: (g.select(dim, index),),
)
defvjp(aten.slice_backward.default, lambda g, grad_output, input_sizes, dim, start, end, step: (
    aten.slice.Tensor(g, dim, start, end, step),))  # fmt: skip
defvjp(aten.diagonal_backward.default, lambda g, grad_output, input_sizes, offset, dim1, dim2: (
    g.diagonal(offset, dim1, dim2),))  # fmt: skip

# ----------------------------------------------------------------------- no gradient at all
nondifferentiable(
    aten.detach.default,
    *(getattr(getattr(aten, name), o) for name in (
        "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
        "randint_like", "new_zeros", "new_ones", "new_full", "new_empty")
      for o in getattr(aten, name).overloads() if not getattr(getattr(aten, name), o)._schema.is_out),
)  # fmt: skip

# ----------------------------------------------------------------------- norms, moments


def _vector_norm(
    g: Any,
    self: Any,
    ord: Any = 2,
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    result: Any,
) -> tuple[Any]:  # noqa: A002
    p = float(ord)
    gu = unreduce(g, self.shape, dim, keepdim)
    r = unreduce(result, self.shape, dim, keepdim)
    if p == 0:  # a count of nonzeros: PyTorch's gradient is undefined (None), not zeros
        return (None,)
    if p == 1:
        return (gu * _sgn(self),)
    if math.isinf(p):  # shared equally by the elements whose magnitude is the norm (or NaN)
        a = self.abs()
        mask = (a == r) | a.isnan()
        count = mask.sum(_dims(dim, self.ndim), keepdim=True) if self.ndim else mask.sum()
        return (_sgn(self) * (gu / count * mask),)
    # NOTE [derivatives at zeros]: PyTorch's cases; 0 where the norm is 0, and for p < 1
    # (|x|^(p-1) is inf at 0) 0 where x is 0
    if p < 1:
        scaled = _sgn(self) * self.abs().pow(p - 1).masked_fill(self == 0, 0)
        return (scaled * gu * r.pow(1 - p),)
    if p == 2:  # PyTorch's grouping: the second derivative at a zero norm is its NaN (0 / 0)
        return (gu * (self / r).masked_fill(r == 0, 0),)
    scaled = _sgn(self) * self.abs().pow(p - 1) if p < 2 else self * self.abs().pow(p - 2)
    return (scaled * (gu / r.pow(p - 1)).masked_fill(r == 0, 0),)


def _var_mean(
    g: Any, self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any]:
    gv, gm = g  # either may be None (NOTE [undefined output gradients] in engine.py)
    grad = None if gv is None else _var(gv, self, dim, correction=correction, keepdim=keepdim)[0]
    return (_plus(grad, _mean_grad(gm, self, dim, keepdim)),)


def _std_mean(
    g: Any,
    self: Any,
    dim: Any = None,
    *,
    correction: Any = None,
    keepdim: bool = False,
    result: Any,
) -> tuple[Any]:
    gs, gm = g  # either may be None (NOTE [undefined output gradients] in engine.py)
    grad = (
        None if gs is None
        else _std(gs, self, dim, correction=correction, keepdim=keepdim, result=result[0])[0]
    )  # fmt: skip
    return (_plus(grad, _mean_grad(gm, self, dim, keepdim)),)


def _mean_grad(g: Any, self: Any, dim: Any, keepdim: bool) -> Any:
    """``mean``'s gradient (None for None)."""
    return None if g is None else unreduce(g, self.shape, dim, keepdim) / _count(self.shape, dim)


def _plus(a: Any, b: Any) -> Any:
    """``a + b`` of two gradient terms, either of which may be None (absent)."""
    return b if a is None else a if b is None else a + b


def _clamp_tensor(g: Any, self: Any, min: Any = None, max: Any = None) -> tuple[Any, Any, Any]:  # noqa: A002
    inside = E.ones_like(self, dtype=bool_)
    if min is not None:
        inside = inside & (self >= min)
    if max is not None:
        inside = inside & (self <= max)
    # as PyTorch: with min > max the result is max, so max takes the gradient
    both = min is not None and max is not None
    grad_min = (
        None if min is None else E.where((self < min) & ((min < max) if both else True), g, 0.0)
    )
    grad_max = (
        None if max is None else E.where((self > max) | ((max < min) if both else False), g, 0.0)
    )
    return (E.where(inside, g, 0.0), grad_min, grad_max)


defvjp(aten.linalg_vector_norm.default, _vector_norm)
defvjp(aten.var_mean.correction, _var_mean)
defvjp(aten.std_mean.correction, _std_mean)
defvjp(aten.clamp.Tensor, _clamp_tensor, name="ClampBackward0")
defvjp(aten.lift_fresh.default, lambda g, self: (g,))
defvjp(aten.lift_fresh_copy.default, lambda g, self: (g,), name="LiftFreshBackward0_copy")

# ----------------------------------------------------------------------- einsum
# NOTE [einsum backward]
# The gradient of operand k is an einsum of the output gradient with the other operands, whose
# output is operand k's subscripts. Three things keep that from being one line:
# - the ellipsis: spelled out as fresh letters, right-aligned, so broadcast dims share them;
# - a subscript repeated within operand k (a diagonal, "ii"): the repeats get fresh letters,
#   tied to the first by an identity matrix, so the gradient lands on the diagonal only;
# - dims the gradient's einsum cannot produce at operand k's size: a subscript found in no
#   other term (summed away, "ij->i") gets a ones vector, and a size-1 dim of operand k that
#   broadcast against a larger one is summed away and put back by ``unsqueeze``.
# Other operands are expanded to the full sizes, so no term of the gradient's einsum broadcasts.
# Every step is an ember op (constants aside), so the gradient differentiates again.

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_labels(equation: str, ndims: list[int]) -> tuple[list[str], str, list[str]]:
    """One letter per dim of each operand and of the output (the ellipsis spelled out, the
    implicit output made explicit), and the letters the equation leaves unused."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    fresh = [c for c in _LETTERS if c not in eq]
    n_ell = max(
        (n - len(t) + 3 for t, n in zip(terms, ndims, strict=True) if "..." in t), default=0
    )
    ell, fresh = "".join(fresh[:n_ell]), fresh[n_ell:]

    def spell(term: str, ndim: int) -> str:
        head, dots, tail = term.partition("...")
        return head + (ell[n_ell - (ndim - len(head) - len(tail)) :] if dots else "") + tail

    labels = [spell(t, n) for t, n in zip(terms, ndims, strict=True)]
    if arrow:
        out = spell(rhs, len(rhs) - 3 + n_ell if "..." in rhs else len(rhs))
    else:
        letters = lhs.replace("...", "").replace(",", "")
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return labels, out, fresh


def _in_dtype(x: Any, d: Any) -> Any:
    return x if x.dtype is d else x.to(d)


def _einsum_grad(g: Any, equation: str, tensors: Any) -> list[Any]:
    """Each operand's gradient (NOTE [einsum backward])."""
    labels, out, fresh = _einsum_labels(equation, [t.ndim for t in tensors])
    sizes: dict[str, int] = {}
    for lab, t in zip(labels, tensors, strict=True):
        for c, n in zip(lab, t.shape, strict=True):
            if sizes.get(c, 1) == 1:  # a size-1 dim broadcasts against any other
                sizes[c] = n
    full = [
        t if tuple(t.shape) == tuple(sizes[c] for c in lab) else t.expand([sizes[c] for c in lab])
        for lab, t in zip(labels, tensors, strict=True)
    ]
    grads = []
    for k, (lab, t) in enumerate(zip(labels, tensors, strict=True)):
        terms = [out] + [x for j, x in enumerate(labels) if j != k]
        # (operands of mixed dtypes, which only a contraction-free forward takes, in g's
        # dtype: the gradient's einsum may contract; NOTE [einsum dtypes])
        operands = [g] + [_in_dtype(conj(x), g.dtype) for j, x in enumerate(full) if j != k]
        spare = iter(fresh)
        kept: list[str] = []  # the gradient einsum's output letters
        summed: list[int] = []  # operand k's broadcast size-1 dims
        for d, (c, n) in enumerate(zip(lab, t.shape, strict=True)):
            if n != sizes[c]:
                summed.append(d)
            elif c in kept:  # a repeat within operand k: the gradient goes on the diagonal
                f = next(spare, None)
                if f is None:
                    raise RuntimeError(f"einsum backward: {equation!r} uses too many subscripts")
                kept.append(f)
                terms.append(c + f)
                operands.append(E.eye(n, dtype=g.dtype, device=g.device))
            else:
                kept.append(c)
        present = set("".join(terms))
        for c in kept:
            if c not in present:  # summed away in the forward: every element gets the gradient
                present.add(c)
                terms.append(c)
                operands.append(g.new_ones((sizes[c],)))
        grad = E.einsum(",".join(terms) + "->" + "".join(kept), operands)
        for d in summed:
            grad = grad.unsqueeze(d)
        grads.append(grad)
    return grads


defvjp(aten.einsum.default, lambda g, equation, tensors, *, path=None: (
    _einsum_grad(g, equation, tensors),))  # fmt: skip

# ----------------------------------------------------------------------- as_strided
# NOTE [as_strided backward]
# As PyTorch's ``as_strided_backward``: the output and the input are two geometries over one
# storage. The output gradient is scattered (accumulating where output elements overlap) into
# a zero buffer spanning both geometries, from the lower of their storage offsets; each input
# element then reads its storage position, divided by how many input elements share that
# position when the input overlaps itself. Storage the input does not cover (elements of a
# bigger base outside the view ``self``) gets nothing, as in PyTorch.


def _storage_span(size: Any, stride: Any, offset: int) -> int:
    """Elements of storage a geometry reaches, counting from storage position 0."""
    if 0 in size:
        return offset
    return offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))


def _may_overlap(size: Any, stride: Any) -> bool:
    """Whether two elements of a geometry may share storage (PyTorch's conservative test)."""
    reach = 0
    for s, n in sorted((s, n) for n, s in zip(size, stride, strict=True) if n > 1):
        if s <= reach:
            return True
        reach += s * (n - 1)
    return False


def _as_strided_grad(
    g: Any, self: Any, size: Any, stride: Any, storage_offset: int | None = None
) -> tuple[Any]:
    """NOTE [as_strided backward]."""
    shape, start = tuple(self.shape), self.storage_offset()
    if g.numel() == 0 or self.numel() == 0:
        return (g.new_zeros(shape),)
    offset = start if storage_offset is None else storage_offset
    low = min(start, offset)
    inp = (shape, tuple(self.stride()), start - low)
    out = (tuple(size), tuple(stride), offset - low)
    n = max(_storage_span(*inp), _storage_span(*out))
    position = E.arange(n, device=g.device)
    storage = g.new_zeros((n,)).scatter_add(0, position.as_strided(*out).reshape(-1), g.reshape(-1))
    taken = position.as_strided(*inp)
    if _may_overlap(inp[0], inp[1]):
        flat = taken.reshape(-1)
        count = g.new_zeros((n,)).scatter_add(0, flat, g.new_ones((flat.numel(),)))
        storage = storage / count.clamp_min(1)
    return (storage[taken],)


defvjp(aten.as_strided.default, _as_strided_grad)

# ----------------------------------------------------------------------- scatter with reduce
# PyTorch (2.x) has no derivative for these two overloads ("derivative for aten::scatter is not
# implemented"); ember's are the exact ones, checked against finite differences.
# "add" passes the gradient to self and gathers it for src, as scatter_add. "multiply":
# out = self * (product of the src values scattered to it), so self's gradient is g times
# that product (1 where nothing lands), and src's is g * out / src, except where src is 0:
# a lone 0 in its slot gets g times the product of the others, two or more give 0. (Second
# derivatives are exact only where src has no zero; PyTorch's scatter_reduce refuses them.)


def _crop(src: Any, shape: Any) -> Any:
    """The leading corner of ``src`` that ``index`` of ``shape`` reads (src may be larger)."""
    if tuple(src.shape) == tuple(shape):
        return src
    return src[tuple(slice(0, n) for n in shape)]


def _scatter_mul_src(g: Any, self: Any, dim: int, index: Any, src: Any, result: Any) -> Any:
    s = _crop(src, index.shape)
    zero = s == 0
    zeros_in_slot = E.zeros_like(self).scatter_add(dim, index, zero.to(self.dtype))
    lone = zero & (zeros_in_slot.gather(dim, index) == 1)
    others = self.scatter(dim, index, s.masked_fill(lone, 1), reduce="multiply")
    grad = E.where(
        lone,
        (g * conj(others)).gather(dim, index),
        (g * conj(result)).gather(dim, index) / conj(s.masked_fill(zero, 1)),
    )
    return _pad_to(grad, src.shape)


def _scatter_reduce_grad(
    g: Any, self: Any, dim: int, index: Any, src: Any, *, reduce: str, result: Any
) -> tuple[Any, None, Any]:
    if reduce == "add":
        return (g, None, _pad_to(g.gather(dim, index), src.shape))
    product = E.ones_like(self).scatter(dim, index, _crop(src, index.shape), reduce="multiply")
    return (g * conj(product), None, _scatter_mul_src(g, self, dim, index, src, result))


defvjp(aten.scatter.reduce, _scatter_reduce_grad)
defvjp(aten.scatter.value_reduce, lambda g, self, dim, index, value, *, reduce: (
    g if reduce == "add"
    else g * conj(E.ones_like(self).scatter(dim, index, value, reduce="multiply")), None))  # fmt: skip


# frexp: the mantissa is self / 2 ** exponent, the exponent piecewise constant
defvjp(aten.frexp.Tensor, lambda g, self, result: (g[0] * E.exp2(-result[1].to(g[0].dtype)),),
       outputs=(True, False))  # fmt: skip
