"""The CPU kernels PyTorch 2.13 has no uint16/uint32/uint64 version of, refusing them with
its error (NOTE [shell unsigned dtypes] in ``ember/dtypes.py``).

NumPy computes every op in these dtypes, so without this ember would answer where PyTorch
raises. The pointwise ops refuse them through their promotion rules
(``promotion.SHELL_POINTWISE``); the ops below are wrapped once every kernel is registered:
the wrapper looks at the dtype of each tensor argument (and a factory's ``dtype=``) and
raises PyTorch's ``"<kernel>" not implemented for 'UInt16'``. The products (``mm``,
``addmm``, ``bmm``, ``dot``, ``mv``) refuse them in their own slow path instead, and
``index_select`` (an embedding's lookup) is left unwrapped: both run too often for a
wrapper (``tests/test_uint_dtypes.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember import dtypes
from ember._tensor import Tensor
from ember.dispatch.dispatcher import KIND_PLAIN
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.registry import impl, ops

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
    aten.masked_select.default: "masked_select", aten.take.default: "take_cpu",
    aten.index_add.default: "index_add_", aten.index_copy.default: "index_copy_cpu",
    aten.index_fill.int_Scalar: "index_fill_cpu", aten.index_fill.int_Tensor: "index_fill_cpu",
    aten.index_put.default: "index_put",
    aten.gather.default: "scatter_gather_tensor_cpu",
    aten.scatter.src: "scatter_gather_tensor_cpu", aten.scatter.value: "scatter_fill_cpu",
    aten.bincount.default: "bincount_cpu", aten.searchsorted.Tensor: "searchsorted_out_cpu",
    aten.trace.default: "trace", aten.isin.Tensor_Tensor: "isin_default_cpu",
}  # fmt: skip


def refusal(kernel: str, dt: dtypes.dtype) -> NotImplementedError:
    """PyTorch's error for a kernel without a version for ``dt``."""
    return NotImplementedError(
        f"\"{kernel}\" not implemented for '{dt._short}' (ember has it as PyTorch 2.13 "
        f"does: cast with .to(ember.int64) or .long() first)"
    )


def _refusing(kernel: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def refusing(*args: Any, **kwargs: Any) -> Any:
        for a in args:
            if type(a) is Tensor or isinstance(a, Tensor):
                if a._edata.dtype in SHELL_NP:
                    raise refusal(kernel, a.dtype)
        d = kwargs.get("dtype")
        if d in dtypes.SHELL_DTYPES:
            raise refusal(kernel, d)
        return fn(*args, **kwargs)

    refusing.__name__ = getattr(fn, "__name__", "kernel")
    refusing.__doc__ = fn.__doc__
    return refusing


def refuse_shell_kernels() -> None:
    """Wrap the CPU kernels of ``REFUSED`` and of their in-place and out= variants (once
    every kernel is registered)."""
    targets = dict(REFUSED)
    for variant, functional in FUNCTIONAL_OF.items():
        if functional in REFUSED:
            targets.setdefault(variant, REFUSED[functional])
    for op, kernel in targets.items():
        k = op.registered(CPU)
        if k is None or k[1] != KIND_PLAIN or getattr(k[0], "_refuses_shell", False):
            continue
        wrapped = _refusing(kernel, k[0])
        wrapped._refuses_shell = True  # type: ignore[attr-defined]
        impl(op, CPU, wrapped)


def check_product(a: np.ndarray, kernel: str) -> None:
    """The products' refusal, in their slow path."""
    if a.dtype in SHELL_NP:
        raise refusal(kernel, dtypes.FROM_NUMPY[a.dtype])
