"""Sample inputs for every op, and the checks ``tests/test_ops.py`` runs over them.

Each family file in ``samples/`` registers a generator per functional overload:

    @samples("add.Tensor")
    def _(make, dtype):
        yield SampleInput(make((3, 4)), make((4,)), alpha=2)      # broadcasting
        yield SampleInput(make(()), make((2, 3), noncontiguous=True))

``make(shape, dtype=None, low=None, high=None, noncontiguous=False)`` builds a deterministic
ember tensor of the sample's dtype. In-place (``add_.Tensor``) and ``out=`` (``add.out``)
overloads reuse the functional op's samples unless they register their own. ``@errors``
registers inputs that must raise, with the exception type PyTorch raises.

The checks: the CPU result equals PyTorch's (values, dtype, shape, and strides for views);
where PyTorch raises, ember raises the same type; the Meta result has the CPU result's shape
and dtype; every op has samples and a Meta rule (``coverage``).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import ember
from ember import dtypes
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only, wrap_view
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.registry import OpOverload, all_overloads

ALL_DTYPES = dtypes.ALL_DTYPES
FLOATS = dtypes.FLOATING_DTYPES
INTS = dtypes.INTEGRAL_DTYPES
REALS = (dtypes.bool_, *INTS, *FLOATS)
NUMERIC = (*INTS, *FLOATS)


@dataclass
class SampleInput:
    """Positional and keyword arguments for one call of an op."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    name: str = ""

    def __init__(self, *args: Any, name: str = "", **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs
        self.name = name

    def __repr__(self) -> str:
        def show(x: Any) -> str:
            if isinstance(x, Tensor):
                return f"T{tuple(x.shape)}:{x.dtype.name}" + ("" if x.is_contiguous() else "nc")
            if isinstance(x, (list, tuple)):
                return "[" + ", ".join(show(e) for e in x) + "]"
            return repr(x)

        parts = [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return (self.name + ":" if self.name else "") + "(" + ", ".join(parts) + ")"


@dataclass
class ErrorInput:
    """A call that must raise ``error`` (and PyTorch raises the same type)."""

    sample: SampleInput
    error: type[BaseException]
    match: str = ""


@dataclass
class OpSamples:
    fn: Callable[..., Iterable[SampleInput]]
    dtypes: tuple[dtypes.dtype, ...]
    torch_name: str | None = None  # compare with a differently named PyTorch op
    atol: float | None = None
    rtol: float | None = None
    compare_torch: bool = True  # False for ops whose values are random or defined differently
    check_strides: bool = True
    meta_errors: bool = True  # False when the op's CPU errors depend on values (gather)


SAMPLES: dict[str, OpSamples] = {}
ERRORS: dict[str, Callable[[], Iterable[ErrorInput]]] = {}
#: ops deliberately without samples or Meta rule, each with the reason (shown by coverage)
EXEMPT: dict[str, str] = {}


def samples(
    *names: str,
    dtypes: tuple[dtypes.dtype, ...] = REALS,
    torch_name: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    compare_torch: bool = True,
    check_strides: bool = True,
    meta_errors: bool = True,
) -> Callable[[Callable[..., Iterable[SampleInput]]], Callable[..., Iterable[SampleInput]]]:
    """Register a sample generator ``fn(make, dtype)`` for the named overloads."""

    def register(fn: Callable[..., Iterable[SampleInput]]) -> Callable[..., Iterable[SampleInput]]:
        for n in names:
            if n in SAMPLES:
                raise ValueError(f"samples for {n} registered twice")
            SAMPLES[n] = OpSamples(
                fn, dtypes, torch_name, atol, rtol, compare_torch, check_strides, meta_errors
            )
        return fn

    return register


def errors(*names: str) -> Callable[[Callable[[], Iterable[ErrorInput]]], Any]:
    """Register a generator of ErrorInputs for the named overloads."""

    def register(fn: Callable[[], Iterable[ErrorInput]]) -> Any:
        for n in names:
            ERRORS[n] = fn
        return fn

    return register


# --------------------------------------------------------------------------- making tensors


class Maker:
    """Deterministic tensors for one (op, dtype) pair."""

    def __init__(self, dtype: dtypes.dtype, seed: int = 0) -> None:
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)

    def __call__(
        self,
        shape: tuple[int, ...] | int,
        dtype: dtypes.dtype | None = None,
        *,
        low: float | None = None,
        high: float | None = None,
        noncontiguous: bool = False,
    ) -> Tensor:
        if isinstance(shape, int):
            shape = (shape,)
        d = dtype or self.dtype
        arr = random_array(self.rng, tuple(shape), d, low, high)
        if noncontiguous and arr.size > 1:
            # the same values, laid out every other element of a bigger buffer
            big = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2,) if arr.ndim else (2,), arr.dtype)
            view = big[..., ::2]
            view[...] = arr
            return wrap_view(ember.from_numpy(big), view)
        return ember.from_numpy(arr)


def random_array(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    d: dtypes.dtype,
    low: float | None,
    high: float | None,
) -> np.ndarray:
    if d is dtypes.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if d.category == dtypes.INTEGRAL:
        info = np.iinfo(d.np)
        lo = int(max(low if low is not None else -9, info.min))
        hi = int(min(high if high is not None else 10, info.max))
        return rng.integers(lo, hi, shape, endpoint=False).astype(d.np)
    lo = -9.0 if low is None else low
    hi = 9.0 if high is None else high
    real = rng.uniform(lo, hi, shape)
    if d.category == dtypes.COMPLEX:
        real = real + 1j * rng.uniform(lo, hi, shape)
    return np.asarray(real).astype(d.np)


# --------------------------------------------------------------------------- lookups


def functional(op: OpOverload) -> OpOverload:
    return FUNCTIONAL_OF.get(op, op)


def samples_for(op: OpOverload) -> OpSamples | None:
    return SAMPLES.get(op.__name__) or SAMPLES.get(functional(op).__name__)


def generate(op: OpOverload, dtype: dtypes.dtype) -> Iterator[SampleInput]:
    info = samples_for(op)
    if info is None:
        return
    yield from info.fn(Maker(dtype, seed=zlib.crc32(op.__name__.encode())), dtype)


def tested_overloads() -> list[OpOverload]:
    """Every aten overload the op tests run over."""
    return [op for op in all_overloads() if op.namespace == "aten"]


# --------------------------------------------------------------------------- conversions


def to_meta(x: Any) -> Any:
    """The same arguments with every tensor replaced by a meta tensor of its metadata (and
    the cpu device by the meta device)."""
    if isinstance(x, Tensor):
        arr = ShapeOnlyArray(tuple(x.shape), x.dtype.np, x.stride(), x.storage_offset())
        if x._base is None:
            return wrap_shape_only(arr)
        return wrap_view(wrap_shape_only(ShapeOnlyArray((0,), x.dtype.np)), arr)  # views stay views
    if isinstance(x, ember.device) and x.type == "cpu":
        return ember.device("meta")
    if isinstance(x, (list, tuple)):
        return type(x)(to_meta(e) for e in x)
    if isinstance(x, dict):
        return {k: to_meta(v) for k, v in x.items()}
    return x


def clone_args(x: Any) -> Any:
    """Deep copies of the tensors (same strides), so in-place ops can't touch the samples."""
    if isinstance(x, Tensor):
        return _restride(x, np.array(_root(x._data), copy=True, order="K"))
    if isinstance(x, (list, tuple)):
        return type(x)(clone_args(e) for e in x)
    if isinstance(x, dict):
        return {k: clone_args(v) for k, v in x.items()}
    return x


def _root(arr: np.ndarray) -> np.ndarray:
    from ember._tensor import root_array

    return root_array(arr)


def _restride(x: Tensor, root: np.ndarray) -> Tensor:
    """A tensor with ``x``'s shape, strides and offset over a copy of its storage."""
    flat = root.ravel(order="K")  # memory order, which storage offsets count in
    item = flat.itemsize
    view = np.ndarray(
        tuple(x.shape),
        flat.dtype,
        flat,
        x.storage_offset() * item,
        tuple(s * item for s in x.stride()),
    )
    if x._base is None:
        return ember.from_numpy(view)  # a base stays a base (detach_ and friends care)
    return wrap_view(ember.from_numpy(flat), view)


def to_torch(x: Any) -> Any:
    """The arguments with every ember tensor as a torch tensor of the same strides and values."""
    import torch

    if isinstance(x, Tensor):
        root = np.array(_root(x._data), copy=True, order="K").ravel(order="K")
        base = torch.from_numpy(root)
        return base.as_strided(tuple(x.shape), x.stride(), x.storage_offset())
    if isinstance(x, dtypes.dtype):
        return getattr(torch, x.name)
    if isinstance(x, ember.device):
        return torch.device(str(x))
    if isinstance(x, list):
        return [to_torch(e) for e in x]
    if isinstance(x, tuple):
        return tuple(to_torch(e) for e in x)
    if isinstance(x, dict):
        return {k: to_torch(v) for k, v in x.items()}
    return x


def grad_leaves(x: Any) -> list[Tensor]:
    """The ember tensors in ``x`` (nested lists and tuples) that require grad, in order."""
    if isinstance(x, Tensor):
        return [x] if x.requires_grad else []
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in grad_leaves(e)]
    return []


def torch_leaves(x: Any) -> Any:
    """``x`` for PyTorch: tensors that require grad become torch leaves that require grad."""
    if isinstance(x, Tensor) and x.requires_grad:
        return to_torch(x.detach()).requires_grad_()
    if isinstance(x, list):
        return [torch_leaves(e) for e in x]
    return to_torch(x)


def torch_grad_leaves(x: Any) -> list[Any]:
    """The torch tensors in ``x`` (nested lists and tuples) that require grad, in order."""
    import torch

    if isinstance(x, torch.Tensor):
        return [x] if x.requires_grad else []
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in torch_grad_leaves(e)]
    return []


def torch_op(op: OpOverload, info: OpSamples | None) -> Any:
    import torch

    name = (
        op.__name__
        if info is None or info.torch_name is None or op is not functional(op)
        else info.torch_name
    )
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, packet), overload or "default")


# --------------------------------------------------------------------------- comparisons


def tolerances(d: dtypes.dtype, info: OpSamples | None) -> tuple[float, float]:
    base = {"float16": (1e-3, 1e-2), "float32": (1e-5, 1.3e-6 * 10), "complex64": (1e-5, 1.3e-5)}
    atol, rtol = base.get(d.name, (1e-7, 1e-7))
    if info is not None:
        atol = info.atol if info.atol is not None else atol
        rtol = info.rtol if info.rtol is not None else rtol
    return atol, rtol


def assert_same(
    actual: Any, expected: Any, *, check_strides: bool, info: OpSamples | None, where: str
) -> None:
    """Compare an ember result (tensor, number, or nesting of them) with PyTorch's."""
    import torch

    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, Tensor), f"{where}: expected a Tensor, got {type(actual)}"
        assert actual.dtype.name == str(expected.dtype).removeprefix("torch."), (
            f"{where}: dtype {actual.dtype} != torch's {expected.dtype}"
        )
        assert tuple(actual.shape) == tuple(expected.shape), (
            f"{where}: shape {tuple(actual.shape)} != torch's {tuple(expected.shape)}"
        )
        if check_strides:
            assert actual.stride() == expected.stride(), (
                f"{where}: strides {actual.stride()} != torch's {expected.stride()}"
            )
        a = actual._data
        e = expected.detach().numpy()
        if actual.dtype.category >= dtypes.FLOATING:
            atol, rtol = tolerances(actual.dtype, info)
            np.testing.assert_allclose(a, e, atol=atol, rtol=rtol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(a, e, err_msg=where)
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)), (
            f"{where}: expected a sequence, got {type(actual)}"
        )
        assert len(actual) == len(expected), f"{where}: {len(actual)} results != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, check_strides=check_strides, info=info, where=f"{where}[{i}]")
    elif isinstance(expected, float) and math.isnan(expected):
        assert isinstance(actual, float) and math.isnan(actual), f"{where}: {actual} != nan"
    else:
        assert actual == expected, f"{where}: {actual!r} != torch's {expected!r}"


def assert_meta_matches(meta: Any, real: Any, where: str) -> None:
    """A Meta result has the CPU result's shape and dtype (and is on the meta device)."""
    if isinstance(real, Tensor):
        assert isinstance(meta, Tensor), f"{where}: Meta gave {type(meta)}, CPU a Tensor"
        assert meta.device.type == "meta", f"{where}: Meta result on {meta.device}"
        assert tuple(meta.shape) == tuple(real.shape), (
            f"{where}: Meta shape {tuple(meta.shape)} != CPU {tuple(real.shape)}"
        )
        assert meta.dtype is real.dtype, f"{where}: Meta dtype {meta.dtype} != CPU {real.dtype}"
    elif isinstance(real, (list, tuple)):
        assert isinstance(meta, (list, tuple)) and len(meta) == len(real), where
        for i, (m, r) in enumerate(zip(meta, real, strict=True)):
            assert_meta_matches(m, r, f"{where}[{i}]")
