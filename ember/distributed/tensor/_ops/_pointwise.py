"""Sharding rules of pointwise ops (every op tagged ``pointwise``), with broadcasting: an
output dimension may be sharded when every input that has it (not broadcast from size 1) is
sharded the same way; Partial passes through the ops linear in it."""

from __future__ import annotations

from typing import Any

import ember
from ember.distributed.tensor._dispatch import RULES, Candidate, OpCtx, register_rule
from ember.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard
from ember.ops.registry import all_overloads

aten = ember.ops.aten

__all__ = ["pointwise_candidates"]

# ops whose result is linear in every tensor argument together (f(a1+a2, b1+b2) = f(a1, b1) +
# f(a2, b2)): Partial inputs give a Partial output
_LINEAR_ALL = {"add", "sub", "add_", "sub_", "neg", "neg_", "clone", "detach", "alias",
               "_to_copy", "positive", "copy_", "zeros_like"}  # fmt: skip
# ops linear in one tensor argument when the others are Replicate (the first for backward
# formulas: gradient times something of the input)
_LINEAR_ONE = {"mul", "mul_", "div", "div_", "threshold_backward", "gelu_backward",
               "silu_backward", "sigmoid_backward", "tanh_backward", "where"}  # fmt: skip
_FIRST_ONLY = {"div", "div_", "threshold_backward", "gelu_backward", "silu_backward",
               "sigmoid_backward", "tanh_backward"}  # fmt: skip


def pointwise_candidates(ctx: OpCtx, m: int) -> list[Candidate]:
    out = ctx.out_meta[0]
    nd = len(out.shape)
    n_out = len(ctx.out_meta)
    specs = ctx.specs
    cands: list[Candidate] = []
    for d in range(nd):
        ins: list[Placement] = []
        useful = False
        for s in specs:
            dd = d - (nd - s.ndim)
            if dd >= 0 and s.shape[dd] == out.shape[d]:
                ins.append(Shard(dd))
                useful = True
            else:
                ins.append(Replicate())
        if useful:
            cands.append(Candidate(tuple(ins), (Shard(d),) * n_out))
    name = str(ctx.op).split(".")[1]
    cur = [s.placements[m] for s in specs]
    partial = next((p for p in cur if isinstance(p, Partial)), None)
    if partial is not None and partial.reduce_op in ("sum", "avg"):
        if name in _LINEAR_ALL:
            cands.append(Candidate((partial,) * len(specs), (partial,) * n_out))
        elif name in _LINEAR_ONE:
            which = [0] if name in _FIRST_ONLY else range(len(specs))
            for j in which:
                ins2 = tuple(partial if i == j else Replicate() for i in range(len(specs)))
                if name == "where" and j == 0:
                    continue  # the condition is not a linear argument
                cands.append(Candidate(ins2, (partial,) * n_out))
    cands.append(Candidate(tuple(Replicate() for _ in specs), (Replicate(),) * n_out))
    return cands


def _register() -> None:
    for op in all_overloads():
        if op.namespace != "aten" or "pointwise" not in getattr(op, "tags", ()):
            continue
        if op._schema.is_out:
            continue
        RULES[op] = pointwise_candidates


_register()
for _op in (aten.clone.default, aten.detach.default, aten.alias.default, aten._to_copy.default,
            aten.copy_.default, aten.contiguous.default, aten.positive.default,
            aten.masked_fill.Scalar, aten.masked_fill.Tensor, aten.masked_fill_.Scalar,
            aten.masked_fill_.Tensor):  # fmt: skip
    register_rule(_op)(pointwise_candidates)


def _like_candidates(ctx: OpCtx, m: int) -> list[Candidate]:
    """``zeros_like`` and friends: the input's layout, a Partial one read as Replicate."""
    p = ctx.specs[0].placements[m]
    out: Any = Replicate() if isinstance(p, Partial) else p
    return [Candidate((None,), (out,))]


for _op in (aten.ones_like.default, aten.zeros_like.default, aten.empty_like.default,
            aten.full_like.default, aten.fill_.Scalar, aten.zero_.default):  # fmt: skip
    register_rule(_op)(_like_candidates)


def _new_candidates(ctx: OpCtx, m: int) -> list[Candidate]:
    """``new_zeros`` and friends: a new Replicate tensor of the given global size (the input
    only lends its dtype)."""
    return [Candidate((None,), (Replicate(),))]


for _op in (aten.new_zeros.default, aten.new_ones.default, aten.new_empty.default,
            aten.new_full.default):  # fmt: skip
    register_rule(_op)(_new_candidates)
