"""Synthetic bases: one graph for a call whose inputs share memory and are written (NOTE
[synthetic bases]).

# NOTE [synthetic bases]
The trace gets one fake tensor per input, each with memory of its own, so a write to one
input would not be seen through another that views the same memory (``f(x, x[:2])``
writing ``x``; NOTE [aliased inputs] in ``aot_autograd.py``). As PyTorch's AOTAutograd
does, such inputs are replaced by a *synthetic base*: per group of inputs that share
memory, one 1-d tensor viewing all of it (``t.as_strided((n,), (1,), 0)``), passed in
their place; the function traced takes the bases, and remakes each input of the group
as the very view it was (``base.as_strided(size, stride, storage_offset)``) before
calling the user's function. Functionalization then sees every write as a write to a view
of the base, replays it on the other views, and the runtime wrapper writes the base back
into the user's memory as any written input; outputs that view an input are views of the
user's memory.

The sizes, strides and offsets of the inputs are constants of that graph: each layout met
is compiled once (a dict by layout, inside the one signature that marked the inputs as
sharing memory). Not given a synthetic base, so still run eagerly by ``ember.compile``
(a bare ``aot_function`` raises): groups whose inputs require grad under grad mode (the
views' autograd history would be lost) and groups of different dtypes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember._graph_break import GraphBreak
from ember._tensor import Tensor
from ember.aot.guards import memory_id
from ember.dispatch import state
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["AliasedWrite", "synthetic_base_runner"]


class AliasedWrite(GraphBreak):
    """A written input shares memory with another input (NOTE [aliased inputs])."""


#: how a flat argument is remade: ("view", group, size, stride, offset), ("input", k)
#: (the k-th tensor of its own memory) or ("const",) (a non-tensor, part of the signature)
_Item = tuple[Any, ...]


def _layout(
    flat: Sequence[Any],
) -> tuple[tuple[_Item, ...], list[Tensor], list[Tensor]] | None:
    """How to remake ``flat`` from synthetic bases (one per group of tensors sharing
    memory) and the other tensors, and those two lists; None when a group cannot have a
    base (different dtypes, autograd history needed, memory ember cannot name)."""
    members: dict[int, dict[int, Tensor]] = {}
    for a in flat:
        if isinstance(a, Tensor):
            m = memory_id(a)
            key = id(a) if m is None else m
            members.setdefault(key, {})[id(a)] = a
    group_of: dict[int, int] = {}
    bases: list[Tensor] = []
    grad = state.local.grad_enabled
    for key, ts in members.items():
        if len(ts) < 2:
            continue
        group = list(ts.values())
        first = group[0]
        if any(t.dtype != first.dtype for t in group) or (
            grad and any(t.requires_grad for t in group)
        ):
            return None
        n = first.untyped_storage().nbytes() // first.element_size()
        group_of[key] = len(bases)
        bases.append(first.as_strided((n,), (1,), 0))
    loner: dict[int, int] = {}
    others: list[Tensor] = []
    items: list[_Item] = []
    for a in flat:
        if not isinstance(a, Tensor):
            items.append(("const",))
            continue
        m = memory_id(a)
        g = group_of.get(id(a) if m is None else m)
        if g is not None:
            items.append(("view", g, tuple(a.shape), a.stride(), a.storage_offset()))
            continue
        if id(a) not in loner:
            loner[id(a)] = len(others)
            others.append(a)
        items.append(("input", loner[id(a)]))
    return tuple(items), bases, others


def _remade(
    fn: Callable[..., Any], spec: Any, template: Sequence[Any], items: tuple[_Item, ...], nb: int
) -> Callable[..., Any]:
    """``fn`` taking synthetic bases then the other tensors (NOTE [synthetic bases])."""

    def with_bases(*inputs: Any) -> Any:
        vals = list(template)
        for pos, item in enumerate(items):
            if item[0] == "view":
                vals[pos] = inputs[item[1]].as_strided(item[2], item[3], item[4])
            elif item[0] == "input":
                vals[pos] = inputs[nb + item[1]]
        args, kwargs = tree_unflatten(vals, spec)
        return fn(*args, **kwargs)

    with_bases.__name__ = getattr(fn, "__name__", "fn")
    return with_bases


def synthetic_base_runner(
    fn: Callable[..., Any],
    flat: Sequence[Any],
    spec: Any,
    compile_fn: Callable[[Callable[..., Any]], Callable[..., Any]],
) -> Callable[..., Any] | None:
    """A callable running ``fn(*args, **kwargs)`` for arguments of ``flat``'s signature
    through ``compile_fn(with_bases)`` per layout (NOTE [synthetic bases]); None when
    ``flat``'s shared inputs cannot have a base."""
    if _layout(flat) is None:
        return None
    template = [None if isinstance(a, Tensor) else a for a in flat]
    compiled: dict[tuple[_Item, ...], Callable[..., Any]] = {}

    def run(*args: Any, **kwargs: Any) -> Any:
        now, _ = tree_flatten((args, kwargs))
        found = _layout(now)
        if found is None:  # (the same signature: only if requires_grad changed meaning)
            return fn(*args, **kwargs)
        items, bases, others = found
        inner = compiled.get(items)
        if inner is None:
            inner = compiled[items] = compile_fn(_remade(fn, spec, template, items, len(bases)))
        return inner(*bases, *others)

    return run
