"""Registering batching rules on the FuncTorchBatched key, and the slow fallback.

# NOTE [batching rules]
A batching rule is ``rule(op, level, args, kwargs)``: ``level`` is the highest vmap level
among the call's BatchedTensors (NOTE [vmap levels] in ``tensor.py``); the rule unwraps the
arguments of that level (``unwrap``: the physical tensor, batch dimension at 0), runs
ordinary ops on them and wraps the results (``wrap``). ``batch_rule(op, ...)`` registers it
as the op's boxed kernel for ``FuncTorchBatched``, like any other kernel (look it up with
``op.has_kernel_for_dispatch_key``); one rule serves a family of ops. An op without a rule
decomposes first (its CompositeImplicitAutograd kernel, whose parts have rules), and
otherwise reaches the key's fallback, ``slow_fallback``: a loop over the batch that warns
with the op's name (PyTorch's "slow fallback"), so a missing rule costs time, never a wrong
answer.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ember._batched.tensor import BatchedTensor, Level, level_of, wrap
from ember._tensor import Tensor
from ember.dispatch import dispatcher, state
from ember.dispatch.dispatcher import KIND_BOXED
from ember.dispatch.keys import AUTOGRAD_BIT, DispatchKey
from ember.ops.native.inplace_views import VIEW_OF
from ember.ops.registry import OpOverload, ops
from ember.random import get_rng_state, set_rng_state

Rule = Callable[[OpOverload, Level, tuple[Any, ...], dict[str, Any]], Any]

#: every op with a batching rule, and the rule (for docs and coverage tests)
RULES: dict[OpOverload, Rule] = {}
_local = state.local


def top_level(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Level:
    """The highest vmap level among the BatchedTensors in ``args`` and ``kwargs``."""
    best = 0
    for x in (*args, *kwargs.values()):
        if type(x) is BatchedTensor:
            if x._level > best:
                best = x._level
        elif type(x) in (list, tuple):
            for t in x:
                if type(t) is BatchedTensor and t._level > best:
                    best = t._level
    return level_of(best)


def _kernel(rule: Rule, logical: bool) -> Callable[..., Any]:
    if logical:  # a decomposition into logical ops: each of them dispatches on its own

        def decomposed(
            op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any:
            return rule(op, top_level(args, kwargs), args, kwargs)

        return decomposed

    def kernel(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        level = top_level(args, kwargs)
        if _local.exclude & AUTOGRAD_BIT and not level.autograd_excluded:
            # the level's own dispatch state (NOTE [vmap levels])
            with state.KeyGuard(allow=AUTOGRAD_BIT):
                return rule(op, level, args, kwargs)
        return rule(op, level, args, kwargs)

    return kernel


def batch_rule(*op_list: OpOverload, logical: bool = False) -> Callable[[Rule], Rule]:
    """Register the decorated function as the batching rule of every op in ``op_list``
    (NOTE [batching rules]); ``logical``: the rule only calls ops on the logical
    (BatchedTensor) arguments, which dispatch on their own."""

    def register(rule: Rule) -> Rule:
        for op in op_list:
            register_rule(op, rule, logical)
        return rule

    return register


def register_rule(op: OpOverload, rule: Rule, logical: bool = False) -> None:
    RULES[op] = rule
    kernel = _kernel(rule, logical)
    if op._schema.is_mutable:
        kernel = _bumping(kernel)
    dispatcher.set_kernel(op, DispatchKey.FuncTorchBatched, kernel, KIND_BOXED)


def _bumping(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` of an op that writes an argument, then the written BatchedTensors' versions
    bumped (NOTE [batched versions])."""

    def bumping(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = kernel(op, ks, args, kwargs)
        bump_written(op, args, kwargs)
        return out

    return bumping


def bump_written(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Bump the version of every BatchedTensor ``op`` wrote.

    # NOTE [batched versions]
    Backend kernels bump the version of the tensor they write: under vmap that is the
    physical tensor, not the BatchedTensor the function holds, whose counter autograd's
    saved tensors read. So the rule of an op that writes an argument bumps the written
    BatchedTensors too, and an in-place change to a value saved for backward raises
    PyTorch's error under ``vmap(grad(f))`` as it does without vmap.
    """
    for x in _written(op, args, kwargs):
        if type(x) is BatchedTensor:
            x._bump_version()


def physical(level: Level, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with the level's own dispatch state, as a rule's physical ops
    run (NOTE [vmap levels]): for a logical rule (``batch_rule(logical=True)``) that takes a
    physical shortcut."""
    if _local.exclude & AUTOGRAD_BIT and not level.autograd_excluded:
        with state.KeyGuard(allow=AUTOGRAD_BIT):
            return fn(*args, **kwargs)
    return fn(*args, **kwargs)


def unwrap(x: Any, level: Level) -> tuple[Any, bool]:
    """``x``'s physical tensor (batch dimension at 0) and True if it is batched at
    ``level``; else ``x`` itself and False."""
    if type(x) is BatchedTensor and x._level == level.level:
        return x._value, True
    return x, False


def wrap_all(out: Any, level: Level) -> Any:
    """Every tensor in ``out`` (a tensor, or a tuple or list of them) wrapped at ``level``."""
    if isinstance(out, Tensor):
        return wrap(out, level.level)
    if isinstance(out, (tuple, list)):
        made = [wrap_all(o, level) for o in out]
        return type(out)(made) if type(out) in (tuple, list) else type(out)(*made)
    return out


def materialize(x: Any, level: Level) -> Any:
    """``x``'s physical tensor, with the batch dimension added (expanded) if it is not
    batched at ``level``."""
    if isinstance(x, Tensor):
        v, b = unwrap(x, level)
        return v if b else v.expand(level.size, *v.shape)
    return x


# --------------------------------------------------------------------------- fallback

_INPLACE_ERROR = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
    "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
    "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
    "use out-of-place operators instead of inplace arithmetic. If said operator is being "
    "called inside the PyTorch framework, please file a bug report instead. ({op})"
)


def inplace_error(op: OpOverload) -> RuntimeError:
    """PyTorch's error for writing batched values into a tensor that is not batched."""
    return RuntimeError(_INPLACE_ERROR.format(op=op.name()))


def _select(x: Any, level: Level, i: int) -> Any:
    if type(x) is BatchedTensor and x._level == level.level:
        return x._value.select(0, i)
    if type(x) in (list, tuple):
        return type(x)(_select(t, level, i) for t in x)
    return x


def _any_batched(xs: Any, level: Level) -> bool:
    for x in xs:
        if type(x) is BatchedTensor and x._level == level.level:
            return True
        if type(x) in (list, tuple) and _any_batched(x, level):
            return True
    return False


def _stack(outs: list[Any], op: OpOverload, level: Level) -> Any:
    first = outs[0]
    if isinstance(first, Tensor):
        return wrap(ops.aten.stack.default(outs), level.level)
    if isinstance(first, (tuple, list)):
        parts = [_stack([o[j] for o in outs], op, level) for j in range(len(first))]
        return type(first)(parts) if type(first) in (tuple, list) else type(first)(*parts)
    if first is None or all(o == first for o in outs):
        return first
    raise RuntimeError(
        f"vmap: {op.name()} returned a non-tensor value that differs between examples "
        f"({outs[:3]}...): vmap can only return tensors that vary over the batch"
    )


#: in-place ops that change ``self``'s shape or storage, not its values: a loop over the
#: examples' slices cannot do that to the batch, so the fallback refuses them as view ops
METADATA_WRITES: set[OpOverload] = {
    *(getattr(ops.aten.set_, o) for o in ops.aten.set_.overloads()),
    *VIEW_OF,
}


def slow_fallback(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``op`` once per example and stack the results, with a warning naming the op
    (NOTE [batching rules])."""
    level = top_level(args, kwargs)
    schema = op._schema
    if op.is_view or op in METADATA_WRITES:
        raise RuntimeError(
            f"vmap: Batching rule not implemented for {op.name()}; the fallback path doesn't "
            "work on out= or view ops. Please file an issue."
        )
    warnings.warn(
        f"There is a performance drop because we have not yet implemented the batching rule "
        f"for {op.name()}. Please file us an issue on GitHub so that we can prioritize its "
        "implementation.",
        UserWarning,
        stacklevel=2,
    )
    written = _written(op, args, kwargs)
    if written:
        for x in written:
            if not (type(x) is BatchedTensor and x._level == level.level):
                raise inplace_error(op)
    if "nondeterministic_seeded" in op.tags:
        from ember._batched.random import check_randomness  # cycle: random imports this module

        check_randomness(level, op)
    if _local.exclude & AUTOGRAD_BIT and not level.autograd_excluded:
        with state.KeyGuard(allow=AUTOGRAD_BIT):
            outs = _loop(op, level, args, kwargs)
    else:
        outs = _loop(op, level, args, kwargs)
    if written:
        bump_written(op, args, kwargs)  # NOTE [batched versions]
    if written and schema.returns and schema.returns[0].alias_info is not None:
        return written[0] if len(schema.returns) == 1 else tuple(written)
    return _stack(outs, op, level)


def _loop(op: OpOverload, level: Level, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list:
    same = level.randomness == "same" and "nondeterministic_seeded" in op.tags
    state_before = None
    if same:
        state_before = get_rng_state()
    outs = []
    for i in range(level.size):
        if same:
            set_rng_state(state_before)
        a = tuple(_select(x, level, i) for x in args)
        k = {n: _select(v, level, i) for n, v in kwargs.items()}
        outs.append(op(*a, **k))
    return outs


def _written(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    out = []
    pos = 0
    for a in op._schema.arguments:
        if a.is_write:
            x = kwargs.get(a.name) if a.kwarg_only or pos >= len(args) else args[pos]
            if isinstance(x, Tensor):
                out.append(x)
        if not a.kwarg_only:
            pos += 1
    return out


dispatcher.set_fallback(DispatchKey.FuncTorchBatched, slow_fallback)
