"""The creation ops: schemas (catalogue), and the rules every backend shares for them.

Factories (``zeros``, ``arange``, ``rand``, ...) have no tensor argument: they dispatch on
their ``device`` argument (``make_keyset_fn`` in ``ember/dispatch/dispatcher.py``), so
``device='meta'`` reaches the Meta rule. ``*_like`` and ``new_*`` ops dispatch on ``self``.
The checks below need no values, so the CPU kernels and the Meta rules both call them and
cannot disagree (``ember/backends/cpu/creation.py``, ``ember/backends/meta/creation.py``).

# NOTE [factory out=]
A factory's ``out=`` overload (``zeros.out``) has PyTorch's schema, without TensorOptions:
the out tensor gives the dtype (and device: it is the call's only tensor, so the call
dispatches on it). Each backend's kernel (``out_kernel_of``) runs the factory's own kernel
with the out tensor's dtype, then writes the result into ``out``, resizing it when the shape
differs, silently, as PyTorch's ``resize_`` in these kernels does (only ``arange`` warns, when
a non-empty ``out`` has another length). The Python keywords PyTorch's bindings accept beside
``out`` (``dtype=``, ``device=``, ``layout=``, ``requires_grad=``) are checked against it in
``ember/_bind.py``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ember import dtypes
from ember._memory_format import format_name, format_strides, result_strides
from ember._warn import warn_user
from ember.device import as_device, check_backend
from ember.dispatch.keys import DEVICE_BITS
from ember.ops.native._define import FUNCTIONAL_OF, define
from ember.ops.registry import OpOverload, define_op, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_OPTIONS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_LONG_OPTIONS = _OPTIONS.replace("dtype=None", "dtype=long")
_LIKE = f"{_OPTIONS}, MemoryFormat? memory_format=None"
_F = ("function",)
_M = ("method",)

# factories from a size
define(f"zeros(SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=_F)
define(f"ones(SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=_F)
define(f"full(SymInt[] size, Scalar fill_value, *, {_OPTIONS}) -> Tensor", variants=_F)
define(f"empty.memory_format(SymInt[] size, *, {_LIKE}) -> Tensor", variants=_F)
define(f"empty_strided(SymInt[] size, SymInt[] stride, *, {_OPTIONS}) -> Tensor", variants=_F)
define(f"scalar_tensor(Scalar s, *, {_OPTIONS}) -> Tensor", variants=_F)

# ranges and matrices
define(f"arange(Scalar end, *, {_OPTIONS}) -> Tensor", variants=_F)
define(f"arange.start(Scalar start, Scalar end, *, {_OPTIONS}) -> Tensor", variants=_F)
define(
    f"arange.start_step(Scalar start, Scalar end, Scalar step=1, *, {_OPTIONS}) -> Tensor",
    variants=_F,
)
define(f"linspace(Scalar start, Scalar end, int steps, *, {_OPTIONS}) -> Tensor", variants=_F)
define(f"eye(SymInt n, *, {_OPTIONS}) -> Tensor", variants=_F)
define(f"eye.m(SymInt n, SymInt m, *, {_OPTIONS}) -> Tensor", variants=_F)
for _name in ("tril_indices", "triu_indices"):
    define(
        f"{_name}(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor",
        variants=_F,
    )

# random factories (values from ember.random generators)
define(f"rand(SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=_F)
define(f"rand.generator(SymInt[] size, *, Generator? generator, {_OPTIONS}) -> Tensor", variants=_F)
define(f"randn(SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=_F)
define(
    f"randn.generator(SymInt[] size, *, Generator? generator, {_OPTIONS}) -> Tensor", variants=_F
)
define(f"randint(SymInt high, SymInt[] size, *, {_LONG_OPTIONS}) -> Tensor", variants=_F)
define(
    f"randint.generator(SymInt high, SymInt[] size, *, Generator? generator, {_LONG_OPTIONS}) "
    "-> Tensor",
    variants=_F,
)
define(
    f"randint.low(SymInt low, SymInt high, SymInt[] size, *, {_LONG_OPTIONS}) -> Tensor",
    variants=_F,
)
define(
    f"randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, Generator? generator, "
    f"{_LONG_OPTIONS}) -> Tensor",
    variants=_F,
)

# logarithmic ranges, permutations, normal draws of a size (issue 11)
define(f"logspace(Scalar start, Scalar end, int steps, float base=10.0, *, {_OPTIONS}) -> Tensor",
       variants=_F)  # fmt: skip
for _ov, _start, _end in (("Tensor_Tensor", "Tensor", "Tensor"), ("Tensor_Scalar", "Tensor",
                          "Scalar"), ("Scalar_Tensor", "Scalar", "Tensor")):  # fmt: skip
    define(f"logspace.{_ov}({_start} start, {_end} end, int steps, float base=10.0, *, "
           f"{_OPTIONS}) -> Tensor", variants=_F)  # fmt: skip
define(f"randperm(SymInt n, *, {_LONG_OPTIONS}) -> Tensor", variants=_F,
       tags=("nondeterministic_seeded",))  # fmt: skip
define(f"randperm.generator(SymInt n, *, Generator? generator, {_LONG_OPTIONS}) -> Tensor",
       variants=_F, tags=("nondeterministic_seeded",))  # fmt: skip
define(f"normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, "
       f"{_OPTIONS}) -> Tensor", variants=_F, tags=("nondeterministic_seeded",))  # fmt: skip

# shaped like another tensor
define(f"zeros_like(Tensor self, *, {_LIKE}) -> Tensor", variants=_F)
define(f"ones_like(Tensor self, *, {_LIKE}) -> Tensor", variants=_F)
define(f"full_like(Tensor self, Scalar fill_value, *, {_LIKE}) -> Tensor", variants=_F)
define(f"empty_like(Tensor self, *, {_LIKE}) -> Tensor", variants=_F)
define(f"rand_like(Tensor self, *, {_LIKE}) -> Tensor", variants=_F)
define(f"rand_like.generator(Tensor self, *, Generator? generator, {_LIKE}) -> Tensor", variants=_F)
define(f"randn_like(Tensor self, *, {_LIKE}) -> Tensor", variants=_F)
define(
    f"randn_like.generator(Tensor self, *, Generator? generator, {_LIKE}) -> Tensor", variants=_F
)
define(f"randint_like(Tensor self, SymInt high, *, {_LIKE}) -> Tensor", variants=_F)
define(
    f"randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, {_LIKE}) -> Tensor",
    variants=_F,
)
define(
    f"randint_like.generator(Tensor self, SymInt high, *, Generator? generator, {_LIKE}) -> Tensor",
    variants=_F,
)
define(
    f"randint_like.low_generator_dtype(Tensor self, SymInt low, SymInt high, *, "
    f"Generator? generator, {_LIKE}) -> Tensor",
    variants=_F,
)

# new tensors with self's dtype and device
define(f"new_zeros(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=_M)
define(f"new_ones(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=_M)
define(
    f"new_full(Tensor self, SymInt[] size, Scalar fill_value, *, {_OPTIONS}) -> Tensor", variants=_M
)
define(f"new_empty(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=_M)

# out= forms of the factories: PyTorch's schemas, which drop the TensorOptions (the out
# tensor gives dtype and device); NOTE [factory out=]
_OUTS = {
    "zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)": "zeros.default",
    "ones.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)": "ones.default",
    "full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)": "full.default",
    "empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)":
        "empty.memory_format",
    "arange.out(Scalar end, *, Tensor(a!) out) -> Tensor(a!)": "arange.default",
    "arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)":
        "arange.start_step",
    "linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out) -> Tensor(a!)":
        "linspace.default",
    "eye.out(SymInt n, *, Tensor(a!) out) -> Tensor(a!)": "eye.default",
    "eye.m_out(SymInt n, SymInt m, *, Tensor(a!) out) -> Tensor(a!)": "eye.m",
    "tril_indices.out(int row, int col, int offset=0, *, Tensor(a!) out) -> Tensor(a!)":
        "tril_indices.default",
    "triu_indices.out(int row, int col, int offset=0, *, Tensor(a!) out) -> Tensor(a!)":
        "triu_indices.default",
    "rand.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)": "rand.default",
    "rand.generator_out(SymInt[] size, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)":
        "rand.generator",
    "randn.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)": "randn.default",
    "randn.generator_out(SymInt[] size, *, Generator? generator, Tensor(a!) out) -> Tensor(a!)":
        "randn.generator",
    "randint.out(SymInt high, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)": "randint.default",
    "randint.generator_out(SymInt high, SymInt[] size, *, Generator? generator, "
    "Tensor(a!) out) -> Tensor(a!)": "randint.generator",
    "randint.low_out(SymInt low, SymInt high, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)":
        "randint.low",
    "randint.low_generator_out(SymInt low, SymInt high, SymInt[] size, *, Generator? generator, "
    "Tensor(a!) out) -> Tensor(a!)": "randint.low_generator",
}  # fmt: skip
#: a factory's out= overload -> the factory whose result it writes
FACTORY_OUTS: dict[OpOverload, OpOverload] = {}
for _schema, _functional in _OUTS.items():
    _packet, _overload = _functional.split(".")
    _fop = getattr(getattr(ops.aten, _packet), _overload)
    FACTORY_OUTS[define_op(_schema, "aten", (), ())] = _fop
FUNCTIONAL_OF.update(FACTORY_OUTS)  # the samples of out= overloads are found through it


# --------------------------------------------------------------------------- shared rules


def size_of(size: Any, op: str) -> tuple[int, ...]:
    """``size`` as a tuple of non-negative ints; RuntimeError naming the op otherwise.

    >>> from ember.ops.native.creation import size_of
    >>> size_of([2, 3], "zeros")
    (2, 3)
    """
    items = size if isinstance(size, Sequence) else (size,)
    try:
        shape = tuple(operator.index(s) for s in items)
    except TypeError:
        kinds = [type(s).__name__ for s in items]
        raise TypeError(f"{op}(): argument 'size' must be a tuple of ints, got {kinds}") from None
    if any(s < 0 for s in shape):
        raise RuntimeError(
            f"{op}: Trying to create tensor with negative dimension: {list(shape)}; every size "
            "must be >= 0"
        )
    return shape


def dtype_of(d: Any, default: dtypes.dtype) -> dtypes.dtype:
    """The ember dtype a ``ScalarType?`` argument names (``None`` gives ``default``)."""
    if d is None:
        return default
    if isinstance(d, dtypes.dtype):
        return d
    if isinstance(d, str) and d in dtypes.ALIASES:
        return dtypes.ALIASES[d]  # schema defaults spell dtypes by name: ``dtype=long``
    raise TypeError(f"expected an ember.dtype such as ember.float32 for dtype, got {d!r}")


def check_layout(layout: Any, op: str) -> None:
    """Only strided tensors exist in ember."""
    if layout is not None and str(layout).rpartition(".")[2] != "strided":
        raise NotImplementedError(f"{op}: layout {layout} is not supported; only strided tensors")


def scalar_dtype(value: Any) -> dtypes.dtype:
    """The dtype PyTorch gives a tensor filled with a Python scalar (``full`` without dtype)."""
    if hasattr(value, "dtype") and hasattr(value, "item"):
        value = value.item()
    if isinstance(value, bool):
        return dtypes.bool_
    if isinstance(value, int):
        return dtypes.int64
    if isinstance(value, complex):
        return dtypes.default_complex()
    return dtypes.get_default_dtype()


def check_fill(value: Any, d: dtypes.dtype, op: str) -> Any:
    """``value`` as a Python number that fits ``d``; RuntimeError (PyTorch's overflow check)."""
    if hasattr(value, "dtype") and hasattr(value, "item"):
        value = value.item()
    if d is dtypes.bool_ or isinstance(value, bool):
        return value
    if d.category == dtypes.COMPLEX:
        value = complex(value)
        top = _FLOAT_MAX[d.to_real().name]
        if any(math.isfinite(p) and abs(p) > top for p in (value.real, value.imag)):
            raise RuntimeError(
                f"{op}: value {value} cannot be converted to type {d.name} without overflow; "
                "pick complex128 or a value in range"
            )
        return value
    bad = False
    if isinstance(value, complex):
        bad = value.imag != 0
        value = value.real
    if d.category == dtypes.INTEGRAL:
        if math.isnan(value) or math.isinf(value):
            bad = True
        else:
            lo, hi = int_range(d)
            # unsigned types also accept the negatives that wrap into range, as PyTorch does
            bad = bad or not ((-hi if lo == 0 else lo) <= value <= hi)
            value = int(value) % (hi + 1) if lo == 0 else int(value)
    elif d.category == dtypes.FLOATING and math.isfinite(value):
        bad = bad or abs(value) > _FLOAT_MAX[d.name]
    if bad:
        raise RuntimeError(
            f"{op}: value {value} cannot be converted to type {d.name} without overflow; pick "
            "a wider dtype or a value in range"
        )
    return value


_FLOAT_MAX = {
    "float16": 65504.0, "bfloat16": math.inf, "float32": 3.4028234663852886e38,
    "float64": math.inf,
}  # fmt: skip


def int_range(d: dtypes.dtype) -> tuple[int, int]:
    """The smallest and largest value of integer dtype ``d``."""
    bits = d.itemsize * 8
    if d.is_signed:
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return 0, 2**bits - 1


def _number(x: Any) -> Any:
    return x.item() if hasattr(x, "dtype") and hasattr(x, "item") else x


def arange_plan(
    start: Any, end: Any, step: Any, dtype: Any, op: str = "arange"
) -> tuple[int, dtypes.dtype, Any, Any]:
    """(length, dtype, start, step) of an ``arange``, with PyTorch's length rounding.

    All-integer arguments give int64, any float the default dtype. For int64 results the
    arguments are truncated first and the length is an integer ceiling division; otherwise
    it is ``ceil((end - start) / step)`` in double precision.

    >>> from ember.ops.native.creation import arange_plan
    >>> arange_plan(0, 10, 3, None)[:2]
    (4, ember.int64)
    """
    start, end, step = _number(start), _number(end), _number(step)
    if dtype is None:
        ints = all(isinstance(x, int) for x in (start, end, step))
        d = dtypes.int64 if ints else dtypes.get_default_dtype()
    else:
        d = dtype_of(dtype, dtypes.get_default_dtype())
    if d is dtypes.bool_ or d.category == dtypes.COMPLEX:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{d._short}'")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"{op}: unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError(f"{op}: step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError(
            f"{op}: upper bound and lower bound inconsistent with step sign (start={start}, "
            f"end={end}, step={step})"
        )
    if d is dtypes.int64:
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError(f"{op}: step must be nonzero once truncated to int64 (got {step})")
        sgn = 1 if step > 0 else -1
        n = (
            (end - start + step - sgn) // step
            if step > 0
            else -((end - start + step - sgn) // -step)
        )
    else:
        n = math.ceil((end - start) / step)
        if d.category == dtypes.INTEGRAL:
            start, step = int(start), int(step)
    return max(int(n), 0), d, start, step


def check_steps(steps: int, op: str = "linspace") -> None:
    if steps < 0:
        raise RuntimeError(f"{op}: number of steps must be non-negative, got {steps}")


def check_randperm(n: int, d: dtypes.dtype) -> None:
    """randperm: integer and floating dtypes that hold ``n - 1`` exactly."""
    if d is dtypes.bool_ or d.category == dtypes.COMPLEX:
        raise NotImplementedError(f"\"randperm\" not implemented for '{d._short}'")
    if n < 0:
        raise RuntimeError(f"randperm: Trying to create tensor with negative dimension {n}: [{n}]")
    if d.category == dtypes.INTEGRAL:
        top = int_range(d)[1]
    else:
        top = 2 ** {"float16": 11, "float32": 24, "float64": 53}[d.name]
    if n - 1 > top:
        raise RuntimeError(
            f"randperm: value cannot be converted to type {d.name} without overflow (n = {n}); "
            "pick a wider dtype"
        )


def check_logspace(d: dtypes.dtype, start: Any, end: Any) -> None:
    """logspace: 0-dim tensor bounds; an integer dtype must hold the bounds themselves."""
    if d is dtypes.bool_:
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    for name, x in (("start", start), ("end", end)):
        if hasattr(x, "ndim") and x.ndim != 0:
            raise RuntimeError(
                "logspace only supports 0-dimensional start and end tensors, but got "
                f"{name} with {x.ndim} dimension(s)."
            )
        if d.category == dtypes.INTEGRAL and not hasattr(x, "ndim"):
            lo, hi = int_range(d)
            if not lo <= x <= hi:
                raise RuntimeError(
                    f"logspace: value {x} cannot be converted to type {d.name} without "
                    "overflow; pick a wider dtype"
                )


def check_eye(n: int, m: int, op: str = "eye") -> None:
    if n < 0:
        raise RuntimeError(f"{op}: n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"{op}: m must be greater or equal to 0, got {m}")


def check_uniform(d: dtypes.dtype, kernel: str) -> None:
    """``rand``/``randn`` need a floating or complex dtype (NotImplementedError, as PyTorch)."""
    if d.category < dtypes.FLOATING:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{d._short}': use a floating point or complex dtype"
        )


def check_randint(low: int, high: int, d: dtypes.dtype, op: str = "randint") -> None:
    """PyTorch's bounds checks of ``randint``: ``low < high``, both within ``d``."""
    if low >= high:
        raise RuntimeError(
            f"{op}: random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if d.category == dtypes.COMPLEX:
        raise NotImplementedError(f"\"random_from_to_cpu\" not implemented for '{d._short}'")
    if d is dtypes.bool_:
        lo, hi = 0, 1
    elif d.category == dtypes.INTEGRAL:
        lo, hi = int_range(d)
    else:
        return  # PyTorch only warns beyond the float's exact integer range
    check_draw_bounds(low, high, lo, hi, d, op)


def check_draw_bounds(low: int, high: int, lo: int, hi: int, d: dtypes.dtype, op: str) -> None:
    """A draw of integers in ``[low, high)`` into dtype ``d`` (``randint``, ``random_``):
    ``low`` and ``high - 1`` must lie in ``[lo, hi]``, the values ``d`` holds."""
    if not lo <= low <= hi:
        raise RuntimeError(f"{op}: from is out of bounds for {d.name} (got {low})")
    if not lo <= high - 1 <= hi:
        raise RuntimeError(f"{op}: to - 1 is out of bounds for {d.name} (got to={high})")


def like_strides(
    shape: tuple[int, ...], strides: tuple[int, ...], memory_format: Any, op: str
) -> tuple[int, ...]:
    """Strides (in elements) of a ``*_like`` result: as a copy of ``self`` laid out as
    ``memory_format`` says (NOTE [layout of new tensors] in ``ember/_memory_format.py``)."""
    return result_strides(shape, strides, memory_format, op)


def format_strides_of(
    shape: tuple[int, ...], memory_format: Any, op: str
) -> tuple[int, ...] | None:
    """Strides of a new ``shape`` tensor (``empty``) laid out as ``memory_format`` says: None
    for row-major; PyTorch's error for ``preserve_format``, which has nothing to preserve."""
    name = format_name("contiguous_format" if memory_format is None else memory_format, op)
    if name == "preserve_format":
        raise RuntimeError(
            f"{op}: unsupported memory format Preserve (a new tensor has no layout to "
            "preserve; pass contiguous_format or channels_last)"
        )
    return None if name == "contiguous_format" else format_strides(shape, name, op)


def strided_extent(shape: tuple[int, ...], stride: Sequence[int], op: str) -> int:
    """Elements of storage an ``empty_strided`` tensor needs."""
    stride = tuple(int(s) for s in stride)
    if len(stride) != len(shape):
        raise RuntimeError(
            f"{op}: mismatch in length of strides and shape: {len(stride)} strides for shape "
            f"{list(shape)}"
        )
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{op}: strides must be non-negative, got {list(stride)}")
    if math.prod(shape) == 0:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))


# --------------------------------------------------------------------------- plans
# NOTE [creation plans]: each creation op is one plan function below, taking its arguments
# as the dispatcher passes them (TensorOptions keywords as ``**options``) and returning what
# to make. One plan serves all of an op's overloads; ``PLANS`` maps every overload to its
# plan, and each backend registers ``kernel_of(op, plan, make)`` for all of them: Meta's
# ``make`` builds a ShapeOnlyArray, CPU's also computes the values ``Plan.fill`` names.


class Plan(NamedTuple):
    """What a creation op makes: shape, dtype, strides (None: row-major) and its values."""

    shape: tuple[int, ...]
    dtype: dtypes.dtype
    fill: tuple[Any, ...]  # (kind, *params) of the values, e.g. ("full", 3.0); ("empty",)
    strides: tuple[int, ...] | None = None  # in elements


_EMPTY = ("empty",)
_ZEROS = ("zeros",)
_ONES = ("full", 1)


def kernel_of(
    op: OpOverload, plan: Callable[..., Plan], make: Callable[[Plan], Tensor]
) -> Callable[..., Tensor]:
    """``op``'s kernel: make what ``plan`` says with a backend's ``make``."""
    if op._schema.arguments[0].name == "self":  # *_like, new_*: NOTE [another device]
        return _like_kernel(op, plan, make)

    def kernel(*args: Any, **options: Any) -> Tensor:
        return make(plan(*args, **options))

    kernel.__name__ = kernel.__qualname__ = op.__name__
    return kernel


# NOTE [another device]
# ``*_like`` and ``new_*`` ops dispatch on ``self``, but ``device=`` may name another device
# (``zeros_like(x, device="meta")``): PyTorch's kernels build the result with the factory of
# that device. ember's plans read only ``self``'s shape, strides and dtype, so the kernel of
# ``self``'s backend hands the call to the kernel of the requested device's backend.


def _like_kernel(
    op: OpOverload, plan: Callable[..., Plan], make: Callable[[Plan], Tensor]
) -> Callable[..., Tensor]:
    def kernel(self: Tensor, *args: Any, **options: Any) -> Any:
        d = options.get("device")
        if d is not None:
            kind = as_device(d).type
            check_backend(kind)  # PyTorch's error for a device ember has no backend for
            if kind != self.device.type:  # that backend's kernel, for a result of its own
                rest = {k: v for k, v in options.items() if k != "device"}
                return op.redispatch(DEVICE_BITS[kind], self, *args, **rest)
        return make(plan(self, *args, **options))

    kernel.__name__ = kernel.__qualname__ = op.__name__
    return kernel


def out_kernel_of(
    out_op: OpOverload, factory: Callable[..., Tensor], write: Callable[..., None]
) -> Callable[..., Tensor]:
    """The kernel of a factory's ``out=`` overload on a backend (NOTE [factory out=]), from
    the backend's kernel of the factory and its ``write(dst, result, name, may_resize,
    warn)``."""
    name = str(out_op).removeprefix("aten.")
    is_arange = out_op.overloadpacket.__name__ == "arange"

    def kernel(*args: Any, out: Tensor, **kwargs: Any) -> Tensor:
        result = factory(*args, dtype=out.dtype, **kwargs)
        n = out.numel()
        if is_arange and n and n != result.numel():
            warn_user(
                f"The number of elements in the out tensor of shape {list(out.shape)} is {n} "
                f"which does not match the computed number of elements {result.numel()}. Note "
                "that this may occur as a result of rounding error. The out tensor will be "
                f"resized to a tensor of shape ({result.numel()},)."
            )
        write(out, result, name, True, False)
        return out

    kernel.__name__ = kernel.__qualname__ = out_op.__name__
    return kernel


def _dtype(op: str, default: dtypes.dtype | None, options: dict[str, Any]) -> dtypes.dtype:
    """The result dtype ``options`` give (``default``, else the default dtype, if absent)."""
    check_layout(options.get("layout"), op)
    device = options.get("device")
    if device is not None:  # *_like and new_* dispatch on self, so a device is checked here
        check_backend(as_device(device).type)
    if default is None:
        default = dtypes.get_default_dtype()
    return dtype_of(options.get("dtype"), default)


def _check_draw(fill: tuple[Any, ...], d: dtypes.dtype, op: str) -> None:
    """PyTorch's dtype and bounds checks of random values (nothing for other fills)."""
    kind = fill[0]
    if kind == "uniform":
        check_uniform(d, "check_uniform_bounds")
    elif kind == "normal":
        check_uniform(d, "normal_kernel_cpu")
    elif kind == "randint":
        check_randint(fill[1], fill[2], d, op)


def _sized(
    op: str, size: Any, default: dtypes.dtype | None, fill: tuple[Any, ...], options: dict[str, Any]
) -> Plan:
    """A ``size``-shaped result of ``fill`` (``zeros``, ``rand``, ``new_empty``, ...)."""
    d = _dtype(op, default, options)
    _check_draw(fill, d, op)
    shape = size_of(size, op)
    mf = options.get("memory_format")
    return Plan(shape, d, fill, None if mf is None else format_strides_of(shape, mf, op))


def _like(op: str, self: Tensor, fill: tuple[Any, ...], options: dict[str, Any]) -> Plan:
    """A result shaped and (by default) laid out like ``self``."""
    d = _dtype(op, self.dtype, options)
    _check_draw(fill, d, op)
    shape = tuple(self.shape)
    strides = like_strides(shape, self.stride(), options.get("memory_format"), op)
    return Plan(shape, d, fill, strides)


def _full(
    op: str, size: Any, value: Any, default: dtypes.dtype | None, options: dict[str, Any]
) -> Plan:
    d = _dtype(op, default, options)
    return Plan(size_of(size, op), d, ("full", check_fill(value, d, op)))


def _full_like(self: Tensor, fill_value: Any, **options: Any) -> Plan:
    value = check_fill(fill_value, dtype_of(options.get("dtype"), self.dtype), "full_like")
    return _like("full_like", self, ("full", value), options)


def _empty_strided(size: Any, stride: Any, **options: Any) -> Plan:
    d = _dtype("empty_strided", None, options)
    shape = size_of(size, "empty_strided")
    strided_extent(shape, stride, "empty_strided")
    return Plan(shape, d, _EMPTY, tuple(int(s) for s in stride))


def _arange(start: Any, end: Any, step: Any = 1, **options: Any) -> Plan:
    check_layout(options.get("layout"), "arange")
    n, d, start, step = arange_plan(start, end, step, options.get("dtype"))
    return Plan((n,), d, ("arange", start, step))


def _linspace(start: Any, end: Any, steps: int, **options: Any) -> Plan:
    d = _dtype("linspace", None, options)
    check_steps(steps)
    return Plan((steps,), d, ("linspace", start, end, steps))


def _logspace(start: Any, end: Any, steps: int, base: float = 10.0, **options: Any) -> Plan:
    d = _dtype("logspace", None, options)
    check_steps(steps, "logspace")
    check_logspace(d if steps > 1 else dtypes.float32, start, end)  # (one value: no kernel)
    return Plan((steps,), d, ("logspace", start, end, steps, base))


def _randperm(n: int, *, generator: Any = None, **options: Any) -> Plan:
    d = _dtype("randperm", dtypes.int64, options)
    check_randperm(n, d)
    return Plan((n,), d, ("randperm", n, generator))


def _normal_size(
    mean: float, std: float, size: Any, *, generator: Any = None, **options: Any
) -> Plan:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _sized("normal", size, None, ("normal", generator, mean, std), options)


def _eye(n: int, m: int, **options: Any) -> Plan:
    d = _dtype("eye", None, options)
    check_eye(n, m)
    return Plan((n, m), d, ("eye",))


def tril_count(row: int, col: int, offset: int) -> int:
    """The number of elements of a ``row`` x ``col`` matrix on or below diagonal ``offset``."""
    return sum(max(min(col, i + offset + 1), 0) for i in range(row))


def _triangle_indices(upper: bool) -> Callable[..., Plan]:
    name = "triu_indices" if upper else "tril_indices"

    def plan(row: int, col: int, offset: int = 0, **options: Any) -> Plan:
        d = _dtype(name, dtypes.int64, options)
        for what, n in (("row", row), ("col", col)):
            if n < 0:
                raise RuntimeError(f"{what} must be non-negative, got {n}")
        if d not in (dtypes.int32, dtypes.int64):
            raise NotImplementedError(
                f"\"{name}\" not implemented for '{d._short}' (use int32 or int64)"
            )
        n = row * col - tril_count(row, col, offset - 1) if upper else tril_count(row, col, offset)
        return Plan((2, n), d, ("triangle", upper, row, col, offset))

    return plan


def _rand(size: Any, *, generator: Any = None, **options: Any) -> Plan:
    return _sized("rand", size, None, ("uniform", generator), options)


def _randn(size: Any, *, generator: Any = None, **options: Any) -> Plan:
    return _sized("randn", size, None, ("normal", generator), options)


def _randint(low: int, high: int, size: Any, *, generator: Any = None, **options: Any) -> Plan:
    return _sized("randint", size, dtypes.int64, ("randint", low, high, generator), options)


def _rand_like(self: Tensor, *, generator: Any = None, **options: Any) -> Plan:
    return _like("rand_like", self, ("uniform", generator), options)


def _randn_like(self: Tensor, *, generator: Any = None, **options: Any) -> Plan:
    return _like("randn_like", self, ("normal", generator), options)


def _randint_high(high: int, size: Any, **options: Any) -> Plan:
    return _randint(0, high, size, **options)


def _randint_like(
    self: Tensor, low: int, high: int, *, generator: Any = None, **options: Any
) -> Plan:
    return _like("randint_like", self, ("randint", low, high, generator), options)


aten = ops.aten
PLANS: dict[OpOverload, Callable[..., Plan]] = {
    aten.zeros.default: lambda size, **o: _sized("zeros", size, None, _ZEROS, o),
    aten.ones.default: lambda size, **o: _sized("ones", size, None, _ONES, o),
    aten.empty.memory_format: lambda size, **o: _sized("empty", size, None, _EMPTY, o),
    aten.full.default: lambda size, fill_value, **o: _full(
        "full", size, fill_value, scalar_dtype(fill_value), o
    ),
    aten.empty_strided.default: _empty_strided,
    aten.scalar_tensor.default: lambda s, **o: _full("scalar_tensor", (), s, None, o),
    aten.arange.default: lambda end, **o: _arange(0, end, 1, **o),
    aten.arange.start: lambda start, end, **o: _arange(start, end, 1, **o),
    aten.arange.start_step: _arange,
    aten.linspace.default: _linspace,
    aten.logspace.default: _logspace,
    aten.logspace.Tensor_Tensor: _logspace,
    aten.logspace.Tensor_Scalar: _logspace,
    aten.logspace.Scalar_Tensor: _logspace,
    aten.randperm.default: _randperm,
    aten.randperm.generator: _randperm,
    aten.normal.float_float: _normal_size,
    aten.eye.default: lambda n, **o: _eye(n, n, **o),
    aten.eye.m: _eye,
    aten.tril_indices.default: _triangle_indices(False),
    aten.triu_indices.default: _triangle_indices(True),
    aten.rand.default: _rand,
    aten.rand.generator: _rand,
    aten.randn.default: _randn,
    aten.randn.generator: _randn,
    aten.randint.default: _randint_high,
    aten.randint.generator: _randint_high,
    aten.randint.low: _randint,
    aten.randint.low_generator: _randint,
    aten.zeros_like.default: lambda self, **o: _like("zeros_like", self, _ZEROS, o),
    aten.ones_like.default: lambda self, **o: _like("ones_like", self, _ONES, o),
    aten.empty_like.default: lambda self, **o: _like("empty_like", self, _EMPTY, o),
    aten.full_like.default: _full_like,
    aten.rand_like.default: _rand_like,
    aten.rand_like.generator: _rand_like,
    aten.randn_like.default: _randn_like,
    aten.randn_like.generator: _randn_like,
    aten.randint_like.default: lambda self, high, **o: _randint_like(self, 0, high, **o),
    aten.randint_like.low_dtype: _randint_like,
    aten.randint_like.generator: lambda self, high, **o: _randint_like(self, 0, high, **o),
    aten.randint_like.low_generator_dtype: _randint_like,
    aten.new_zeros.default: lambda self, size, **o: _sized(
        "new_zeros", size, self.dtype, _ZEROS, o
    ),
    aten.new_ones.default: lambda self, size, **o: _sized("new_ones", size, self.dtype, _ONES, o),
    aten.new_empty.default: lambda self, size, **o: _sized(
        "new_empty", size, self.dtype, _EMPTY, o
    ),
    aten.new_full.default: lambda self, size, fill_value, **o: _full(
        "new_full", size, fill_value, self.dtype, o
    ),
}
