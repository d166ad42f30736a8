"""CPU kernels of the pointwise ops, on NumPy ufuncs.

Dtypes come from the op's rule (``pointwise_dtypes`` in ``ember/ops/native/promotion.py``,
shared with the Meta rules): operands are cast to the computation dtype, the NumPy function
runs, and the result is cast to the result dtype only if it differs. Python numbers stay
Python numbers (NumPy treats them as weak, as PyTorch treats wrapped numbers), except integers
outside the computation dtype's range, which wrap as PyTorch's casts do.
See NOTE [quiet floating point] in ``_util.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import dtypes
from ember.backends.cpu._util import ERRSTATE, IGNORE, Tensor, data, quiet, wrap
from ember.backends.cpu.layout import laid_out
from ember.backends.variants import check_write
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.pointwise import POSITIVE_CHECK, check_frexp, isin_dtype
from ember.ops.native.promotion import POINTWISE, pointwise_dtypes
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes
from ember.return_types import frexp as frexp_t

aten = ops.aten
CPU = DispatchKey.CPU
_nd = np.ndarray
_asarray = np.asarray
_FROM = dtypes.FROM_NUMPY
_INT_RANGE = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
              for t in (np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32,
                        np.uint64)}  # fmt: skip
_INEXACT = dtypes.INEXACT_NP  # bfloat16's joins when ml_dtypes loads (NOTE [bfloat16])
_HALF = dtypes.HALF_NP

# --------------------------------------------------------------------------- arguments, results


def _wrap_int(x: int, npdt: np.dtype[Any]) -> Any:
    """A Python int outside ``npdt``'s range, wrapped as PyTorch's scalar cast does."""
    if -(2**63) <= x < 2**63:
        return np.array(x, np.int64).astype(npdt)
    if 0 <= x < 2**64:
        return np.array(x, np.uint64).astype(npdt)
    raise OverflowError(f"value {x} is too big to convert to {npdt}: it does not fit in int64")


def arg(x: Any, npdt: np.dtype[Any]) -> Any:
    """A tensor's data cast to ``npdt``, or a Python number ready for a ufunc computing in it."""
    if isinstance(x, Tensor):
        d = data(x)
        return d if d.dtype is npdt else d.astype(npdt)
    t = type(x)
    kind = npdt.kind
    if kind in "iu":
        if t is int:
            lo, hi = _INT_RANGE[npdt]
            return x if lo <= x <= hi else _wrap_int(x, npdt)
        if t is float or t is complex:  # a non-operand scalar (value=0.5 on integers)
            return np.array(x).real.astype(npdt) if t is complex else np.array(x).astype(npdt)
    elif kind == "b" and t is not bool and x is not None:
        return np.array(x).astype(npdt)
    elif kind == "f" and t is complex:
        return np.array(x).real.astype(npdt)
    return x


def result(r: Any, rnp: np.dtype[Any]) -> Tensor:
    """Wrap a NumPy result (0-d results come back as scalars) in the result dtype."""
    if type(r) is not _nd:
        r = _asarray(r)
    return wrap(r if r.dtype is rnp else r.astype(rnp))


def broadcast_error(name: str, *xs: Any) -> None:
    """Raise PyTorch's broadcast error if the tensors' shapes clash (after a NumPy ValueError)."""
    broadcast_shapes(*[x.shape for x in xs if isinstance(x, Tensor)], op=name)


def _opmath(npdt: np.dtype[Any]) -> np.dtype[Any]:
    """PyTorch computes float16 (and bfloat16) in float32 for transcendental and composite
    formulas."""
    return np.dtype(np.float32) if npdt in _HALF else npdt


def _check_int_divisor(name: str, cnp: np.dtype[Any], a: Any, b: Any) -> None:
    """Integer division by zero is an error in PyTorch (floats give inf/nan), where a
    division happens: an empty result divides nothing."""
    if cnp.kind in "iub" and np.broadcast(a, b).size and np.any(np.equal(b, 0)):
        raise RuntimeError(f"{name}: ZeroDivisionError (integer division by zero)")


# --------------------------------------------------------------------------- kernel factories


def unary(name: str, fn: Callable[[Any], Any], *, quiet_fp: bool = True) -> Callable[..., Tensor]:
    """The kernel of a one-operand op computing ``fn`` in the op's computation dtype."""
    info = POINTWISE[name]
    #: input dtype -> (compute dtype, result dtype, quiet): one operand's dtypes, and the
    #: op's checks, depend on nothing but its dtype, so each is worked out once
    plans: dict[np.dtype[Any], tuple[np.dtype[Any], np.dtype[Any], bool]] = {}

    def kernel(self: Any) -> Tensor:
        d = self._edata if isinstance(self, Tensor) else None
        if type(d) is _nd:
            plan = plans.get(d.dtype)
            if plan is None:
                cdt, rdt = pointwise_dtypes(name, info, (self,))  # raises for bad dtypes
                plan = plans[d.dtype] = (cdt.np, rdt.np, quiet_fp and cdt.np in _INEXACT)
            cnp, rnp, q = plan
            a = d if d.dtype is cnp else d.astype(cnp)
            return result(quiet(fn, a) if q else fn(a), rnp)
        cdt, rdt = pointwise_dtypes(name, info, (self,))
        a = arg(self, cdt.np)
        r = quiet(fn, a) if quiet_fp and cdt.np in _INEXACT else fn(a)
        return result(r, rdt.np)

    kernel.__name__ = name.replace(".", "_")
    return kernel


def binary(
    name: str, fn: Callable[[Any, Any], Any], *, quiet_fp: bool = True, int_divide: bool = False
) -> Callable[..., Tensor]:
    """The kernel of a two-operand op computing ``fn`` in the op's computation dtype."""
    info = POINTWISE[name]

    def kernel(self: Any, other: Any) -> Tensor:
        cdt, rdt = pointwise_dtypes(name, info, (self, other))
        cnp = cdt.np
        a, b = arg(self, cnp), arg(other, cnp)
        if int_divide:
            _check_int_divisor(name, cnp, a, b)
        try:
            r = quiet(fn, a, b) if quiet_fp else fn(a, b)
        except ValueError:
            broadcast_error(name, self, other)
            raise
        return result(r, rdt.np)

    kernel.__name__ = name.replace(".", "_")
    return kernel


_TB = POINTWISE["threshold_backward.default"]
_ZERO = {np.dtype(t): np.zeros((), t) for t in (np.float16, np.float32, np.float64)}
#: the integer type of a float's bits, for masking by bits (NOTE [masking by bits])
_BITS = {np.dtype(f): np.dtype(i) for f, i in ((np.float16, np.int16), (np.float32, np.int32),
                                               (np.float64, np.int64))}  # fmt: skip


@impl(aten.threshold_backward.default, CPU)
def threshold_backward(grad_output: Any, self: Any, threshold: Any) -> Tensor:
    """0 where ``self <= threshold``, else ``grad_output`` (NaN in ``self`` passes the
    gradient, as in PyTorch): relu's backward in one pass."""
    g, x = grad_output._edata, self._edata
    if (
        type(g) is _nd and type(x) is _nd and g.dtype is x.dtype and g.dtype.kind == "f"
        and g.shape == x.shape and (type(threshold) is int or type(threshold) is float)
    ):  # fmt: skip
        if g.size < 4096:
            return wrap(np.where(x <= threshold, _ZERO[g.dtype], g))
        return wrap(_zero_where(x <= threshold, g))
    cdt, rdt = pointwise_dtypes("threshold_backward.default", _TB, (grad_output, self))
    g, x = arg(grad_output, cdt.np), arg(self, cdt.np)
    try:
        r = np.where(x <= threshold, cdt.np.type(0), g)
    except ValueError:
        broadcast_error("threshold_backward.default", grad_output, self)
        raise
    return result(r, rdt.np)


def _zero_where(mask: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``np.where(mask, 0, g)``, by bits.

    # NOTE [masking by bits]
    ``np.where`` picks element by element, with a branch NumPy does not vectorize: on a
    layer's activations (32k floats) it takes three times what PyTorch's relu backward
    does. The same result comes from four vectorized passes over the bits: the mask as 0/1
    integers of the float's width, minus 1 (all bits clear where masked, all set elsewhere),
    ANDed with the float's bits. Exact for every value, NaN and inf included; for small
    arrays the extra calls cost more than the pass saves.
    """
    ib = _BITS[g.dtype]
    keep = mask.view(np.uint8).astype(ib)
    np.subtract(keep, 1, out=keep)
    g = np.ascontiguousarray(g)
    return np.bitwise_and(g.view(ib), keep, out=keep).view(g.dtype).reshape(g.shape)


# --------------------------------------------------------------------------- add, sub, mul, div

_ADD, _SUB = POINTWISE["add.Tensor"], POINTWISE["sub.Tensor"]
_add, _subtract, _multiply, _true_divide = np.add, np.subtract, np.multiply, np.true_divide


def _fast(fn: Callable[[Any, Any], Any], self: Any, other: Any) -> Tensor | None:
    """``fn`` on a float tensor and a same-dtype tensor or a Python number: the common case,
    whose result dtype is ``self``'s. None when the arguments need the general path."""
    a = self._edata
    dt = a.dtype
    if dt.kind != "f":
        return None
    to = type(other)
    if to is Tensor or (to is not float and to is not int and isinstance(other, Tensor)):
        b = other._edata
        if b.dtype is not dt:
            return None
    elif to is float or to is int:
        b = other
    else:
        return None
    if a.ndim > 1 and not _plain(a) or type(b) is _nd and b.ndim > 1 and not _plain(b):
        return None  # the general path lays the result out (NOTE [pointwise result layout])
    token = ERRSTATE.set(IGNORE)
    try:
        r = fn(a, b)
    except ValueError:
        return None
    finally:
        ERRSTATE.reset(token)
    return wrap(r if type(r) is _nd else _asarray(r))


def _plain(a: np.ndarray) -> bool:
    """Row-major with no size-0/1 dims: NumPy's result of such operands (or 1-d ones) is
    row-major, as PyTorch's is (NOTE [pointwise result layout])."""
    shape = a.shape
    return a.flags.c_contiguous and 1 not in shape and 0 not in shape


def _scaled(name: str, info: Any, fn: Callable[[Any, Any], Any], self: Any, other: Any,
            alpha: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Tensor:  # fmt: skip
    """``fn(self, alpha * other)`` in the computation dtype (add, sub, rsub)."""
    cdt, rdt = pointwise_dtypes(name, info, args, kwargs)
    cnp = cdt.np
    a, b = arg(self, cnp), arg(other, cnp)
    try:
        if alpha != 1 or type(alpha) is not int:
            b = quiet(_multiply, b, arg(alpha, cnp))
        r = quiet(fn, a, b)
    except ValueError:
        broadcast_error(name, self, other)
        raise
    return result(r, rdt.np)


def _add_general(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    kw = {"alpha": alpha}
    return _scaled("add.Tensor", _ADD, _add, self, other, alpha, (self, other), kw)


_add_laid_out = laid_out(aten.add.Tensor, _add_general)


@impl(aten.add.Tensor, CPU)
def add(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    if alpha == 1 and type(alpha) is int and (type(self) is Tensor or isinstance(self, Tensor)):
        r = _fast(_add, self, other)
        if r is not None:
            return r
    return _add_laid_out(self, other, alpha=alpha)


@impl(aten.add.Scalar, CPU)
def add_scalar(self: Any, other: Any, alpha: Any = 1) -> Tensor:
    info = POINTWISE["add.Scalar"]
    return _scaled("add.Scalar", info, _add, self, other, alpha, (self, other, alpha), {})


def _sub_general(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    kw = {"alpha": alpha}
    return _scaled("sub.Tensor", _SUB, _subtract, self, other, alpha, (self, other), kw)


_sub_laid_out = laid_out(aten.sub.Tensor, _sub_general)


@impl(aten.sub.Tensor, CPU)
def sub(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    if alpha == 1 and type(alpha) is int and (type(self) is Tensor or isinstance(self, Tensor)):
        r = _fast(_subtract, self, other)
        if r is not None:
            return r
    return _sub_laid_out(self, other, alpha=alpha)


@impl(aten.sub.Scalar, CPU)
def sub_scalar(self: Any, other: Any, alpha: Any = 1) -> Tensor:
    info = POINTWISE["sub.Scalar"]
    return _scaled("sub.Scalar", info, _subtract, self, other, alpha, (self, other, alpha), {})


@impl(aten.rsub.Tensor, CPU)
def rsub(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    info = POINTWISE["rsub.Tensor"]
    kw = {"alpha": alpha}
    return _scaled("rsub.Tensor", info, _subtract, other, self, alpha, (self, other), kw)


@impl(aten.rsub.Scalar, CPU)
def rsub_scalar(self: Any, other: Any, alpha: Any = 1) -> Tensor:
    info = POINTWISE["rsub.Scalar"]
    return _scaled("rsub.Scalar", info, _subtract, other, self, alpha, (self, other, alpha), {})


_mul_general = laid_out(aten.mul.Tensor, binary("mul.Tensor", _multiply))


@impl(aten.mul.Tensor, CPU)
def mul(self: Any, other: Any) -> Tensor:
    if type(self) is Tensor or isinstance(self, Tensor):
        r = _fast(_multiply, self, other)
        if r is not None:
            return r
    return _mul_general(self, other)


_div_general = laid_out(aten.div.Tensor, binary("div.Tensor", _true_divide))


@impl(aten.div.Tensor, CPU)
def div(self: Any, other: Any) -> Tensor:
    if type(self) is Tensor or isinstance(self, Tensor):
        r = _fast(_true_divide, self, other)
        if r is not None:
            return r
    return _div_general(self, other)


for _k in (add, sub, mul, div):  # their slow paths lay the result out themselves
    _k._lays_out = True  # type: ignore[attr-defined]
impl(aten.mul.Scalar, CPU, binary("mul.Scalar", _multiply))
impl(aten.div.Scalar, CPU, binary("div.Scalar", _true_divide))


def _trunc_divide(a: Any, b: Any) -> Any:
    """Integer division rounding toward zero (floats: trunc of the true quotient)."""
    dt = a.dtype if type(a) is _nd else _asarray(b).dtype
    if dt.kind == "f" or dt.kind == "c":
        return np.trunc(np.true_divide(a, b))
    q = np.floor_divide(a, b)
    fix = np.not_equal(np.remainder(a, b), 0) & (np.less(a, 0) != np.less(b, 0))
    return q + fix.astype(q.dtype) if isinstance(q, _nd) else q + int(fix)


_ROUNDING = {"trunc": _trunc_divide, "floor": np.floor_divide}


def check_rounding_mode(name: str, rounding_mode: Any) -> None:
    """div's rounding_mode is None, 'trunc' or 'floor' (shared with the Meta rule)."""
    if rounding_mode is not None and rounding_mode not in _ROUNDING:
        raise RuntimeError(
            f"{name}: div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
            f"found '{rounding_mode}'"
        )


def _div_mode(name: str) -> Callable[..., Tensor]:
    info = POINTWISE[name]

    def kernel(self: Any, other: Any, *, rounding_mode: str | None) -> Tensor:
        check_rounding_mode(name, rounding_mode)
        if rounding_mode is None:
            return _div_general(self, other)
        cdt, rdt = pointwise_dtypes(name, info, (self, other))
        cnp = cdt.np
        a, b = arg(self, cnp), arg(other, cnp)
        _check_int_divisor(name, cnp, a, b)
        try:
            r = quiet(_ROUNDING[rounding_mode], a, b)
        except ValueError:
            broadcast_error(name, self, other)
            raise
        return result(r, rdt.np)

    return kernel


impl(aten.div.Tensor_mode, CPU, _div_mode("div.Tensor_mode"))
impl(aten.div.Scalar_mode, CPU, _div_mode("div.Scalar_mode"))

_floor_divide = binary("floor_divide.default", np.floor_divide, int_divide=True)
impl(aten.floor_divide.default, CPU, _floor_divide)

# --------------------------------------------------------------------------- in place, fast


def _inplace(
    name: str,
    fn: Callable[..., Any],
    functional: Callable[..., Tensor],
    int_divide: bool = False,
) -> Callable[..., Tensor]:
    """``self op= other`` written straight into ``self`` with ``out=`` (no temporary)."""
    info = POINTWISE[name]

    def kernel(self: Tensor, other: Any, **kwargs: Any) -> Tensor:
        if isinstance(self, Tensor) and _inplace_fast(fn, self, other, kwargs):
            return self
        if not isinstance(self, Tensor):
            shape = list(getattr(other, "shape", ()))
            raise RuntimeError(
                f"{name}: output with shape [] doesn't match the broadcast shape {shape}: an "
                "in-place op needs a tensor to write to"
            )
        if kwargs.get("alpha", 1) != 1:
            _write(name, self, functional(self, other, **kwargs))
            return self
        dst = data(self)
        cdt, _ = pointwise_dtypes(name, info, (self, other), kwargs)
        if cdt.category > self.dtype.category:
            raise RuntimeError(
                f"{name}: result type {cdt._short} can't be cast to the desired output type "
                f"{self.dtype._short}; compute out of place and cast"
            )
        a = dst if dst.dtype is cdt.np else dst.astype(cdt.np)
        b = arg(other, cdt.np)
        if int_divide:
            _check_int_divisor(name, cdt.np, a, b)
        try:
            quiet(lambda: fn(a, b, out=dst, casting="unsafe"))
        except ValueError:
            shape = broadcast_shapes(tuple(self.shape), tuple(getattr(other, "shape", ())), op=name)
            raise RuntimeError(
                f"{name}: output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            ) from None
        self._bump_version()
        return self

    return kernel


def _inplace_fast(fn: Callable[..., Any], self: Tensor, other: Any, kwargs: dict[str, Any]) -> bool:
    """``self op= alpha * other`` for a float32/float64 ``self`` and a same-dtype tensor or a
    Python number (an optimizer's update, a gradient accumulation): False when the call needs
    the general path (other dtypes, shapes that don't broadcast into ``self``: its errors)."""
    a = self._edata
    dt = a.dtype
    if dt.kind != "f" or dt.itemsize < 4 or type(a) is not _nd:
        return False
    if isinstance(other, Tensor):
        b = other._edata
        if b.dtype is not dt or type(b) is not _nd:
            return False
    elif type(other) is float or type(other) is int:
        b = other
    else:
        return False
    alpha = 1
    if kwargs:
        if len(kwargs) != 1 or "alpha" not in kwargs:
            return False
        alpha = kwargs["alpha"]
        if type(alpha) is not float and type(alpha) is not int:
            return False
    token = ERRSTATE.set(IGNORE)
    try:
        if alpha != 1:
            b = _multiply(b, alpha)
        fn(a, b, out=a)
    except ValueError:  # the shapes don't fit: nothing was written; the general path raises
        return False
    finally:
        ERRSTATE.reset(token)
    self._bump_version()
    return True


def _write(name: str, dst: Tensor, r: Tensor) -> None:
    check_write(dst, r, name, False)
    np.copyto(dst._edata, r._edata, casting="unsafe")
    dst._bump_version()


impl(aten.add_.Tensor, CPU, _inplace("add_.Tensor", _add, add))
impl(aten.sub_.Tensor, CPU, _inplace("sub_.Tensor", _subtract, sub))
impl(aten.mul_.Tensor, CPU, _inplace("mul_.Tensor", _multiply, mul))
impl(aten.div_.Tensor, CPU, _inplace("div_.Tensor", _true_divide, div))
impl(aten.floor_divide_.Tensor, CPU,
     _inplace("floor_divide_.Tensor", np.floor_divide, _floor_divide, int_divide=True))  # fmt: skip

# --------------------------------------------------------------------------- other binary ops

for _n, _fn in (
    ("floor_divide.Scalar", np.floor_divide),
    ("remainder.Tensor", np.remainder),
    ("remainder.Scalar", np.remainder),
    ("remainder.Scalar_Tensor", np.remainder),
    ("fmod.Tensor", np.fmod),
    ("fmod.Scalar", np.fmod),
):
    _packet, _, _overload = _n.partition(".")
    impl(getattr(getattr(aten, _packet), _overload), CPU, binary(_n, _fn, int_divide=True))
impl(aten.maximum.default, CPU, binary("maximum.default", np.maximum, quiet_fp=False))
impl(aten.minimum.default, CPU, binary("minimum.default", np.minimum, quiet_fp=False))
impl(aten.atan2.default, CPU, binary("atan2.default", np.arctan2))


def _logaddexp(a: Any, b: Any) -> Any:
    """``log(exp(a) + exp(b))`` without overflow; complex operands by the larger real part."""
    if np.result_type(a, b).kind != "c":
        return np.logaddexp(a, b)
    a, b = np.broadcast_arrays(_asarray(a), _asarray(b))
    big = np.where(a.real >= b.real, a, b)
    small = np.where(a.real >= b.real, b, a)
    return big + np.log1p(np.exp(small - big))


def _heaviside(a: Any, values: Any) -> Any:
    """0 below zero, 1 above (also for NaN: 0, as PyTorch), ``values`` at zero."""
    dt = a.dtype if type(a) is _nd else _asarray(values).dtype
    return np.where(np.equal(a, 0), values, np.greater(a, 0)).astype(dt)


for _n, _fn in (
    ("hypot", np.hypot), ("logaddexp", _logaddexp), ("logaddexp2", np.logaddexp2),
    ("nextafter", np.nextafter), ("heaviside", _heaviside), ("gcd", np.gcd), ("lcm", np.lcm),
    ("fmax", np.fmax), ("fmin", np.fmin),
):  # fmt: skip
    impl(getattr(aten, _n).default, CPU, binary(f"{_n}.default", _fn))
impl(aten.copysign.Tensor, CPU, binary("copysign.Tensor", np.copysign))
impl(aten.copysign.Scalar, CPU, binary("copysign.Scalar", np.copysign))


def _power(a: Any, b: Any) -> Any:
    """``a ** b``; integers to negative powers give PyTorch's results (1, ±1 or 0), not errors."""
    dt = a.dtype if type(a) is _nd else (b.dtype if type(b) is _nd else np.result_type(a, b))
    if dt.kind not in "iu" or not np.any(np.less(b, 0)):
        return np.power(a, b)
    neg = np.less(b, 0)
    r = np.power(a, np.where(neg, 0, b).astype(dt))
    odd = np.not_equal(np.remainder(b, 2), 0)
    special = np.where(np.equal(a, 1), 1, np.where(np.equal(a, -1), np.where(odd, -1, 1), 0))
    return np.where(neg, special, r).astype(dt)


def _power_scalar(a: Any, b: Any) -> Any:
    """``a ** b`` for a Python exponent: ``-0.5`` is ``1 / sqrt(a)``, as PyTorch computes
    it, so ``(-0.0) ** -0.5`` is ``-inf`` (``np.power`` gives ``inf``)."""
    if b == -0.5 and type(a) is _nd and a.dtype.kind in "fc":
        return np.reciprocal(np.sqrt(a))
    return _power(a, b)


for _n in ("Tensor_Tensor", "Scalar"):
    impl(getattr(aten.pow, _n), CPU, binary(f"pow.{_n}", _power))
impl(aten.pow.Tensor_Scalar, CPU, binary("pow.Tensor_Scalar", _power_scalar))

for _n, _fn in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                ("gt", np.greater), ("ge", np.greater_equal)):  # fmt: skip
    impl(getattr(aten, _n).Tensor, CPU, binary(f"{_n}.Tensor", _fn, quiet_fp=False))
    impl(getattr(aten, _n).Scalar, CPU, binary(f"{_n}.Scalar", _fn, quiet_fp=False))


def _logical(name: str, fn: Callable[[Any, Any], Any]) -> Callable[..., Tensor]:
    """Logical ops read each operand as bool in its own dtype: no promotion needed."""
    info = POINTWISE[name]

    def kernel(self: Any, other: Any) -> Tensor:
        pointwise_dtypes(name, info, (self, other))
        try:
            r = fn(data(self), data(other))
        except ValueError:
            broadcast_error(name, self, other)
            raise
        return result(r, np.dtype(np.bool_))

    return kernel


for _n, _fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                ("logical_xor", np.logical_xor)):  # fmt: skip
    impl(getattr(aten, _n).default, CPU, _logical(f"{_n}.default", _fn))

for _n, _fn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                ("bitwise_xor", np.bitwise_xor)):  # fmt: skip
    for _o in ("Tensor", "Scalar", "Scalar_Tensor"):
        impl(getattr(getattr(aten, _n), _o), CPU, binary(f"{_n}.{_o}", _fn, quiet_fp=False))
for _n, _fn in (("bitwise_left_shift", np.left_shift), ("bitwise_right_shift", np.right_shift)):
    for _o in ("Tensor", "Tensor_Scalar", "Scalar_Tensor"):
        impl(getattr(getattr(aten, _n), _o), CPU, binary(f"{_n}.{_o}", _fn, quiet_fp=False))
for _n, _fn in (("__lshift__", np.left_shift), ("__rshift__", np.right_shift)):
    for _o in ("Tensor", "Scalar"):
        impl(getattr(getattr(aten, _n), _o), CPU, binary(f"{_n}.{_o}", _fn, quiet_fp=False))

# --------------------------------------------------------------------------- selection


def _where(name: str) -> Callable[..., Tensor]:
    info = POINTWISE[name]

    def kernel(condition: Any, self: Any, other: Any) -> Tensor:
        cdt, rdt = pointwise_dtypes(name, info, (condition, self, other))
        cnp = cdt.np
        a, b = arg(self, cnp), arg(other, cnp)
        c = data(condition)
        try:
            r = np.where(c, a, b)
        except ValueError:
            broadcast_error(name, condition, self, other)
            raise
        return result(r, rdt.np)

    return kernel


for _o in ("self", "ScalarOther", "ScalarSelf", "Scalar"):
    impl(getattr(aten.where, _o), CPU, _where(f"where.{_o}"))


def _clamp(name: str) -> Callable[..., Tensor]:
    info = POINTWISE[name]

    def kernel(self: Any, min: Any = None, max: Any = None) -> Tensor:
        cdt, rdt = pointwise_dtypes(name, info, (self, min, max))
        cnp = cdt.np
        r = arg(self, cnp)
        try:
            if min is not None:
                r = np.maximum(r, arg(min, cnp))
            if max is not None:
                r = np.minimum(r, arg(max, cnp))
        except ValueError:
            broadcast_error(name, self, min, max)
            raise
        if r is data(self):
            r = r.copy()
        return result(r, rdt.np)

    return kernel


impl(aten.clamp.default, CPU, _clamp("clamp.default"))
impl(aten.clamp.Tensor, CPU, _clamp("clamp.Tensor"))
impl(aten.clamp_min.default, CPU, binary("clamp_min.default", np.maximum, quiet_fp=False))
impl(aten.clamp_min.Tensor, CPU, binary("clamp_min.Tensor", np.maximum, quiet_fp=False))
impl(aten.clamp_max.default, CPU, binary("clamp_max.default", np.minimum, quiet_fp=False))
impl(aten.clamp_max.Tensor, CPU, binary("clamp_max.Tensor", np.minimum, quiet_fp=False))

# --------------------------------------------------------------------------- ternary


def _lerp_values(a: Any, b: Any, w: Any) -> Any:
    """PyTorch's two-sided formula: exact at both ends, weight < 0.5 from ``a``, else from ``b``.
    A single weight picks its side once, in the compute dtype (``1 - w`` in float32 for
    float32, as PyTorch; a float64 ``1 - w`` made the whole side float64)."""
    diff = np.subtract(b, a)
    if np.ndim(w) == 0:
        w = np.asarray(w, dtype=diff.dtype)
        if abs(w) < 0.5:
            out = np.multiply(diff, w)
            if type(out) is np.ndarray and out.shape == np.shape(a):
                return np.add(a, out, out=out)
            return np.add(a, out)
        out = np.multiply(diff, np.subtract(1, w, dtype=diff.dtype))
        if type(out) is np.ndarray and out.shape == np.shape(b):
            return np.subtract(b, out, out=out)
        return np.subtract(b, out)
    small = np.less(np.abs(w), 0.5)
    return np.where(small, a + w * diff, b - diff * (1 - np.asarray(w)))


def _lerp(name: str) -> Callable[..., Tensor]:
    info = POINTWISE[name]

    def kernel(self: Any, end: Any, weight: Any) -> Tensor:
        cdt, rdt = pointwise_dtypes(name, info, (self, end, weight))
        cnp = _opmath(cdt.np)
        a, b, w = arg(self, cnp), arg(end, cnp), arg(weight, cnp)
        try:
            r = quiet(_lerp_values, a, b, w)
        except ValueError:
            broadcast_error(name, self, end, weight)
            raise
        return result(r, rdt.np)

    return kernel


impl(aten.lerp.Scalar, CPU, _lerp("lerp.Scalar"))
impl(aten.lerp.Tensor, CPU, _lerp("lerp.Tensor"))


def _addc(name: str, combine: Callable[[Any, Any], Any]) -> Callable[..., Tensor]:
    info = POINTWISE[name]

    def kernel(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        cdt, rdt = pointwise_dtypes(name, info, (self, tensor1, tensor2), {"value": value})
        # float16 computes in float32 and rounds once, as PyTorch's opmath does
        cnp = _opmath(cdt.np)
        a, b, c = arg(self, cnp), arg(tensor1, cnp), arg(tensor2, cnp)
        v = arg(value, cnp)

        def compute() -> Any:  # one temporary, reused (was three passes with three)
            t = combine(b, c)
            if type(t) is not np.ndarray:
                return np.add(a, np.multiply(v, t) if value != 1 else t)
            if value != 1:
                np.multiply(t, v, out=t, casting="unsafe")
            return np.add(a, t, out=t, casting="unsafe") if t.shape == np.shape(a) else np.add(a, t)

        try:
            r = quiet(compute)
        except ValueError:
            broadcast_error(name, self, tensor1, tensor2)
            raise
        return result(r, rdt.np)

    return kernel


impl(aten.addcmul.default, CPU, _addc("addcmul.default", np.multiply))
impl(aten.addcdiv.default, CPU, _addc("addcdiv.default", np.true_divide))

# --------------------------------------------------------------------------- unary


_ERF: list[Any] = []  # erf_kernel, imported on first use (NOTE [numba on first use])


def _compiled(name: str, x: np.ndarray) -> np.ndarray:
    """``erf_kernel.<name>`` of float32/float64 ``x``, in its dtype and shape."""
    if not _ERF:
        from ember.backends.cpu import erf_kernel  # NOTE [numba on first use]

        _ERF.append(erf_kernel)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(flat.size, x.dtype)
    getattr(_ERF[0], name)(flat, out)
    return out.reshape(x.shape)


def _erf(x: Any) -> Any:
    """erf to float64 precision: the compiled C library's erf for float32/float64 values,
    else the series below."""
    x = np.asarray(x)
    if x.dtype == np.float32 or x.dtype == np.float64:
        return _compiled("erf", x)
    return _erf_series(x)


def _erf_series(x: Any) -> Any:
    """erf to float64 precision: Taylor series below |x| = 3, continued fraction above."""
    x = np.asarray(x)
    dt = x.dtype
    z = np.abs(x.astype(np.float64))
    small = np.minimum(z, 3.0)
    term = small.copy()
    total = small.copy()
    sq = small * small
    for n in range(1, 80):  # loop over series terms, not elements
        term = term * -sq / n
        total += term / (2 * n + 1)
    series = total * (2.0 / math.sqrt(math.pi))
    big = np.maximum(z, 3.0)
    f = big.copy()
    for k in range(60, 0, -1):
        f = big + (k / 2.0) / f
    tail = 1.0 - np.exp(-big * big) / (math.sqrt(math.pi) * f)
    r = np.where(z < 3.0, series, tail)
    r = np.where(np.isnan(z), np.nan, r)
    return np.copysign(r, x).astype(dt)


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + np.exp(-x))


def _in_opmath(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Compute float16 (and bfloat16) in float32 (PyTorch's opmath), then round back."""

    def run(x: Any) -> Any:
        dt = x.dtype
        if dt in _HALF:
            return fn(x.astype(np.float32)).astype(dt)
        return fn(x)

    return run


def _exact_or(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Rounding functions are the identity (a copy) on integers."""

    def run(x: Any) -> Any:
        return x.copy() if x.dtype.kind in "iub" else fn(x)

    return run


def _sign(x: Any) -> Any:
    if x.dtype.kind == "b":
        return x.copy()
    r = _asarray(np.sign(x))
    return np.nan_to_num(r, copy=False, nan=0) if x.dtype in _INEXACT else r


def _isnan(x: Any) -> Any:
    return np.isnan(x) if x.dtype in _INEXACT else np.zeros(x.shape, np.bool_)


def _isinf(x: Any) -> Any:
    return np.isinf(x) if x.dtype in _INEXACT else np.zeros(x.shape, np.bool_)


def _isfinite(x: Any) -> Any:
    return np.isfinite(x) if x.dtype in _INEXACT else np.ones(x.shape, np.bool_)


def _square(x: Any) -> Any:
    return np.multiply(x, x)


def _frac(x: Any) -> Any:
    return np.subtract(x, np.trunc(x))


def _sgn(x: Any) -> Any:
    """``sign`` of a real tensor, ``z / |z|`` (0 at 0) of a complex one."""
    if x.dtype.kind != "c":
        return _sign(x)
    a = np.abs(x)
    zero = a == 0
    return np.where(zero, 0, x / np.where(zero, 1, a)).astype(x.dtype)


def _signbit(x: Any) -> Any:
    if x.dtype.kind == "b":
        return np.zeros(x.shape, np.bool_)
    return np.signbit(x) if x.dtype.kind == "f" else np.less(x, 0)


def _angle(x: Any) -> Any:
    """The argument of a complex number; of a real one, pi below 0, 0 else, NaN kept."""
    if x.dtype.kind == "c":
        return np.angle(x)
    return np.where(np.isnan(x), x, np.where(np.less(x, 0), x.dtype.type(math.pi), 0)).astype(
        x.dtype
    )


def _isneginf(x: Any) -> Any:
    return np.isneginf(x) if x.dtype.kind == "f" else np.zeros(x.shape, np.bool_)


def _isposinf(x: Any) -> Any:
    return np.isposinf(x) if x.dtype.kind == "f" else np.zeros(x.shape, np.bool_)


_DEG = math.pi / 180


_UNARY: dict[str, tuple[Callable[[Any], Any], bool]] = {
    "neg": (np.negative, False), "abs": (np.abs, False), "exp": (np.exp, True),
    "expm1": (np.expm1, True), "log": (np.log, True), "log2": (np.log2, True),
    "log1p": (np.log1p, True), "sqrt": (np.sqrt, True),
    "rsqrt": (_in_opmath(lambda x: 1 / np.sqrt(x)), True),
    "sin": (np.sin, True), "cos": (np.cos, True), "tan": (np.tan, True), "tanh": (np.tanh, True),
    "sigmoid": (_in_opmath(_sigmoid), True), "reciprocal": (np.reciprocal, True),
    "erf": (_in_opmath(_erf), True), "relu": (lambda x: np.maximum(x, 0), False),
    "silu": (_in_opmath(lambda x: x * _sigmoid(x)), True),
    "floor": (_exact_or(np.floor), False), "ceil": (_exact_or(np.ceil), False),
    "round": (_exact_or(np.rint), False), "trunc": (_exact_or(np.trunc), False),
    "sign": (_sign, False), "square": (_square, True), "isnan": (_isnan, False),
    "isinf": (_isinf, False), "isfinite": (_isfinite, False),
    "logical_not": (np.logical_not, False), "bitwise_not": (np.invert, False),
    "asin": (np.arcsin, True), "acos": (np.arccos, True), "atan": (np.arctan, True),
    "sinh": (np.sinh, True), "cosh": (np.cosh, True), "asinh": (np.arcsinh, True),
    "acosh": (np.arccosh, True), "atanh": (np.arctanh, True), "log10": (np.log10, True),
    "frac": (_frac, True), "sgn": (_sgn, True), "signbit": (_signbit, False),
    "deg2rad": (_in_opmath(lambda x: np.multiply(x, _DEG)), True),
    "rad2deg": (_in_opmath(lambda x: np.multiply(x, 1 / _DEG)), True),
    "angle": (_angle, True), "isneginf": (_isneginf, False), "isposinf": (_isposinf, False),
}  # fmt: skip

for _n, (_fn, _q) in _UNARY.items():
    impl(getattr(aten, _n).default, CPU, unary(f"{_n}.default", _fn, quiet_fp=_q))


def _conjugate(x: Any) -> Any:
    """The complex conjugate; a copy of a real array (NumPy's turns bool into int)."""
    return np.conjugate(x) if x.dtype.kind == "c" else x.copy()


impl(aten._conj_physical.default, CPU, unary("_conj_physical.default", _conjugate, quiet_fp=False))


_SQRT_2, _SQRT_2_OVER_PI = math.sqrt(2.0), math.sqrt(2.0 / math.pi)


def check_gelu(name: str, approximate: str) -> None:
    """gelu's approximate is 'none' or 'tanh' (shared with the Meta rule)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(
            f"{name}: approximate argument must be either none or tanh, got '{approximate}'"
        )


@impl(aten.abs_.default, CPU)
def abs_(self: Tensor) -> Tensor:
    pointwise_dtypes("abs_.default", POINTWISE["abs_.default"], (self,))
    dst = data(self)
    np.abs(dst, out=dst)
    self._bump_version()
    return self


@impl(aten.gelu.default, CPU)
def gelu(self: Any, *, approximate: str = "none") -> Tensor:
    check_gelu("gelu.default", approximate)
    cdt, rdt = pointwise_dtypes("gelu.default", POINTWISE["gelu.default"], (self,))
    x = arg(self, _opmath(cdt.np))

    def run() -> Any:
        if approximate == "tanh":
            return 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
        if type(x) is _nd and (x.dtype == np.float32 or x.dtype == np.float64):
            return _compiled("gelu", x)  # one pass
        return 0.5 * x * (1 + _erf(x / _SQRT_2))

    return result(quiet(run), rdt.np)


@impl(aten.round.decimals, CPU)
def round_decimals(self: Any, *, decimals: int) -> Tensor:
    cdt, rdt = pointwise_dtypes("round.decimals", POINTWISE["round.decimals"], (self,))
    x = arg(self, _opmath(cdt.np))
    return result(quiet(np.round, x, decimals), rdt.np)


@impl(aten.nan_to_num.default, CPU)
def nan_to_num(
    self: Any, nan: float | None = None, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    cdt, rdt = pointwise_dtypes("nan_to_num.default", POINTWISE["nan_to_num.default"], (self,))
    x = arg(self, cdt.np)
    if x.dtype.kind not in "fc":
        return wrap(x.copy())
    r = np.nan_to_num(x, copy=True, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)
    return result(r, rdt.np)


@impl(aten.positive.default, "CompositeImplicitAutograd")
def positive(self: Tensor) -> Tensor:
    """``+x``: ``x`` itself (bool tensors refuse, as in PyTorch)."""
    POSITIVE_CHECK("positive.default", self.dtype, (self,), {})
    return self


@impl(aten.conj_physical.default, "CompositeImplicitAutograd")
def conj_physical(self: Tensor) -> Tensor:
    """The complex conjugate as a new tensor; a real tensor is returned itself, as in PyTorch.

    >>> ember.conj_physical(ember.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    return aten._conj_physical.default(self) if self.dtype.is_complex else self


@impl(aten._local_scalar_dense.default, CPU)
def _local_scalar_dense(self: Tensor) -> Any:
    """The first element as a Python number (``item()`` checks that there is one)."""
    data = self._edata
    if data.size == 0:
        raise RuntimeError("_local_scalar_dense: cannot read a value of a Tensor with no elements")
    return data.reshape(-1)[0].item()


@impl(aten.equal.default, CPU)
def equal(self: Tensor, other: Tensor) -> bool:
    """True if both have one shape and equal elements (after promotion; NaN is unequal)."""
    a, b = self._edata, other._edata
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _isin(elements: Any, test_elements: Any, assume_unique: bool, invert: bool) -> Tensor:
    cnp = isin_dtype(elements, test_elements).np
    a, b = arg(elements, cnp), arg(test_elements, cnp)
    r = np.isin(_asarray(a, cnp), _asarray(b, cnp), assume_unique=assume_unique, invert=invert)
    return wrap(_asarray(r, np.bool_))


@impl(aten.isin.Tensor_Tensor, CPU)
def isin(
    elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
) -> Tensor:
    """Whether each element of ``elements`` is in ``test_elements`` (NaN never is)."""
    return _isin(elements, test_elements, assume_unique, invert)


@impl(aten.isin.Tensor_Scalar, CPU)
def isin_tensor_scalar(
    elements: Any, test_element: Any, *, assume_unique: bool = False, invert: bool = False
) -> Tensor:
    return _isin(elements, test_element, assume_unique, invert)


@impl(aten.isin.Scalar_Tensor, CPU)
def isin_scalar_tensor(
    element: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
) -> Tensor:
    return _isin(element, test_elements, assume_unique, invert)


@impl(aten.frexp.Tensor, CPU)
def frexp(self: Tensor) -> Any:
    """``self == mantissa * 2 ** exponent`` with ``|mantissa|`` in [0.5, 1) (0, inf and NaN
    keep themselves, with exponent 0); the exponent is int32."""
    check_frexp(self.dtype)
    a = self._edata
    wide = a.astype(np.float32) if a.dtype.itemsize < 4 else a  # (bfloat16: no NumPy frexp)
    m, e = np.frexp(wide)
    return frexp_t((wrap(np.asarray(m, dtype=a.dtype)), wrap(np.asarray(e, dtype=np.int32))))
