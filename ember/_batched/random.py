"""Random ops under vmap, as its ``randomness`` says (PyTorch's semantics):

- ``"error"``: any random op inside the function raises;
- ``"different"``: each example draws its own values: a random op on batched tensors runs
  on the physical ones, a random factory (``randn(3)``) makes ``[batch, 3]`` values batched
  at every level that asks for different randomness;
- ``"same"``: every example sees the same values: a ``*_like`` op or a factory draws once
  with the logical shape (an unbatched result); an op whose values depend on its batched
  inputs (``bernoulli(p)``) runs per example, the generator reset to the same state each
  time.

Factories have no tensor argument to carry the FuncTorchBatched key; while a vmap runs its
thread includes the ``FuncTorchVmapMode`` key, whose kernels are the random factories' and
whose fallback passes every other op through.
"""

from __future__ import annotations

from typing import Any

from ember._batched.args import align, bind, call
from ember._batched.kernel import _loop, register_rule, unwrap
from ember._batched.tensor import LEVELS, Level, wrap
from ember._tensor import Tensor
from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_BOXED
from ember.dispatch.keys import VMAP_MODE_BIT, DispatchKey, below
from ember.dispatch.state import KeyGuard
from ember.ops.registry import OpOverload, all_overloads, ops

aten = ops.aten

_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap"
)
_INPLACE = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will "
    "appear like same randomness. If this is necessary for your usage, please file an issue "
    "with functorch."
)
_LIKE = {
    o
    for name in ("rand_like", "randn_like", "randint_like")
    for o in (getattr(getattr(aten, name), ov) for ov in getattr(aten, name).overloads())
    if not o._schema.is_out
}


def check_randomness(level: Level, op: OpOverload) -> None:
    if level.randomness == "error":
        raise RuntimeError(_ERROR)


def _is_random(op: OpOverload, values: dict[str, Any]) -> bool:
    if op is aten.native_dropout.default:
        train = values.get("train")
        return bool(train is None or train) and values.get("p", 0) > 0
    return True


def random_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    random = _is_random(op, values)
    if random:
        check_randomness(level, op)
    mutable = op._schema.is_mutable
    if random and level.randomness == "same":
        if op in _LIKE:
            return call(op, {**values, "self": unwrap(values["self"], level)[0].select(0, 0)})
        outs = _loop(op, level, args, kw)
        if mutable:
            return args[0]
        return _stack(outs, level)
    tensors = [(n, x) for n, x in values.items() if isinstance(x, Tensor)]
    if mutable and not unwrap(values["self"], level)[1]:
        raise RuntimeError(_INPLACE)
    rank = max(x.dim() for _, x in tensors)
    fold = op is aten.multinomial.default and rank == 2
    for name, x in tensors:
        p = align(x, level, rank)
        values[name] = p.reshape(-1, p.shape[-1]) if fold else p
    with KeyGuard(exclude=VMAP_MODE_BIT):  # the physical draw is this level's, done here
        out = call(op, values)
    if mutable:
        return args[0]
    if fold:
        out = out.view(level.size, -1, out.shape[-1])
    if isinstance(out, tuple):
        return tuple(wrap(o, level.level) for o in out)
    return wrap(out, level.level)


def _stack(outs: list[Any], level: Level) -> Any:
    first = outs[0]
    if isinstance(first, tuple):
        return tuple(_stack([o[i] for o in outs], level) for i in range(len(first)))
    return wrap(aten.stack.default(outs), level.level)


def _random_ops() -> list[OpOverload]:
    out = [*_LIKE, aten.native_dropout.default]
    for op in all_overloads():
        s = op._schema
        if op.namespace != "aten" or s.is_out or "nondeterministic_seeded" not in op.tags:
            continue
        if any(a.type.base == "Tensor" for a in s.arguments):
            out.append(op)
    return out


for _op in _random_ops():
    register_rule(_op, random_rule)


# ------------------------------------------------------------------ factories

_BELOW_MODE = below(DispatchKey.FuncTorchVmapMode)


def factory_kernel(op: OpOverload, ks: int, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """A random factory inside vmap (NOTE at the top of this file)."""
    levels = [lvl for lvl in LEVELS.stack]
    if any(lvl.randomness == "error" for lvl in levels):
        raise RuntimeError(_ERROR)
    different = [lvl for lvl in levels if lvl.randomness == "different"]
    if not different:
        return op.redispatch(ks & _BELOW_MODE, *args, **kw)
    values = bind(op, args, kw)
    if "size" in values:
        values["size"] = [*(lvl.size for lvl in different), *values["size"]]
        out = _redispatch(op, ks, values)
    else:  # randperm(n): one permutation per example
        outs = [_redispatch(op, ks, values) for _ in range(_count(different))]
        out = aten.stack.default(outs).view(*(lvl.size for lvl in different), -1)
    for lvl in different:  # outermost first: each level wraps the one outside it
        out = wrap(out, lvl.level)
    return out


def _count(levels: list[Level]) -> int:
    n = 1
    for lvl in levels:
        n *= lvl.size
    return n


def _redispatch(op: OpOverload, ks: int, values: dict[str, Any]) -> Any:
    schema = op._schema
    pos = [a for a in schema.positional]
    last = max((i for i, a in enumerate(pos) if a.name in values), default=-1)
    a = [values.get(p.name, p.default_value) for p in pos[: last + 1]]
    k = {p.name: values[p.name] for p in schema.kwarg_only if p.name in values}
    return op.redispatch(ks & _BELOW_MODE, *a, **k)


_FACTORIES = [
    o
    for name in ("rand", "randn", "randint", "randperm", "normal")
    for o in (getattr(getattr(aten, name), ov) for ov in getattr(aten, name).overloads())
    if not o._schema.is_out and not any(a.type.base == "Tensor" for a in o._schema.arguments)
]


def unbatched_random_kernel(
    op: OpOverload, ks: int, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """A random op on tensors no vmap level batches: ``"error"`` raises, ``"same"`` runs it
    once, ``"different"`` runs it batched over the innermost level (an in-place one cannot:
    PyTorch's error)."""
    values = bind(op, args, kw)
    if not _is_random(op, values):
        return op.redispatch(ks & _BELOW_MODE, *args, **kw)
    levels = LEVELS.stack
    if any(lvl.randomness == "error" for lvl in levels):
        raise RuntimeError(_ERROR)
    different = [lvl for lvl in levels if lvl.randomness == "different"]
    if not different:
        return op.redispatch(ks & _BELOW_MODE, *args, **kw)
    if op._schema.is_mutable:
        raise RuntimeError(_INPLACE)
    inner = different[-1]
    first = next(n for n, x in values.items() if isinstance(x, Tensor))
    x = values[first]
    values[first] = wrap(x.unsqueeze(0).expand(inner.size, *x.shape), inner.level)
    return call(op, values)  # now batched: the FuncTorchBatched rule draws per example


for _op in _FACTORIES:
    dispatcher.set_kernel(_op, DispatchKey.FuncTorchVmapMode, factory_kernel, KIND_BOXED)
for _op in _random_ops():
    dispatcher.set_kernel(_op, DispatchKey.FuncTorchVmapMode, unbatched_random_kernel, KIND_BOXED)
dispatcher.set_fallthrough(DispatchKey.FuncTorchVmapMode)
