"""``make_fx(pre_dispatch=True)``: tracing on the PreDispatch key.

# NOTE [pre-dispatch tracing]
PyTorch's pre-dispatch graphs (what ``torch.export`` starts from) hold the ops as the user
called them: above autograd, so no backward detail; before a CompositeImplicitAutograd
decomposition, so ``linear`` and ``dropout`` stay whole; and with grad-mode switches as
``_set_grad_enabled`` calls, since a ``no_grad`` block changes what the graph means. ember
does the same on its ``PreDispatch`` key: while a trace runs the key is in the thread's
include set, so every op reaches ``pre_dispatch_fallback`` first (the key is one of
``FALLBACK_BEFORE_DECOMPOSITION``); the fallback runs the op with the key excluded (its
inner ops, autograd and the kernels below run as usual and are not recorded) and records one
node, through the same tracker as the default tracer (inputs, constants, views and value
reads as NOTE [make_fx] says). Before each op, and at the end, a change of grad mode since
the last node is recorded as ``ember._C._set_grad_enabled(mode)``. Mutations stay in the
graph as the in-place ops they are, as in PyTorch's pre-dispatch graphs (no
functionalization).
"""

from __future__ import annotations

import threading
from typing import Any

from ember import _C
from ember.dispatch import dispatcher, state
from ember.dispatch.keys import PRE_DISPATCH_BIT, DispatchKey
from ember.ops.registry import OpOverload


class _Slot(threading.local):
    def __init__(self) -> None:
        self.tracer: PreDispatchTracer | None = None


_SLOT = _Slot()


class PreDispatchTracer:
    """One pre-dispatch trace: records into ``tracker`` while its with-block runs."""

    def __init__(self, tracker: Any) -> None:
        self.tracker = tracker
        self.grad_enabled = state.local.grad_enabled
        self._previous: PreDispatchTracer | None = None
        self._guard = state.KeyGuard(include=PRE_DISPATCH_BIT)

    def sync_grad_mode(self) -> None:
        """Record a grad-mode switch made since the last node (NOTE [pre-dispatch tracing])."""
        now = state.local.grad_enabled
        if now != self.grad_enabled:
            node = self.tracker.graph.call_function(
                _C._set_grad_enabled, (now,), name="_set_grad_enabled"
            )
            node.meta["val"] = None
            self.grad_enabled = now

    def run(self, op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        tr = self.tracker
        self.sync_grad_mode()
        decomp = tr.decomposition_table.get(op)
        if decomp is not None:  # its parts are recorded as they reach the key
            out = decomp(*args, **kwargs)
            if out is not NotImplemented:
                return out
        out = state.call_excluding(PRE_DISPATCH_BIT, op, args, kwargs)
        tr.record(op, args, kwargs, out)
        return out

    @staticmethod
    def paused() -> state.KeyGuard:
        """A block whose ops no pre-dispatch trace records (they run below the key)."""
        return state.exclude_keys(PRE_DISPATCH_BIT)

    def __enter__(self) -> PreDispatchTracer:
        self._previous, _SLOT.tracer = _SLOT.tracer, self
        self._guard.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._guard.__exit__(*exc)
        _SLOT.tracer = self._previous


def recording_tracer() -> PreDispatchTracer | None:
    """The pre-dispatch trace that records this thread's calls now: one is running and its
    key is not excluded (inside an op it records, the op's own calls are not recorded)."""
    tracer = _SLOT.tracer
    return tracer if tracer is not None and state.is_active(PRE_DISPATCH_BIT) else None


def pre_dispatch_fallback(
    op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The PreDispatch key's boxed fallback: the thread's tracer records ``op``; with none
    (the key included by hand), the op runs on below."""
    tracer = _SLOT.tracer
    if tracer is None:
        return state.call_excluding(PRE_DISPATCH_BIT, op, args, kwargs)
    return tracer.run(op, args, kwargs)


dispatcher.set_fallback(DispatchKey.PreDispatch, pre_dispatch_fallback)
