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
from ember._tensor import Tensor, root_array, wrap_shape_only, wrap_view
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


#: a sample set's tolerance: one number, one per dtype name, or None for the dtype's default
Tolerance = float | dict[str, float] | None


@dataclass
class OpSamples:
    fn: Callable[..., Iterable[SampleInput]]
    dtypes: tuple[dtypes.dtype, ...]
    torch_name: str | None = None  # compare with a differently named PyTorch op
    atol: Tolerance = None
    rtol: Tolerance = None
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
    atol: Tolerance = None,
    rtol: Tolerance = None,
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
    """The same arguments with every tensor replaced by a meta tensor of its metadata (the
    cpu device by the meta device, a storage by a meta one of its size)."""
    if isinstance(x, Tensor):
        arr = ShapeOnlyArray(tuple(x.shape), x.dtype.np, x.stride(), x.storage_offset())
        if x._base is None:
            return wrap_shape_only(arr)
        return wrap_view(wrap_shape_only(ShapeOnlyArray((0,), x.dtype.np)), arr)  # views stay views
    if isinstance(x, ember.device) and x.type == "cpu":
        return ember.device("meta")
    if isinstance(x, ember.UntypedStorage):  # a meta storage of as many bytes
        return ember.empty(x.nbytes(), dtype=ember.uint8, device="meta").untyped_storage()
    if isinstance(x, (list, tuple)):
        return type(x)(to_meta(e) for e in x)
    if isinstance(x, dict):
        return {k: to_meta(v) for k, v in x.items()}
    return x


def clone_args(x: Any) -> Any:
    """Deep copies of the tensors (same strides), so in-place ops can't touch the samples."""
    if isinstance(x, Tensor):
        return _restride(x, np.array(_root(x._edata), copy=True, order="K"))
    if isinstance(x, (list, tuple)):
        return type(x)(clone_args(e) for e in x)
    if isinstance(x, dict):
        return {k: clone_args(v) for k, v in x.items()}
    return x


def _root(arr: np.ndarray) -> np.ndarray:
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
    import torch  # the oracle: loaded only when a comparison runs

    if isinstance(x, Tensor):
        root = np.array(_root(x._edata), copy=True, order="K").ravel(order="K")
        base = torch.from_numpy(root)
        return base.as_strided(tuple(x.shape), x.stride(), x.storage_offset())
    if isinstance(x, dtypes.dtype):
        return getattr(torch, x.name)
    if isinstance(x, ember.device):
        return torch.device(str(x))
    if isinstance(x, ember.memory_format):
        return getattr(torch, x.name)
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
    import torch  # the oracle: loaded only when a comparison runs

    if isinstance(x, torch.Tensor):
        return [x] if x.requires_grad else []
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in torch_grad_leaves(e)]
    return []


def torch_op(op: OpOverload, info: OpSamples | None) -> Any:
    import torch  # the oracle: loaded only when a comparison runs

    name = (
        op.__name__
        if info is None or info.torch_name is None or op is not functional(op)
        else info.torch_name
    )
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, packet), overload or "default")


# --------------------------------------------------------------------------- comparisons


def assert_grads_match(
    e_grads: Iterable[Any], t_grads: Iterable[Any], where: str, *, check_dtype: bool = False
) -> None:
    """Each of ember's input gradients equals PyTorch's (to ``rtol=1e-6, atol=1e-8``, NaN
    where PyTorch has NaN): where PyTorch's is None, ember's is None or zero; with
    ``check_dtype`` the dtypes agree too. ``where`` names the op and sample in the errors."""
    import torch  # the oracle: loaded only when a comparison runs

    for i, (eg, tg) in enumerate(zip(e_grads, t_grads, strict=True)):
        at = f"{where} grad of input {i}"
        if tg is None:
            assert eg is None or not eg.numpy().any(), at
            continue
        assert eg is not None, f"{at}: ember gave no gradient"
        if check_dtype:
            assert eg.dtype.name == str(tg.dtype).removeprefix("torch."), at
        if tg._is_zerotensor():  # PyTorch's efficient zeros (sgn of a real input)
            tg = torch.zeros(tg.shape, dtype=tg.dtype)
        np.testing.assert_allclose(
            eg.numpy(),
            # (detached: PyTorch's cummax/cummin backward returns an empty input itself)
            tg.detach().resolve_conj().numpy(),
            rtol=1e-6,
            atol=1e-8,
            equal_nan=True,
            err_msg=at,
        )


def tolerances(d: dtypes.dtype, info: OpSamples | None) -> tuple[float, float]:
    base = {"float16": (1e-3, 1e-2), "float32": (1e-5, 1.3e-6 * 10), "complex64": (1e-5, 1.3e-5)}
    atol, rtol = base.get(d.name, (1e-7, 1e-7))
    if info is not None:
        atol = _for_dtype(info.atol, d, atol)
        rtol = _for_dtype(info.rtol, d, rtol)
    return atol, rtol


def _for_dtype(tol: Tolerance, d: dtypes.dtype, default: float) -> float:
    """A sample set's tolerance for ``d``: one number for every dtype, or one per dtype name
    (a float32 contraction's rounding scales with its terms, not its result)."""
    if isinstance(tol, dict):
        return tol.get(d.name, default)
    return default if tol is None else tol


def assert_same(
    actual: Any, expected: Any, *, check_strides: bool, info: OpSamples | None, where: str
) -> None:
    """Compare an ember result (tensor, number, or nesting of them) with PyTorch's."""
    import torch  # the oracle: loaded only when a comparison runs

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
        a = actual._edata
        e = expected.detach().resolve_conj().resolve_neg().numpy()  # (lazy conj views)
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


# --------------------------------------------------------------------------- edge samples
#
# NOTE [edge samples]: every op's hand-written samples use ordinary values and shapes; the
# edges are derived from them, for every op alike, so no family can forget them:
# - "special": each floating tensor filled with 0, -0, ±inf, NaN and ordinary values;
# - "zeros": each floating tensor filled with exact zeros (both signs) among small values,
#   where derivatives that divide by an input or an output break (NOTE [derivatives at
#   zeros] in ember/autograd/derivatives.py);
# - "0-dim" and "size-1" (pointwise ops): every tensor argument a 0-dim tensor, or of its
#   rank with every size 1;
# - "1-D dim" and "size-1 dim" (ops with a ``dim``): ``self`` 1-D or (1, n), with each dim.
# A derived call may be invalid (a size no longer fits); PyTorch then raises and ember must
# raise the same type, which is also a check.

#: op packet -> (edge sample names it skips, why): where PyTorch's value is an artifact of its
#: kernel rather than a definition, and ember keeps the mathematical one
EDGE_DIFFERENCES: dict[str, tuple[frozenset[str], str]] = {
    "gelu": (frozenset({"special"}), "PyTorch's gelu(±inf) is NaN; ember's is the limit"),
    "convolution": (
        frozenset({"special"}),
        "ember's im2col multiplies padding zeros by an inf weight (NaN); PyTorch's kernel "
        "skips padding",
    ),
    "var_mean": (
        frozenset({"special"}),
        "PyTorch's Welford mean is NaN beside an inf; ember's is the mean",
    ),
    "std_mean": (
        frozenset({"special"}),
        "PyTorch's Welford mean is NaN beside an inf; ember's is the mean",
    ),
    "index_select": (
        frozenset({"size-1 dim", "1-D dim"}),
        "for an index out of range PyTorch raises IndexError or RuntimeError by dtype",
    ),
    **{
        name: (
            frozenset({"special"}),
            "which entries of QR of a matrix holding inf or NaN come out NaN is the LAPACK "
            "build's (NumPy 2.0's OpenBLAS leaves zeros where PyTorch's and newer NumPy's "
            "give NaN)",
        )
        for name in ("linalg_qr", "qr")  # qr: found by tools/test_lowest.sh
    },
    "special_zeta": (
        frozenset({"special"}),
        "PyTorch's zeta(x, +inf) is NaN; ember's (SciPy's) is the limit, 0",
    ),
    "logit": (
        frozenset({"zeros"}),
        "PyTorch's gradient at -0 is -inf in its vectorized loop and +inf in its scalar one, "
        "by size and machine; ember's is IEEE's -inf (NOTE [logit at -0])",
    ),
    "topk": (
        frozenset({"special", "zeros"}),
        "0 and -0 tie; which index comes first is unspecified",
    ),
    **{
        name: (
            frozenset({"special", "zeros"}),
            "ties (0 and -0, several NaN): which index PyTorch reports is its algorithm's "
            "(NOTE [ties in order statistics] in ember/ops/native/sorting.py)",
        )
        for name in ("median", "nanmedian", "kthvalue", "mode")
    },
    "_weight_norm": (
        frozenset({"1-D dim", "size-1 dim"}),
        "PyTorch's fused kernel reads g as v.size(dim) values whatever g's shape; ember "
        "broadcasts g, so a reshaped v and the sample's g disagree",
    ),
}

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30])
ZEROS = np.array([0.0, 1.5, -0.0, -1.0, 0.0, 0.5, 2.0, -0.0, -2.5])


def _is_float_tensor(x: Any) -> bool:
    return isinstance(x, Tensor) and x.dtype.category >= dtypes.FLOATING


def _filled(x: Any, pattern: np.ndarray) -> Any:
    """``x`` with every floating tensor's values replaced by ``pattern``, tiled (strides kept)."""
    if _is_float_tensor(x):
        y = clone_args(x)
        n = y._edata.size
        values = np.resize(pattern, n).reshape(y._edata.shape) if n else y._edata
        y._edata[...] = values.astype(y._edata.dtype)
        return y
    if isinstance(x, (list, tuple)):
        return type(x)(_filled(e, pattern) for e in x)
    if isinstance(x, dict):
        return {k: _filled(v, pattern) for k, v in x.items()}
    return x


def _filled_first(args: tuple[Any, ...], pattern: np.ndarray) -> tuple[Any, ...]:
    """``args`` with the first floating tensor (or tensor list) filled with ``pattern``."""
    for i, a in enumerate(args):
        if _any_float(a):
            return (*args[:i], _filled(a, pattern), *args[i + 1 :])
    return args


def _any_float(x: Any) -> bool:
    if _is_float_tensor(x):
        return True
    if isinstance(x, (list, tuple)):
        return any(_any_float(e) for e in x)
    if isinstance(x, dict):
        return any(_any_float(v) for v in x.values())
    return False


def _reshaped(x: Any, shape_of: Callable[[Tensor], tuple[int, ...]]) -> Any:
    if isinstance(x, Tensor):
        flat = np.ascontiguousarray(x._edata).reshape(-1)
        shape = shape_of(x)
        n = math.prod(shape)
        if flat.size < n:
            return x
        return ember.from_numpy(flat[:n].reshape(shape).copy())
    if isinstance(x, (list, tuple)):
        return type(x)(_reshaped(e, shape_of) for e in x)
    return x


def _dim_argument(op: OpOverload) -> tuple[int, Any] | None:
    """(position, argument) of ``op``'s ``dim`` parameter when it takes one int or int list."""
    for i, a in enumerate(op._schema.arguments):
        if a.name == "dim" and a.type.base in ("int", "SymInt"):
            return i, a
    return None


def edge_samples(op: OpOverload, dtype: dtypes.dtype) -> Iterator[SampleInput]:
    """The edge cases derived from ``op``'s samples (NOTE [edge samples])."""
    if "backward" in op.__name__:
        return  # internal ops whose arguments must agree; their forward ops' edges cover them
    base = list(generate(op, dtype))
    skip = EDGE_DIFFERENCES.get(op.overloadpacket.__name__.rstrip("_"), (frozenset(), ""))[0]
    pointwise = "pointwise" in op.tags
    for s in base:
        if not (_any_float(s.args) or _any_float(s.kwargs)):
            continue
        if "special" not in skip:
            # inf and NaN in every operand of a pointwise op, else in the input only (an inf
            # class weight or eps is not an edge PyTorch defines)
            args = _filled(s.args, SPECIAL) if pointwise else _filled_first(s.args, SPECIAL)
            kwargs = _filled(s.kwargs, SPECIAL) if pointwise else s.kwargs
            yield SampleInput(*args, name="special", **kwargs)
        if "zeros" not in skip:
            yield SampleInput(*_filled(s.args, ZEROS), name="zeros", **_filled(s.kwargs, ZEROS))
    if "pointwise" in op.tags:
        for s in base[:2]:
            yield SampleInput(*_reshaped(s.args, lambda t: ()), name="0-dim", **s.kwargs)
            yield SampleInput(
                *_reshaped(s.args, lambda t: (1,) * t.ndim), name="size-1", **s.kwargs
            )
    found = _dim_argument(op)
    if (
        found is None
        or "1-D dim" in skip
        or not base
        or not isinstance(base[0].args[:1] and base[0].args[0], Tensor)
    ):
        return
    i, arg = found
    positional = i < len(op._schema.positional)
    for s in base[:1]:
        self = s.args[0]
        if self.numel() < 3:
            continue
        for shape, dims in (((3,), (0, -1)), ((1, 3), (0, 1, -2))):
            t = _reshaped(self, lambda _t, shape=shape: shape)
            for d in dims:
                value: Any = [d] if arg.type.is_list else d
                args = list(s.args)
                args[0] = t
                kwargs = dict(s.kwargs)
                if positional and i < len(args):
                    args[i] = value
                elif positional and i == len(args):
                    args.append(value)
                else:
                    kwargs[arg.name] = value
                label = "1-D dim" if len(shape) == 1 else "size-1 dim"
                yield SampleInput(*args, name=f"{label}={d}", **kwargs)
