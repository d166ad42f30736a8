"""``torch._C``'s dispatch-key introspection and thread-local key-set calls, which subclass
and mode code uses: ``DispatchKey``, ``DispatchKeySet``, ``_dispatch_keys(t)``, the
thread's include/exclude sets and the RAII guards over them. The key names are ember's
(``ember.dispatch.keys.DispatchKey``: ``CPU``, ``Meta``, ``Python``, ``Autograd``...; PyTorch
splits some, as ``AutogradCPU``)."""

from __future__ import annotations

from typing import Any

from ember.dispatch import marks, state
from ember.dispatch.keys import DispatchKey, keys_of

__all__ = [
    "DispatchKey",
    "DispatchKeySet",
    "_ExcludeDispatchKeyGuard",
    "_IncludeDispatchKeyGuard",
    "_dispatch_keys",
    "_dispatch_tls_is_dispatch_key_excluded",
    "_dispatch_tls_is_dispatch_key_included",
    "_dispatch_tls_local_exclude_set",
    "_dispatch_tls_local_include_set",
    "_dispatch_tls_set_dispatch_key_excluded",
    "_dispatch_tls_set_dispatch_key_included",
    "_get_dispatch_stack_at",
    "_len_torch_dispatch_stack",
    "_pop_torch_dispatch_stack",
    "_push_on_torch_dispatch_stack",
]


def _len_torch_dispatch_stack() -> int:
    """How many TorchDispatchModes this thread has on."""
    return len(state.local.dispatch_modes)


def _get_dispatch_stack_at(i: int) -> Any:
    return state.local.dispatch_modes[i]


def _push_on_torch_dispatch_stack(mode: Any) -> None:
    state.push_dispatch_mode(mode)


def _pop_torch_dispatch_stack(k: Any = None) -> Any:
    return state.pop_dispatch_mode()


class DispatchKeySet:
    """A set of dispatch keys (a bitmask), as ``torch._C.DispatchKeySet``.

    >>> ks = ember._C.DispatchKeySet(ember._C.DispatchKey.CPU)
    >>> ks.has(ember._C.DispatchKey.CPU), ks
    (True, DispatchKeySet(CPU))
    """

    __slots__ = ("_bits",)

    def __init__(self, keys: Any = 0) -> None:
        if isinstance(keys, DispatchKeySet):
            self._bits = keys._bits
        elif isinstance(keys, DispatchKey):
            self._bits = 1 << keys
        else:
            self._bits = int(keys)

    def has(self, key: DispatchKey) -> bool:
        return bool(self._bits >> key & 1)

    def __or__(self, other: Any) -> DispatchKeySet:
        return DispatchKeySet(self._bits | DispatchKeySet(other)._bits)

    def __sub__(self, other: Any) -> DispatchKeySet:
        return DispatchKeySet(self._bits & ~DispatchKeySet(other)._bits)

    def __and__(self, other: Any) -> DispatchKeySet:
        return DispatchKeySet(self._bits & DispatchKeySet(other)._bits)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DispatchKeySet) and other._bits == self._bits

    def __hash__(self) -> int:
        return hash(self._bits)

    def empty(self) -> bool:
        return self._bits == 0

    def highestPriorityTypeId(self) -> DispatchKey:  # noqa: N802 (PyTorch's name)
        return DispatchKey(self._bits.bit_length() - 1)

    def __iter__(self) -> Any:
        return iter(keys_of(self._bits))

    def __repr__(self) -> str:
        return "DispatchKeySet(" + ", ".join(k.name for k in keys_of(self._bits)) + ")"


def _bits(keys: Any) -> int:
    return DispatchKeySet(keys)._bits


def _dispatch_keys(t: Any) -> DispatchKeySet:
    """The keys a tensor carries (not the thread's include/exclude sets)."""
    return DispatchKeySet(marks.keys(t))


def _dispatch_tls_local_include_set() -> DispatchKeySet:
    return DispatchKeySet(state.local.include)


def _dispatch_tls_local_exclude_set() -> DispatchKeySet:
    return DispatchKeySet(state.local.exclude)


def _dispatch_tls_is_dispatch_key_excluded(key: DispatchKey) -> bool:
    return bool(state.local.exclude >> key & 1)


def _dispatch_tls_is_dispatch_key_included(key: DispatchKey) -> bool:
    return bool(state.local.include >> key & 1)


def _dispatch_tls_set_dispatch_key_excluded(key: DispatchKey, excluded: bool) -> None:
    state.set_excluded(1 << key, bool(excluded))


def _dispatch_tls_set_dispatch_key_included(key: DispatchKey, included: bool) -> None:
    state.set_included(1 << key, bool(included))


class _ExcludeDispatchKeyGuard(state.KeyGuard):
    """Exclude ``keys`` (a key or a key set) for a with-block (as PyTorch's, it acts only
    there: made alone, it changes nothing)."""

    __slots__ = ()

    def __init__(self, keys: Any) -> None:
        super().__init__(exclude=_bits(keys))


class _IncludeDispatchKeyGuard(state.KeyGuard):
    """Include ``key`` in this thread's include set for a with-block."""

    __slots__ = ()

    def __init__(self, key: Any) -> None:
        super().__init__(include=_bits(key))
