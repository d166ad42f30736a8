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

Steps 2 and 3 are ``rewrite`` (``ember/ops/functional_rewrite.py``) with this key's way of
running an op and rebinding a lazy tensor; AOTAutograd's functional tracing drives the same
rewrite with its own (NOTE [functional rewrite]).
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_BOXED, Kernel
from ember.dispatch.keys import META_BIT, DispatchKey, below
from ember.lazy.executor import current
from ember.lazy.recipes import MAX_RECIPES, Signature, _build
from ember.lazy.recorder import _Call, _describe, _geometry, _rebind, _rebuild
from ember.ops.functional_rewrite import functional_of, rewrite
from ember.ops.registry import OpOverload, ops
from ember.ops.writes import written_tensors

BELOW = below(DispatchKey.Functionalize)
_to_copy = ops.aten._to_copy.default


class Functionalizer:
    """The Functionalize key's kernel for one op that writes (NOTE [functionalize]). Step 1
    (the Meta rule's checks) is kept per call signature, as recipes are (NOTE [recording
    fast path]): a signature that passed once passes again, and its version bumps and
    result structure are replayed."""

    __slots__ = ("op", "functional", "signature", "checked")

    def __init__(self, op: OpOverload) -> None:
        self.op = op
        functional = functional_of(op)
        assert functional is not None, op
        self.functional = functional
        self.signature = Signature(op)
        #: signature -> (slots of the written tensors, version bumps per slot, result)
        self.checked: dict[Any, tuple[tuple[int, ...], tuple[int, ...], Any]] = {}

    def __call__(
        self, op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        try:
            sig, tensors, _, _ = self.signature.of(args, kwargs)
            known = self.checked.get(sig)
        except TypeError:
            sig, known = None, None
        if known is None:
            return self.first(ks, args, kwargs, sig)
        slots, bumps, result = known
        written = [tensors[i] for i in slots]
        for t, n in zip(written, bumps, strict=True):
            vc = t._vc
            if vc is None:
                t._vc = [n]
            else:
                vc[0] += n
        self.rewrite(ks, args, kwargs, written, [None] * len(written))
        return _build(result, None, tensors)

    def first(self, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any], sig: Any) -> Any:
        """Steps 1 to 3 through proxies, keeping what a later call needs."""
        op = self.op
        call = _Call(op)
        written = call.written(args, kwargs)
        if not written or len(written) != len(written_tensors(op, args, kwargs)):
            # a write to a tensor that is not lazy: the Lazy key runs it on the cpu
            return op.redispatch(ks & BELOW, *args, **kwargs)
        margs, mkwargs, _, _ = call.arguments(args, kwargs)
        before = [_geometry(call.proxy_of[id(t)]) for t in written]
        versions = [t._version for t in written]
        result = op.redispatch(META_BIT, *margs, **mkwargs)  # step 1: errors, versions
        proxies = [call.proxy_of[id(t)] for t in written]
        moved = [_geometry(p) != g for p, g in zip(proxies, before, strict=True)]
        if any(moved) and not op._schema.is_out:
            raise AssertionError(f"{op}: an in-place op changed its tensor's geometry")
        self.rewrite(ks, args, kwargs, written, proxies)
        if sig is not None and not any(moved) and len(self.checked) < MAX_RECIPES:
            slots = tuple(call.slot_of[id(t)] for t in written)
            bumps = tuple(t._version - v for t, v in zip(written, versions, strict=True))
            self.checked[sig] = (slots, bumps, _describe(result, call, {}))
        return _rebuild(result, call, {})

    def rewrite(
        self,
        ks: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        written: list[Tensor],
        proxies: list[Tensor | None],
    ) -> None:
        """Steps 2 and 3 (NOTE [functional rewrite]): the functional op below, then each
        written tensor rebound to its new value, cast to its dtype."""
        below = ks & BELOW

        def run(functional: OpOverload, a: tuple[Any, ...], k: dict[str, Any]) -> Any:
            return functional.redispatch(below, *a, **k)

        def rebind(t: Tensor, v: Tensor, i: int) -> None:
            if v.dtype is not t.dtype:
                v = _to_copy.redispatch(below, v, dtype=t.dtype)
            _rebind(t, current(v._edata), proxies[i])

        rewrite(self.op, self.functional, args, kwargs, written, run, rebind)


def passthrough(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """An op that writes nothing, or whose writes the Lazy key records itself: below."""
    return op.call_boxed(ks & BELOW, args, kwargs)  # (raises for an empty key set)


def specialize(op: OpOverload) -> Kernel:
    """The op's kernel for this key: a ``Functionalizer`` for an op with a functional
    counterpart (NOTE [functionalize]), else the pass-through."""
    if functional_of(op) is not None:
        return Functionalizer(op), KIND_BOXED
    return passthrough, KIND_BOXED


def functionalize_fallback(
    op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The boxed fallback ``specialize`` stands in for, op by op."""
    return specialize(op)[0](op, ks, args, kwargs)


dispatcher.set_fallback(DispatchKey.Functionalize, functionalize_fallback, specialize=specialize)
