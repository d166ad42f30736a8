"""Tensors ``ember.compile``'s trace finds outside the function's arguments (a closure's, a
global's, a module attribute's), lifted into the graph as inputs.

# NOTE [lifted tensors]
A compiled function may read tensors it was not given: ``lambda x: x @ w`` over a closure's
``w``, a model's parameters called from a training step, a global mask. PyTorch's compiler
finds them in the function's bytecode and makes each an input of its graph. ember finds
them while tracing: ``LiftMode``, a ``TorchFunctionMode`` pushed around the user's code,
looks at every tensor a call takes. A plain cpu tensor the trace did not make (the trace's
own are fake) is *external*: the first time one is met, ``Lift`` unwinds the trace, the
compiled function adds the tensor to its list of lifted tensors and calls again, now
passing the lifted tensors after the arguments (then their number); ``LiftMode`` then
swaps each for its input of the trace. So a lifted tensor is an ordinary input of the graph:

- its values are read at every call (a write to it between calls is seen);
- its gradient reaches it (a parameter of a closure's module trains);
- a write to it in the function is an input mutation, replayed on it at every call;
- a view of it returned by the function is a view of it at run time, not a copy;
- its shape, dtype and requires_grad are part of the call's signature (a change retraces).

What is lifted is kept from call to call. ``Guards`` checks, per call, that the globals
and closure variables the function's code names still hold the objects they held, and
(while tensors are lifted) that no module anywhere re-registered a parameter, buffer or
child (``module.STRUCTURE``). A name that held a lifted tensor and now holds another
tensor just passes the new one in its place (its signature is checked as any input's);
any other change makes the function forget its lifted tensors and compile again (a
Python number the graph baked in, a module replaced), as PyTorch's guards on globals do;
past the recompile limit it runs uncompiled. A tensor reached
another way (an element of a global list replaced by another tensor) is not guarded.
Tensor subclasses and tensors on other devices are not lifted (they stay constants of the
graph, NOTE [live constants]).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ember._outer_state import CalledCode
from ember._subclasses.fake_tensor import FakeTensor
from ember._tensor import Tensor
from ember.nn.modules.module import STRUCTURE
from ember.nn.parameter import Parameter
from ember.overrides import TorchFunctionMode
from ember.utils._pytree import tree_flatten, tree_map

__all__ = ["Guards", "Lift", "LiftMode", "external"]

_ndarray = np.ndarray
_PLAIN = (Tensor, Parameter)


class Lift(BaseException):  # noqa: N818 (a signal, not an error: no except Exception sees it)
    """The trace met an external tensor not yet lifted (NOTE [lifted tensors])."""

    def __init__(self, tensor: Tensor) -> None:
        super().__init__(f"lift a tensor of shape {tuple(tensor.shape)}")
        self.tensor = tensor


def external(x: Any) -> bool:
    """Whether ``x`` is a tensor a trace would lift: a plain cpu tensor with real data."""
    return type(x) in _PLAIN and type(x._edata) is _ndarray and not isinstance(x, FakeTensor)


class LiftMode(TorchFunctionMode):
    """Swaps lifted tensors for their inputs of the trace; raises ``Lift`` at an external
    tensor not lifted yet (NOTE [lifted tensors])."""

    def __init__(self, inputs: dict[int, Tensor], called: CalledCode | None = None) -> None:
        super().__init__()
        self.inputs = inputs
        #: NOTE [called code]: the watch on the user's calls, paused inside ember's own
        self.called = called
        #: the tensors the function's own calls made (never lifted), kept alive so that
        #: their ids stay theirs
        self.made: dict[int, Any] = {}

    def _swap(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            found = self.inputs.get(id(x))
            if found is not None:
                return found
            if external(x) and id(x) not in self.made:
                raise Lift(x)
        return x

    def __torch_function__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        args, kwargs = tree_map(self._swap, (args, kwargs or {}))
        called = self.called
        out = func(*args, **kwargs) if called is None else called.unwatched(func, args, kwargs)
        for o in tree_flatten(out)[0]:
            if isinstance(o, Tensor):
                self.made[id(o)] = o
        return out


def _names(fn: Any) -> list[tuple[str, Any, Any]]:
    """The globals and closure variables ``fn``'s code names: (name, holder, key)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    out: list[tuple[str, Any, Any]] = []
    glob = getattr(fn, "__globals__", {})
    for name in code.co_names:
        if name in glob:
            out.append((name, glob, name))
    for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
        out.append((name, cell, None))
    return out


def _read(holder: Any, key: Any) -> Any:
    if key is None:
        try:
            return holder.cell_contents
        except ValueError:  # an empty cell
            return None
    return holder.get(key)


class Guards:
    """What a compiled function's lifted tensors were found through (NOTE [lifted
    tensors]): the objects its code's globals and closure variables held, and the module
    structure counter."""

    def __init__(self, *fns: Callable[..., Any]) -> None:
        self.names = [n for fn in fns for n in _names(fn)]
        self.held: list[Any] = []
        self.structure = -1

    def __deepcopy__(self, memo: dict[int, Any]) -> Guards:
        # the same function's names (a deep copy of a compiled module keeps its function)
        other = Guards.__new__(Guards)
        other.names, other.held, other.structure = self.names, list(self.held), self.structure
        return other

    def watch(self, names: Iterator[tuple[str, Any, Any]]) -> None:
        """Also guard these globals and closure variables (named by code the trace
        called, NOTE [called code]; ``(name, holder, key)`` as ``_names`` gives them), as
        they hold now."""
        known = {(id(h), k) for _, h, k in self.names}
        new: list[tuple[str, Any, Any]] = []
        for n, h, k in names:
            if (id(h), k) not in known:
                known.add((id(h), k))
                new.append((n, h, k))
        if new:  # new lists: a deep copy shares the old ones
            self.names = [*self.names, *new]
            self.held = [*self.held, *(_read(h, k) for _, h, k in new)]

    def record(self) -> None:
        """Remember what the names hold now."""
        self.held = [_read(h, k) for _, h, k in self.names]
        self.structure = STRUCTURE[0]

    def changed(self, lifted: bool) -> int | None:
        """The first name whose object changed (its index in ``names``), ``-1`` when a
        module's structure changed while tensors are lifted (``lifted``), else None."""
        if lifted and STRUCTURE[0] != self.structure:
            return -1
        for i, ((_, h, k), old) in enumerate(zip(self.names, self.held, strict=True)):
            if _read(h, k) is not old:
                return i
        return None

    def why(self, i: int) -> str:
        """What ``changed`` found, in words."""
        if i < 0:
            return "a module registered, replaced or removed a parameter, buffer or child"
        name, _, key = self.names[i]
        kind = "closure variable" if key is None else "global"
        return f"the {kind} {name!r} now holds another object"

    def swap(self, i: int, lifted: list[Tensor]) -> bool:
        """When name ``i`` held a lifted tensor and now holds another tensor that can be
        lifted, put the new one in its place in ``lifted`` (the signature then checks its
        shape, dtype and requires_grad, as PyTorch guards a global tensor); False when the
        change needs a new compilation."""
        if i < 0:
            return False
        old, new = self.held[i], _read(*self.names[i][1:])
        if not external(new) or any(t is new for t in lifted):
            return False
        for j, t in enumerate(lifted):
            if t is old:
                lifted[j] = new
                self.held[i] = new
                return True
        return False
