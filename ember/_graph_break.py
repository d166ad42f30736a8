"""What ``ember.compile``'s trace of a user's function cannot put in a graph: side effects
on state the function did not receive (NOTE [compile side effects]).

# NOTE [compile side effects]
``ember.compile`` traces the function once per signature and then runs only the graph, so
anything the function does that is not a value of the graph would happen once, at trace
time, on fake tensors, and never again. Tensors it reads from outside (a closure's, a
global's) are lifted into the graph as inputs (NOTE [lifted tensors] in
``ember/_lift.py``), so reading, differentiating and writing them is part of the graph.
What remains are side effects, recognised while the user's own code runs under
``ember.compile``'s trace (``USER_CODE``; AOTAutograd's joint tracing around it does not
count):

- ``Tensor.backward()`` / ``autograd.backward`` (they write ``.grad`` of the leaves);
- an in-place op on a tensor the function did not receive, make or have lifted (one
  reached below ``__torch_function__``), and ``optimizer.step()``, which checks before it
  makes its state, so no fake tensor is left in it;
- reading such a tensor when it requires grad while grad mode is on (its gradient would
  not reach it: the graph holds it as a constant);
- setting a module's attribute (``self.calls += 1`` in ``forward``: it would happen at
  trace time only);
- making, reseeding or setting the state of a random number ``Generator`` (each eager call
  starts afresh; a graph would draw on from the trace's one);
- reading or setting a tensor's ``.grad`` (the trace's tensors hold no gradients: a graph
  would branch on ``x.grad is None`` as it was at trace time);
- what the function's own bytecode does to Python state outside it (``outer_writes`` in
  ``ember/_outer_state.py``): assigning a global or a closure variable, calling a mutating
  method of one (``log.append``), setting an item or attribute of one, ``print``.

Each raises ``GraphBreak``; ``ember.compile`` counts it as a graph break and runs that
signature eagerly (or raises ``Unsupported`` under ``fullgraph=True``). PyTorch's compiler
breaks the graph at ``backward()`` too, and replays attribute writes after its graph,
which ember does not do yet. The same Python effects in the functions the compiled one
calls are found while it is traced (NOTE [called code] in ``ember/_outer_state.py``).
"""

from __future__ import annotations

__all__ = ["USER_CODE", "GraphBreak", "side_effect"]


class GraphBreak(RuntimeError):
    """A side effect of the function being compiled that a graph cannot hold (NOTE
    [compile side effects])."""


#: > 0 while ``ember.compile`` traces the user's own function
USER_CODE = [0]


def side_effect(what: str) -> None:
    """Raise ``GraphBreak`` for ``what`` if ``ember.compile`` is tracing user code.

    >>> from ember._graph_break import side_effect
    >>> side_effect("nothing is being compiled")  # outside a trace: no effect
    """
    if USER_CODE[0]:
        raise GraphBreak(what)
