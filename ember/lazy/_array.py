"""``LazyArray``: what a lazy tensor holds in place of an ndarray.

A lazy tensor is an ordinary ``Tensor`` whose ``_edata`` is a ``LazyArray``: shape, strides,
storage offset and dtype (from the op's Meta rule, as a meta tensor has them) plus how to
get the values:

- a **base** tensor (not a view) holds either ``value`` (an ndarray laid out with the
  declared strides, once computed) or ``node`` (the IR value that computes it);
- a **view** keeps its ``base``'s array and computes nothing of its own: its IR value is
  re-derived from the base's current one whenever it is used, and its values are the view,
  by its own strides and offset, of the base's storage; so a write through any view or
  through the base is seen by all of them, as on the cpu device (NOTE [lazy views] in
  ``ember/lazy/recorder.py``).

Everything that reads values (``numpy()``, ``item()``, ``repr``, ``bool()``...) goes through
``Tensor._values``, which calls ``materialize``: the only way a value leaves the graph.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ember._shape_only import ShapeOnlyArray
from ember.device import device

if TYPE_CHECKING:
    from ember.lazy.ir import Value

LAZY = device("lazy")
_SEQ = itertools.count()


class LazyArray(ShapeOnlyArray):
    """Metadata of a lazy tensor, and its IR value or its computed ndarray."""

    __slots__ = ("node", "value", "base", "source", "seq")

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        strides: tuple[int, ...] | None = None,
        offset: int = 0,
        *,
        node: Value | None = None,
        value: np.ndarray | None = None,
        base: LazyArray | None = None,
    ) -> None:
        super().__init__(shape, dtype, strides, offset, LAZY)
        self.node = node  # a base's pending IR value; a view's last derived one
        self.value = value  # a base's computed values (declared strides), or None
        self.base = base  # a view's base array; None for a base
        self.source: Value | None = None  # the base value a view's node was derived from
        self.seq = next(_SEQ)  # creation order: a sync of many arrays takes them in it, so
        # the same program gives the same graph (and its compiled plan) every time

    @classmethod
    def pending(
        cls, shape: tuple[int, ...], dtype: np.dtype[Any], strides: tuple[int, ...], node: Value
    ) -> LazyArray:
        """A new base array for ``node``'s output, from metadata already normalized (strides
        in bytes): the recording fast path's constructor (NOTE [recording fast path])."""
        a = cls.__new__(cls)
        a.shape, a.dtype, a.strides, a.offset, a.device = shape, dtype, strides, 0, LAZY
        a.node, a.value, a.base, a.source, a.seq = node, None, None, None, next(_SEQ)
        return a

    @classmethod
    def view_of(
        cls,
        base: LazyArray,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        strides: tuple[int, ...],
        offset: int,
    ) -> LazyArray:
        """A new view of ``base``, from metadata already normalized (strides in bytes,
        offset in elements): the recording fast path's constructor."""
        a = cls.__new__(cls)
        a.shape, a.dtype, a.strides, a.offset, a.device = shape, dtype, strides, offset, LAZY
        a.node, a.value, a.base, a.source, a.seq = None, None, base, None, next(_SEQ)
        return a

    def materialize(self, what: str) -> np.ndarray:
        """The values (computing them and everything they need now; NOTE [lazy sync])."""
        from ember.lazy.executor import values_of  # cycle: the executor imports this module

        return values_of(self, what)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        return self.materialize("__array__")

    def __repr__(self) -> str:
        state = "computed" if self.value is not None else "pending"
        return f"LazyArray(shape={self.shape}, dtype={self.dtype}, {state})"


class LiveArrays:
    """The lazy arrays with pending work, held weakly: what ``mark_step`` syncs and what a
    fusion must keep. A set of weak references keyed by ``id``; ``add`` is one C-level
    weakref and a dict store, cheap enough for every recorded op (a ``WeakSet``'s ``add``
    runs in Python). An entry whose array died is overwritten when the ``id`` is reused, and
    dropped when the set is iterated."""

    __slots__ = ("_refs",)

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref[LazyArray]] = {}

    def add(self, arr: LazyArray) -> None:
        self._refs[id(arr)] = weakref.ref(arr)

    def alive(self) -> list[LazyArray]:
        """The arrays still alive (dropping the entries of the dead)."""
        refs = self._refs
        alive = []
        dead = []
        for key, ref in refs.items():
            arr = ref()
            if arr is None:
                dead.append(key)
            else:
                alive.append(arr)
        for key in dead:
            del refs[key]
        return alive

    def __iter__(self) -> Iterator[LazyArray]:
        return iter(self.alive())

    def __len__(self) -> int:
        return len(self.alive())
