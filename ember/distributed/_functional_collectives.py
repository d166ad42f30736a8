"""Functional collectives: ops that return a new tensor instead of writing one, so a tracer
records them as graph nodes (``ember.ops._c10d_functional.*``, PyTorch's names and schemas);
DTensor moves data through them, so ``ember.aot`` / ``ember.compile`` trace a DTensor program
that communicates. Each runs the in-place collective of ``ember.distributed`` on a copy.

>>> import ember.distributed._functional_collectives as fc
>>> fc.group_name(None)
'WORLD'
"""

from __future__ import annotations

from typing import Any

import ember
import ember.distributed as dist
from ember._tensor import Tensor
from ember.library import Library

__all__ = ["all_gather_tensor", "all_reduce", "all_to_all_single", "group_name",
           "reduce_scatter_tensor"]  # fmt: skip

_GROUPS: dict[str, Any] = {"WORLD": None}


def group_name(group: Any) -> str:
    """The name the ops take for ``group`` (None: the default group), registered on first use."""
    if group is None:
        return "WORLD"
    for name, g in _GROUPS.items():
        if g is group:
            return name
    name = f"group{len(_GROUPS)}"
    _GROUPS[name] = group
    return name


def _op(name: str) -> Any:
    return getattr(dist.ReduceOp, name.upper())


_lib = Library("_c10d_functional", "DEF")
_lib.define("all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor")
_lib.define("all_gather_into_tensor(Tensor input, int group_size, str group_name) -> Tensor")
_lib.define(
    "reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name) -> Tensor"
)
_lib.define(
    "all_to_all_single(Tensor input, SymInt[] output_split_sizes, SymInt[] input_split_sizes, "
    "str group_name) -> Tensor"
)


def _all_reduce(x: Tensor, reduce_op: str, group_name: str) -> Tensor:
    out = x.contiguous().clone()
    dist.all_reduce(out, op=_op(reduce_op), group=_GROUPS[group_name])
    return out


def _all_gather(x: Tensor, group_size: int, group_name: str) -> Tensor:
    x = x.contiguous()
    out = x.new_empty((group_size * x.shape[0],) + tuple(x.shape[1:]))
    dist.all_gather_into_tensor(out, x, group=_GROUPS[group_name])
    return out


def _reduce_scatter(x: Tensor, reduce_op: str, group_size: int, group_name: str) -> Tensor:
    x = x.contiguous()
    out = x.new_empty((x.shape[0] // group_size,) + tuple(x.shape[1:]))
    dist.reduce_scatter_tensor(out, x, op=_op(reduce_op), group=_GROUPS[group_name])
    return out


def _all_to_all(x: Tensor, out_splits: Any, in_splits: Any, group_name: str) -> Tensor:
    x = x.contiguous()
    out = ember.empty_like(x)
    dist.all_to_all_single(out, x, group=_GROUPS[group_name])
    return out


_lib.impl("all_reduce", _all_reduce, "CPU")
_lib.impl("all_gather_into_tensor", _all_gather, "CPU")
_lib.impl("reduce_scatter_tensor", _reduce_scatter, "CPU")
_lib.impl("all_to_all_single", _all_to_all, "CPU")
_lib.impl("all_reduce", lambda x, op, g: ember.empty_like(x), "Meta")
_lib.impl(
    "all_gather_into_tensor",
    lambda x, n, g: x.new_empty((n * x.shape[0],) + tuple(x.shape[1:])),
    "Meta",
)
_lib.impl(
    "reduce_scatter_tensor",
    lambda x, op, n, g: x.new_empty((x.shape[0] // n,) + tuple(x.shape[1:])),
    "Meta",
)
_lib.impl("all_to_all_single", lambda x, o, i, g: ember.empty_like(x), "Meta")

_ops = ember.ops._c10d_functional


def all_reduce(x: Tensor, reduce_op: str, group: Any) -> Tensor:
    """The reduction (``"sum"``, ``"avg"``, ``"max"``, ``"min"``) of every rank's ``x``."""
    return _ops.all_reduce.default(x, reduce_op, group_name(group))  # type: ignore[no-any-return]


def all_gather_tensor(x: Tensor, group_size: int, group: Any) -> Tensor:
    """Every rank's ``x`` concatenated along dim 0."""
    return _ops.all_gather_into_tensor.default(x, group_size, group_name(group))  # type: ignore[no-any-return]


def reduce_scatter_tensor(x: Tensor, reduce_op: str, group_size: int, group: Any) -> Tensor:
    """This rank's block (along dim 0) of the reduction of every rank's ``x``."""
    return _ops.reduce_scatter_tensor.default(x, reduce_op, group_size, group_name(group))  # type: ignore[no-any-return]


def all_to_all_single(x: Tensor, group_size: int, group: Any) -> Tensor:
    """Block ``j`` (of ``group_size`` equal blocks along dim 0) of ``x`` to rank ``j``."""
    split = [x.shape[0] // group_size] * group_size
    return _ops.all_to_all_single.default(x, split, split, group_name(group))  # type: ignore[no-any-return]
