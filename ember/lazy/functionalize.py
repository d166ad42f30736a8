"""The Functionalize key: a call that writes its arguments becomes its functional op and a
rebinding, so the layers below it see pure ops.

NOTE [functionalize]
A lazy tensor carries the Functionalize key above its Lazy key (``LAZY_KEYS``). Ops that
write nothing pass through to the Lazy key untouched. An in-place or ``out=`` op with a
functional counterpart in the registry (``FUNCTIONAL_OF``: ``add_.Tensor`` and ``add.out``
→ ``add.Tensor``, ``_foreach_mul_.List`` → ``_foreach_mul.List``, ``copy_`` → ``copy``) runs
in three steps:

1. its own Meta rule runs on proxies of the arguments: PyTorch's errors for this call (a
   result that cannot broadcast to ``self``, a cast ``self`` cannot hold, an ``out=`` resize)
   and its version-counter bumps, which the proxies share with the lazy tensors;
2. the functional op runs below this key (the Lazy key records it as a pure node);
3. each written tensor is *rebound* to its new value, cast to its dtype: a base's pending
   value becomes the new node; a view's base becomes "the old storage with this region
   replaced" (a ``write`` node), and every other view of that base re-derives from it
   (NOTE [lazy views] in ``recorder.py``).

So an optimizer's ``p.add_(g, alpha=-lr)`` is recorded as ``add(p, g)`` and ``p`` rebound
to it: an elementwise op the compiler can fuse, and, where the old value of ``p`` is dead,
turn back into an in-place write. A call that writes a tensor of another device (a cpu
tensor's ``copy_`` from a lazy one), and ops without a functional counterpart (``set_``,
``detach_``) or with writes their schema leaves undeclared (``native_batch_norm``'s running
statistics: NOTE [undeclared writes] in ``ember/ops/writes.py``), go down to the Lazy key,
which records them as nodes that copy what they write (NOTE [lazy mutation]).
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_KEYSET, Kernel
from ember.dispatch.keys import META_BIT, DispatchKey, below
from ember.lazy.executor import current
from ember.lazy.recorder import _Call, _geometry, _rebind, _rebuild
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.registry import OpOverload, ops
from ember.ops.writes import UNDECLARED_WRITES, written_tensors

BELOW = below(DispatchKey.Functionalize)
_to_copy = ops.aten._to_copy.default


def functionalize(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The Functionalize key's kernel for an op that writes (NOTE [functionalize])."""
    functional = FUNCTIONAL_OF[op]
    call = _Call(op)
    written = call.written(args, kwargs)
    if not written or len(written) != len(written_tensors(op, args, kwargs)):
        # a write to a tensor that is not lazy: the Lazy key runs it on the cpu
        return op.redispatch(ks & BELOW, *args, **kwargs)
    margs, mkwargs, _, _ = call.arguments(args, kwargs)
    before = [_geometry(call.proxy_of[id(t)]) for t in written]
    result = op.redispatch(META_BIT, *margs, **mkwargs)  # step 1: errors, versions
    schema = op._schema
    if schema.is_out:
        outs = {a.name for a in schema.kwarg_only if a.is_write}
        fkwargs = {k: v for k, v in kwargs.items() if k not in outs}
        new = functional.redispatch(ks & BELOW, *args, **fkwargs)  # step 2
    else:
        new = functional.redispatch(ks & BELOW, *args, **kwargs)
    values = _tensors(new)
    for t, v, old in zip(written, values, before, strict=True):  # step 3
        proxy = call.proxy_of[id(t)]
        if v.dtype is not t.dtype:
            v = _to_copy.redispatch(ks & BELOW, v, dtype=t.dtype)
        if not schema.is_out and _geometry(proxy) != old:
            raise AssertionError(f"{op}: an in-place op changed its tensor's geometry")
        _rebind(t, current(v._data), proxy)
    return _rebuild(result, call, {})


def _tensors(result: Any) -> list[Tensor]:
    """The tensors of a functional op's result, in order (a list result flattened)."""
    if isinstance(result, Tensor):
        return [result]
    out: list[Tensor] = []
    for r in result:
        out.extend(_tensors(r))
    return out


def _passthrough(op: OpOverload) -> Kernel:
    def through(ks: int, *args: Any, **kwargs: Any) -> Any:
        return op.redispatch(ks & BELOW, *args, **kwargs)

    return through, KIND_KEYSET


def specialize(op: OpOverload) -> Kernel:
    """An op that writes nothing, or that the Lazy key must record as written, passes
    through; the others are functionalized."""
    if op in FUNCTIONAL_OF and op not in UNDECLARED_WRITES:
        return functionalize, dispatcher.KIND_BOXED
    return _passthrough(op)


def _fallback(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    fn, kind = specialize(op)
    if kind == KIND_KEYSET:
        return fn(ks, *args, **kwargs)
    return fn(op, ks, args, kwargs)


dispatcher.set_fallback(DispatchKey.Functionalize, _fallback, specialize=specialize)
