"""The CPU kernels PyTorch 2.13 has no uint16/uint32/uint64 version of, refusing them with
its error (NOTE [shell unsigned dtypes] in ``ember/dtypes.py``).

NumPy computes every op in these dtypes, so without this ember would answer where PyTorch
raises. The pointwise ops refuse them through their promotion rules
(``promotion.SHELL_POINTWISE``); the ops below are wrapped once every kernel is registered:
the wrapper looks at the dtype of each tensor argument (and a factory's ``dtype=``) and
raises PyTorch's ``"<kernel>" not implemented for 'UInt16'``. Where PyTorch's answer
depends on the call (``flip`` copying rows whatever the dtype, an empty index returning
before the kernel, ``scatter_reduce`` naming its kernel by ``reduce``), ``REFUSED_WHEN``
holds a rule giving the kernel to name, or None where PyTorch computes. The products
(``mm``, ``addmm``, ``bmm``, ``dot``, ``mv``) refuse them in their own slow path instead,
and so does ``index_select`` (an embedding's lookup; PyTorch refuses only a 0-d or 1-d
``self``): both run too often for a wrapper (``tests/test_uint_dtypes.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember import dtypes
from ember._memory_format import is_non_overlapping_and_dense
from ember._tensor import Tensor
from ember.dispatch.dispatcher import KIND_PLAIN
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.registry import impl, ops
from ember.ops.strides import contiguous

aten = ops.aten
CPU = DispatchKey.CPU
#: the ndarray dtypes of uint16, uint32 and uint64
SHELL_NP = frozenset(d.np for d in dtypes.SHELL_DTYPES)

#: overload -> the name PyTorch's error gives its kernel
REFUSED: dict[Any, str] = {
    aten.arange.start_step: "arange_cpu", aten.arange.default: "arange_cpu",
    aten.arange.start: "arange_cpu", aten.linspace.default: "linspace_cpu",
    aten.eye.default: "eye", aten.eye.m: "eye", aten.randperm.default: "randperm",
    aten.randperm.generator: "randperm",
    aten.max.default: "max_all", aten.min.default: "min_all", aten.max.dim: "max_cpu",
    aten.min.dim: "min_cpu", aten.argmax.default: "argmax_cpu",
    aten.argmin.default: "argmin_cpu", aten.amax.default: "max_values_cpu",
    aten.amin.default: "min_values_cpu", aten.aminmax.default: "aminmax_cpu",
    aten.median.default: "median_cpu", aten.median.dim: "median_cpu",
    aten.kthvalue.default: "kthvalue_cpu", aten.cummax.default: "cummax_cpu",
    aten.cummin.default: "cummin_cpu", aten.topk.default: "topk_cpu",
    aten.flip.default: "flip_cpu", aten.nonzero.default: "nonzero_count_cpu",
    aten.count_nonzero.dim_IntList: "nonzero_count_cpu",
    aten.count_nonzero.default: "nonzero_count_cpu", aten.tril.default: "tril",
    aten.triu.default: "triu", aten.masked_fill.Scalar: "masked_fill",
    aten.masked_fill.Tensor: "masked_fill", aten.masked_scatter.default: "masked_scatter",
    aten.masked_select.default: "masked_select", aten.index_add.default: "index_add_",
    aten.index_copy.default: "index_copy_cpu",
    aten.index_fill.int_Scalar: "index_fill_cpu", aten.index_fill.int_Tensor: "index_fill_cpu",
    aten.bincount.default: "bincount_cpu", aten.trace.default: "trace",
    aten.isin.Tensor_Tensor: "isin_default_cpu", aten.mode.default: "mode_cpu",
    aten.bucketize.Scalar: "searchsorted_out_cpu",
}  # fmt: skip


def _flips_by_copy(self: Tensor, dims: Sequence[int]) -> bool:
    """Whether PyTorch 2.13's ``flip`` of ``self`` over ``dims`` runs without a dtype kernel.

    # NOTE [flip of rows]
    PyTorch's flip iterates over (output, input) with the flipped dimensions' input strides
    negated, after TensorIterator has dropped size-1 dimensions, ordered them by the
    output's strides (the output keeps ``self``'s layout when that is dense) and merged
    adjacent ones. When the innermost is contiguous and unflipped and the next flipped and
    contiguous over it, it copies whole rows with ``memcpy``, for any dtype; otherwise it
    dispatches ``flip_cpu``, which has no uint16/32/64 version. So ``m.flip(0)`` of a
    contiguous matrix works on them and ``x.flip(0)`` of a vector does not. Nothing to flip
    (every flipped dimension of size 1 or stride 0, or one element) is a plain copy.
    """
    size, stride, nd = tuple(self.shape), tuple(self.stride()), self.ndim
    flipped = {d % nd for d in dims} if nd else set()
    flipped = {d for d in flipped if size[d] > 1 and stride[d] != 0}
    if not flipped or self.numel() <= 1:
        return True
    out = stride if is_non_overlapping_and_dense(size, stride) else contiguous(size)
    order = sorted((d for d in range(nd) if size[d] != 1), key=lambda d: out[d])
    # (size, output stride, input stride, flipped) per iterator dimension, merged
    merged: list[list[Any]] = []
    for d in order:
        f = d in flipped
        if merged:
            n, o, i, g = merged[-1]
            if g == f and out[d] == o * n and stride[d] == i * n:
                merged[-1][0] = n * size[d]
                continue
        merged.append([size[d], out[d], stride[d], f])
    if len(merged) < 2:
        return False
    (n0, o0, i0, f0), (_, o1, i1, f1) = merged[0], merged[1]
    return not f0 and f1 and o0 == i0 == 1 and o1 == i1 == n0


def _flip(self: Tensor, dims: Sequence[int]) -> str | None:
    return None if _flips_by_copy(self, dims) else "flip_cpu"


def _rot90(self: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> str | None:
    # PyTorch's rot90 is flips and a transpose: k = 1 flips dims[1], 2 both, 3 dims[0]
    flips = {0: None, 1: [dims[1]], 2: list(dims), 3: [dims[0]]}[k % 4]
    return None if flips is None or len(dims) != 2 else _flip(self, flips)


def _unless_empty(kernel: str, index_at: int) -> Callable[..., str | None]:
    """A rule for ops that return before their kernel when the index is empty."""

    def rule(*args: Any, **kwargs: Any) -> str | None:
        index = args[index_at] if len(args) > index_at else kwargs.get("index")
        return None if isinstance(index, Tensor) and index.numel() == 0 else kernel

    return rule


def _scatter_reduce(
    self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> str | None:
    if index.numel() == 0:
        return None
    if not include_self:
        return "scatter_reduce_exclude_input_init"
    return "scatter_gather_tensor_cpu" + ("" if reduce in ("sum", "prod") else f"_reduce_{reduce}")


def _index_reduce(
    self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
    include_self: bool = True,
) -> str | None:  # fmt: skip
    if not include_self:
        return "index_reduce_func_exclude_input_init"
    if self.ndim <= 1:  # a vector's reduction dispatches on the dtype; a matrix's rows do not
        return "index_func_"
    return {"mean": "add_stub", "amax": "maximum_cpu", "amin": "minimum_cpu"}.get(reduce)


def _searchsorted(sorted_sequence: Tensor, self: Any, **kwargs: Any) -> str | None:
    # PyTorch searches in the two's promoted dtype: a float with a shell dtype is float
    if isinstance(self, Tensor) and (self.dtype in dtypes.SHELL_DTYPES) != (
        sorted_sequence.dtype in dtypes.SHELL_DTYPES
    ):
        return None
    return "searchsorted_out_cpu"


def _bucketize(self: Tensor, boundaries: Tensor, **kwargs: Any) -> str | None:
    return _searchsorted(boundaries, self)


def _index_put(
    self: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False
) -> str:
    # PyTorch writes one value through one bool mask with masked_fill_
    mask = len(indices) == 1 and isinstance(indices[0], Tensor) and indices[0].dtype is dtypes.bool_
    return "masked_fill" if mask and not accumulate and values.numel() == 1 else "index_put"


def _histc(self: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> str:
    # PyTorch finds the range first (aminmax) when none is given, then its bin edges
    return "aminmax_cpu" if min == max else "linspace_cpu"


#: overload -> a rule giving, for a call with a uint16/32/64 tensor, the name PyTorch's
#: error gives its kernel, or None where PyTorch computes the call
REFUSED_WHEN: dict[Any, Callable[..., str | None]] = {
    aten.flip.default: _flip, aten.rot90.default: _rot90,
    aten.take.default: _unless_empty("take_cpu", 1),
    aten.put.default: _unless_empty("take_put_cpu", 1),
    aten.gather.default: _unless_empty("scatter_gather_tensor_cpu", 2),
    aten.scatter.src: _unless_empty("scatter_gather_tensor_cpu", 2),
    aten.scatter.value: _unless_empty("scatter_fill_cpu", 2),
    aten.scatter.reduce: _unless_empty("scatter_gather_tensor_cpu", 2),
    aten.scatter.value_reduce: _unless_empty("scatter_gather_scalar_cpu", 2),
    aten.scatter_add.default: _unless_empty("scatter_gather_tensor_cpu", 2),
    aten.scatter_reduce.two: _scatter_reduce, aten.index_reduce.default: _index_reduce,
    aten.searchsorted.Tensor: _searchsorted, aten.searchsorted.Scalar: _searchsorted,
    aten.bucketize.Tensor: _bucketize, aten.histc.default: _histc,
    aten.index_put.default: _index_put,
}  # fmt: skip


def refusal(kernel: str, dt: dtypes.dtype) -> NotImplementedError:
    """PyTorch's error for a kernel without a version for ``dt``."""
    return NotImplementedError(
        f"\"{kernel}\" not implemented for '{dt._short}' (ember has it as PyTorch 2.13 "
        f"does: cast with .to(ember.int64) or .long() first)"
    )


def _refusing(rule: str | Callable[..., str | None], fn: Callable[..., Any]) -> Callable[..., Any]:
    def refusing(*args: Any, **kwargs: Any) -> Any:
        shell = kwargs.get("dtype") if kwargs.get("dtype") in dtypes.SHELL_DTYPES else None
        for a in args:
            if (type(a) is Tensor or isinstance(a, Tensor)) and a._edata.dtype in SHELL_NP:
                shell = a.dtype
                break
        if shell is not None:
            kernel = rule if isinstance(rule, str) else rule(*args, **kwargs)
            if kernel is not None:
                raise refusal(kernel, shell)
        return fn(*args, **kwargs)

    refusing.__name__ = getattr(fn, "__name__", "kernel")
    refusing.__doc__ = fn.__doc__
    return refusing


def refuse_shell_kernels() -> None:
    """Wrap the CPU kernels of ``REFUSED`` and ``REFUSED_WHEN`` and of their in-place and
    out= variants (once every kernel is registered)."""
    targets: dict[Any, str | Callable[..., str | None]] = {**REFUSED, **REFUSED_WHEN}
    for variant, functional in FUNCTIONAL_OF.items():
        if functional in targets:
            targets.setdefault(variant, targets[functional])
    for op, rule in targets.items():
        k = op.registered(CPU)
        if k is None or k[1] != KIND_PLAIN or getattr(k[0], "_refuses_shell", False):
            continue
        wrapped = _refusing(rule, k[0])
        wrapped._refuses_shell = True  # type: ignore[attr-defined]
        impl(op, CPU, wrapped)


def check_product(a: np.ndarray, b: np.ndarray) -> None:
    """The products' refusal, in their slow path, with the name of PyTorch's kernel for
    the operands' ranks."""
    if a.dtype in SHELL_NP:
        kernel = {(1, 1): "dot", (2, 1): "addmv_impl_cpu", (2, 2): "addmm_impl_cpu_"}
        raise refusal(kernel.get((a.ndim, b.ndim), "bmm"), dtypes.FROM_NUMPY[a.dtype])
