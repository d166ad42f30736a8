"""Weak references keyed by identity, as ``torch.utils.weak``: ``WeakIdRef`` and
``WeakIdKeyDictionary`` (a ``WeakKeyDictionary`` that compares keys with ``is``, so tensors,
whose ``==`` is elementwise, and storages can be keys).

>>> from ember.utils.weak import WeakIdKeyDictionary
>>> d = WeakIdKeyDictionary()
>>> x = ember.ones(2)
>>> d[x] = "x"
>>> d[x], len(d)
('x', 1)
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

__all__ = ["WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]


class WeakIdRef(weakref.ref):  # type: ignore[type-arg]
    """A weak reference hashed and compared by the identity of its referent: two live
    references are equal when they point at the same object; a dead one equals only itself.

    >>> from ember.utils.weak import WeakIdRef
    >>> x = ember.ones(1)
    >>> WeakIdRef(x) == WeakIdRef(x)
    True
    """

    __slots__ = ("_id",)

    def __init__(self, key: Any, callback: Callable[[Any], Any] | None = None) -> None:
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self) -> int:
        return self._id

    def __eq__(self, other: object) -> bool:
        a = self()
        b = other() if isinstance(other, weakref.ref) else None
        if a is not None and b is not None:
            return a is b
        return self is other

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)


class WeakIdKeyDictionary(MutableMapping[Any, Any]):
    """A mapping from objects, compared by identity and held weakly, to values: an entry
    goes away when its key object is collected.

    >>> from ember.utils.weak import WeakIdKeyDictionary
    >>> d = WeakIdKeyDictionary({ember.zeros(1): 0})
    >>> len(d)  # the key had no other reference
    0
    """

    def __init__(self, dict: Mapping[Any, Any] | None = None, ref_type: type = WeakIdRef) -> None:  # noqa: A002 - PyTorch's parameter name
        self.data: dict[Any, Any] = {}
        self.ref_type = ref_type
        self_ref = weakref.ref(self)

        def remove(ref: Any) -> None:
            owner = self_ref()
            if owner is not None:
                owner.data.pop(ref, None)

        self._remove = remove
        if dict is not None:
            self.update(dict)

    def __getitem__(self, key: Any) -> Any:
        return self.data[self.ref_type(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key: Any) -> None:
        del self.data[self.ref_type(key)]

    def __contains__(self, key: object) -> bool:
        try:
            ref = self.ref_type(key)
        except TypeError:  # not weak-referenceable: never a key
            return False
        return ref in self.data

    def __len__(self) -> int:
        return sum(1 for ref in list(self.data) if ref() is not None)

    def __iter__(self) -> Iterator[Any]:
        for ref in list(self.data):
            obj = ref()
            if obj is not None:
                yield obj

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {id(self):#x}>"

    def copy(self) -> WeakIdKeyDictionary:
        new = WeakIdKeyDictionary(ref_type=self.ref_type)
        for key, value in self.items():
            new[key] = value
        return new

    __copy__ = copy

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self.data.get(self.ref_type(key), default)
        except TypeError:
            return default


#: PyTorch's older name
WeakTensorKeyDictionary = WeakIdKeyDictionary
