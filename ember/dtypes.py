"""dtypes and PyTorch's type promotion rules (not NumPy's).

# NOTE [type promotion]
Operands fall in three priority classes: tensors with dimensions, 0-dim tensors, and Python
scalars ("wrapped numbers"). Each class is promoted within itself; then a lower class can
only change the result if it belongs to a higher *category* (bool < integer < floating <
complex). Python floats and complexes take the default dtype (float32 / complex64), Python
ints int64, Python bools bool. So ``int8 tensor + 1000`` stays int8, ``int8 tensor + 1.5`` is
float32, and ``float16 tensor + float64 0-dim tensor`` stays float16.
"""

from __future__ import annotations

import builtins
import sys
import threading
from collections.abc import Callable
from importlib.util import find_spec as _find_spec
from typing import Any

import numpy as np

__all__ = [
    "dtype",
    "promote_types",
    "result_type",
    "can_cast",
    "get_default_dtype",
    "set_default_dtype",
]

BOOL, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, e.g. ``ember.float32``.

    >>> ember.float32.is_floating_point
    True
    """

    __slots__ = ("name", "np", "itemsize", "category", "is_signed", "_short")

    def __init__(self, name: str, np_dtype: Any, category: int, short: str) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_signed = name not in ("bool", "uint8", "uint16", "uint32", "uint64")
        self._short = short  # PyTorch's C++ scalar-type name, used in error messages

    @property
    def is_floating_point(self) -> builtins.bool:
        return self.category == FLOATING

    @property
    def is_complex(self) -> builtins.bool:
        return self.category == COMPLEX

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        if self.name == "bfloat16":
            return complex64
        return {float16: complex64, float32: complex64, float64: complex128}.get(self, self)

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self) -> str:
        return self.name


bool_ = dtype("bool", np.bool_, BOOL, "Bool")
uint8 = dtype("uint8", np.uint8, INTEGRAL, "Byte")
int8 = dtype("int8", np.int8, INTEGRAL, "Char")
int16 = dtype("int16", np.int16, INTEGRAL, "Short")
int32 = dtype("int32", np.int32, INTEGRAL, "Int")
int64 = dtype("int64", np.int64, INTEGRAL, "Long")
float16 = dtype("float16", np.float16, FLOATING, "Half")
float32 = dtype("float32", np.float32, FLOATING, "Float")
float64 = dtype("float64", np.float64, FLOATING, "Double")
complex64 = dtype("complex64", np.complex64, COMPLEX, "ComplexFloat")
complex128 = dtype("complex128", np.complex128, COMPLEX, "ComplexDouble")

# NOTE [shell unsigned dtypes]
# PyTorch 2.13's uint16, uint32 and uint64 are "shell" dtypes: tensors of them can be made,
# copied, converted, compared for equality, printed and moved to and from NumPy, and only
# a few ops compute on them (``mul``, the bitwise and/or/xor, ``sum``/``prod``/``cumsum``,
# ``sort``, indexing, ``cat``...); the rest raise "... not implemented for 'UInt16'". Their
# promotion with any other integral, bool or complex dtype is refused ("Promotion for uint16,
# uint32, uint64 types is not supported"); with a floating one it gives the floating one.
# ember has them with the same rules: they are not in ``ALL_DTYPES`` (the dtypes every op
# is tested in), the pointwise ops PyTorch refuses them in list them as unsupported
# (``SHELL_POINTWISE`` in ``ember/ops/native/promotion.py``), and ``tests/test_uint_dtypes.py``
# checks each op it covers against PyTorch.
uint16 = dtype("uint16", np.uint16, INTEGRAL, "UInt16")
uint32 = dtype("uint32", np.uint32, INTEGRAL, "UInt32")
uint64 = dtype("uint64", np.uint64, INTEGRAL, "UInt64")
SHELL_DTYPES: tuple[dtype, ...] = (uint16, uint32, uint64)

ALL_DTYPES: tuple[dtype, ...] = (
    bool_, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128,
)  # fmt: skip
FLOATING_DTYPES = (float16, float32, float64)
INTEGRAL_DTYPES = (uint8, int8, int16, int32, int64)

# NOTE [bfloat16]
# NumPy has no bfloat16; the ``ml_dtypes`` package adds one, so ``ember.bfloat16`` exists only
# when it is installed (``pip install 'ember[bf16]'``), and names the extra when it is not.
# It is a floating dtype like the others, with PyTorch's one special promotion (bfloat16 with
# float16 is float32). It is not in ``ALL_DTYPES``, the dtypes every op is tested in: ops
# compute it through ml_dtypes' NumPy loops, creation, casts, arithmetic, reductions (which
# accumulate in float32, as PyTorch's) and printing are checked against PyTorch in
# ``tests/test_fidelity.py``.
#
# ml_dtypes loads on first use, not with ember: its 0.7 release takes about 0.6 s to import
# (NumPy registers its ufunc loops one by one, each against the list so far), more than
# ember's whole import. ``bfloat16`` exists from the start when the package is installed,
# as a ``_PendingDtype`` whose first ``.np`` read imports ml_dtypes, fills the ndarray-dtype
# tables below (``HALF_NP``, ``FLOATING_NP``, ``INEXACT_NP``, ``FROM_NUMPY``) and the
# tables kernels registered with ``on_bfloat16``, and turns the object into a plain
# ``dtype`` (the same object: ``t.dtype is ember.bfloat16`` holds). No bfloat16 ndarray
# can exist before that read, so no table misses one; a table built at import from
# ``d.np`` for every dtype would load the package then (``tests/test_bfloat16_on_first_use.py``
# checks that ``import ember`` does not).
HAS_BFLOAT16 = _find_spec("ml_dtypes") is not None

#: what to install for ``ember.bfloat16``
BFLOAT16_MISSING = (
    "ember.bfloat16 needs the optional ml_dtypes package (NumPy has no bfloat16): "
    "pip install 'ember[bf16]' (or pip install ml_dtypes)"
)


_NP_SLOT: Any = dtype.__dict__["np"]  # the slot's descriptor, which the subclass hides


class _PendingDtype(dtype):
    """``bfloat16`` before its ndarray dtype is needed (NOTE [bfloat16])."""

    __slots__ = ()

    def __init__(self, name: str, category: int, short: str, itemsize: int) -> None:
        for slot, value in (("name", name), ("itemsize", itemsize), ("category", category),
                            ("is_signed", True), ("_short", short)):  # fmt: skip
            getattr(dtype, slot).__set__(self, value)

    @property  # type: ignore[override]
    def np(self) -> Any:
        load_ml_dtypes()
        return _NP_SLOT.__get__(self)


_LOAD_LOCK = threading.RLock()
_ON_LOAD: list[Callable[[np.dtype[Any]], None]] = []
_LOAD_STATE = [0]  # 0: ml_dtypes not loaded by ember, 1: loading (hooks running), 2: loaded


def load_ml_dtypes() -> Any:
    """The ``ml_dtypes`` module, imported on first use with bfloat16's tables filled (NOTE
    [bfloat16]); ImportError naming the extra when it is not installed."""
    if _LOAD_STATE[0] == 2:
        return sys.modules["ml_dtypes"]
    if not HAS_BFLOAT16:
        raise ImportError(BFLOAT16_MISSING)
    with _LOAD_LOCK:  # a hook's own .np read re-enters and finds the state at 1
        import ml_dtypes  # loaded on first use: NOTE [bfloat16] (0.6 s to import)

        if _LOAD_STATE[0] == 0:
            _LOAD_STATE[0] = 1  # (a failure below leaves it there: the next read raises too)
            d = np.dtype(ml_dtypes.bfloat16)
            _NP_SLOT.__set__(bfloat16, d)
            for table in (HALF_NP, FLOATING_NP, INEXACT_NP):
                table.add(d)
            FROM_NUMPY[d] = bfloat16
            for hook in _ON_LOAD:
                hook(d)
            bfloat16.__class__ = dtype  # a plain dtype from now on: .np is its slot
            _LOAD_STATE[0] = 2
    return ml_dtypes


def on_bfloat16(hook: Callable[[np.dtype[Any]], None]) -> None:
    """Call ``hook(ndarray dtype)`` once bfloat16's ndarray dtype exists: now if it does,
    else when ml_dtypes loads (NOTE [bfloat16]). For tables keyed by ndarray dtypes."""
    if not HAS_BFLOAT16:
        return
    with _LOAD_LOCK:
        if _LOAD_STATE[0] == 0:
            _ON_LOAD.append(hook)
            return
    hook(bfloat16.np)


if HAS_BFLOAT16:
    bfloat16: dtype = _PendingDtype("bfloat16", FLOATING, "BFloat16", 2)
    OPTIONAL_DTYPES: tuple[dtype, ...] = (bfloat16,)
else:
    OPTIONAL_DTYPES = ()
#: every dtype this process has (``ALL_DTYPES``, the shell unsigned ones and, with
#: ml_dtypes, bfloat16)
KNOWN_DTYPES = ALL_DTYPES + SHELL_DTYPES + OPTIONAL_DTYPES
#: ndarray dtypes of the 16-bit floats, which PyTorch computes in float32 and rounds back
#: (its "opmath"); bfloat16's ndarrays have kind ``V``, not ``f``, so kernels test this set
HALF_NP: set[np.dtype[Any]] = {float16.np}
#: ndarray dtypes of every floating dtype (what ``kind == "f"`` says, bfloat16 included)
FLOATING_NP: set[np.dtype[Any]] = {d.np for d in ALL_DTYPES if d.category == FLOATING}
#: ndarray dtypes of the floating and complex dtypes
INEXACT_NP: set[np.dtype[Any]] = FLOATING_NP | {complex64.np, complex128.np}

#: ndarray dtype -> ember dtype; the hot path's only conversion.
FROM_NUMPY: dict[np.dtype, dtype] = {d.np: d for d in ALL_DTYPES + SHELL_DTYPES}  # bf16: on load
#: aliases PyTorch exposes (``ember.float`` is float32, ``ember.long`` int64, ...)
ALIASES = {
    "half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
    "long": int64, "cfloat": complex64, "cdouble": complex128, "bool": bool_,
}  # fmt: skip


def from_numpy_dtype(np_dtype: Any) -> dtype:
    """The ember dtype of a NumPy dtype; TypeError for ones ember lacks (e.g. uint16)."""
    try:
        return FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        if HAS_BFLOAT16 and np.dtype(np_dtype).name == "bfloat16":  # the user's ml_dtypes array
            load_ml_dtypes()  # NOTE [bfloat16]: before ember needed it itself
            return FROM_NUMPY[np.dtype(np_dtype)]
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype)}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint64, uint32, uint16, uint8, and bool."
        ) from None


# --------------------------------------------------------------------------- default dtype

_default: list[dtype] = [float32]


def get_default_dtype() -> dtype:
    """The dtype Python floats become (float32 unless changed).

    >>> ember.get_default_dtype()
    ember.float32
    """
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the dtype Python floats become; only float32 and float64 (and float16) are allowed.

    >>> ember.set_default_dtype(ember.float64); ember.set_default_dtype(ember.float32)
    """
    if not isinstance(d, dtype) or d.category != FLOATING:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def default_complex() -> dtype:
    return complex128 if _default[0] is float64 else complex64


# --------------------------------------------------------------------------- promotion


def _promote_uncached(a: dtype, b: dtype) -> dtype | None:
    """The promoted dtype, or None where PyTorch refuses the pair (NOTE [shell unsigned
    dtypes])."""
    if a in SHELL_DTYPES or b in SHELL_DTYPES:
        if a is b:
            return a
        other = b if a in SHELL_DTYPES else a
        return other if other.category == FLOATING else None
    if {a.name, b.name} == {"bfloat16", "float16"}:  # neither holds the other: PyTorch's float32
        return float32
    if a.category == b.category:
        if a.name == "bfloat16" or b.name == "bfloat16":  # the wider one (bfloat16 if both)
            return a if a.itemsize >= b.itemsize else b
        return FROM_NUMPY[np.promote_types(a.np, b.np)]
    hi, lo = (a, b) if a.category > b.category else (b, a)
    if hi.category == COMPLEX and lo.category == FLOATING:
        return complex128 if (hi is complex128 or lo is float64) else complex64
    return hi


_PROMOTE: dict[tuple[dtype, dtype], dtype] = {
    (a, b): p for a in KNOWN_DTYPES for b in KNOWN_DTYPES if (p := _promote_uncached(a, b))
}


def _refused(a: dtype, b: dtype) -> RuntimeError:
    """PyTorch's error for a pair it does not promote (NOTE [shell unsigned dtypes])."""
    return RuntimeError(
        "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
        f"{a._short} and {b._short}"
    )


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be converted to without losing category.

    >>> ember.promote_types(ember.int32, ember.float16)
    ember.float16
    """
    try:
        return _PROMOTE[type1, type2]
    except KeyError:
        if isinstance(type1, dtype) and isinstance(type2, dtype):
            raise _refused(type1, type2) from None
        raise TypeError(
            f"promote_types(): expected two dtypes, got {type(type1).__name__} and "
            f"{type(type2).__name__}"
        ) from None


def scalar_dtype(value: Any) -> dtype:
    """The dtype a Python scalar takes on its own (``ember.tensor(2.5).dtype``)."""
    t = type(value)
    if t is builtins.bool or isinstance(value, (builtins.bool, np.bool_)):
        return bool_
    if t is builtins.int or isinstance(value, (builtins.int, np.integer)):
        return int64
    if t is builtins.float or isinstance(value, (builtins.float, np.floating)):
        return _default[0]
    if isinstance(value, (builtins.complex, np.complexfloating)):
        return default_complex()
    raise TypeError(f"expected a Python number, got {t.__name__}")


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Let a lower-priority class change the result only when its category is higher."""
    if higher is None:
        return lower
    if lower is None or higher.category >= lower.category:
        return higher
    if lower.category == COMPLEX and higher.category == FLOATING:
        return higher.to_complex()
    if (higher in SHELL_DTYPES or lower in SHELL_DTYPES) and (higher, lower) not in _PROMOTE:
        raise _refused(higher, lower)  # PyTorch promotes the two here, and refuses
    return lower


def _promote_opt(a: dtype | None, b: dtype) -> dtype:
    return b if a is None else promote_types(a, b)


def result_type_of(operands: tuple[Any, ...] | list[Any]) -> dtype:
    """PyTorch's result dtype for tensors (anything with ``dtype``/``ndim``) and scalars."""
    dims: dtype | None = None
    zeros: dtype | None = None
    wrapped: dtype | None = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:
                dims = _promote_opt(dims, d)
            else:
                zeros = _promote_opt(zeros, d)
        elif x is not None:
            wrapped = _promote_opt(wrapped, scalar_dtype(x))
    out = _combine(dims, _combine(zeros, wrapped))
    if out is None:
        raise TypeError("result_type: expected at least one tensor or scalar operand")
    return out


def result_type(tensor1: Any, tensor2: Any) -> dtype:
    """The dtype PyTorch's promotion gives an op on these two tensors or scalars.

    >>> ember.result_type(ember.tensor([1, 2], dtype=ember.int8), 1000)
    ember.int8
    """
    return result_type_of((tensor1, tensor2))


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` in type-promoting ops:
    any cast except to a lower category (float→int, complex→float, non-bool→bool).

    >>> ember.can_cast(ember.float32, ember.int32)
    False
    """
    return from_.category <= to.category
