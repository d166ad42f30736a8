"""``torch._C``'s dispatch-key introspection and thread-local key-set calls, which subclass
and mode code uses: ``DispatchKey``, ``DispatchKeySet``, ``_dispatch_keys(t)``, the
thread's include/exclude sets and the RAII guards over them. The key names are ember's
(``ember.dispatch.keys.DispatchKey``: ``CPU``, ``Meta``, ``Python``, ``Autograd``...; PyTorch
splits some, as ``AutogradCPU``)."""

from __future__ import annotations

from typing import Any

from ember.dispatch import marks, state
from ember.dispatch.keys import DispatchKey, DispatchKeySet, keyset

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


def _bits(keys: Any) -> int:
    return int(DispatchKeySet(keys))


def _dispatch_keys(t: Any) -> DispatchKeySet:
    """The keys a tensor carries (not the thread's include/exclude sets)."""
    return DispatchKeySet(marks.keys(t))


def _dispatch_tls_local_include_set() -> DispatchKeySet:
    return DispatchKeySet(state.local.include)


def _dispatch_tls_local_exclude_set() -> DispatchKeySet:
    return DispatchKeySet(state.local.exclude)


def _dispatch_tls_is_dispatch_key_excluded(key: DispatchKey) -> bool:
    return DispatchKeySet(state.local.exclude).has(key)


def _dispatch_tls_is_dispatch_key_included(key: DispatchKey) -> bool:
    return DispatchKeySet(state.local.include).has(key)


def _dispatch_tls_set_dispatch_key_excluded(key: DispatchKey, excluded: bool) -> None:
    state.set_excluded(keyset(key), bool(excluded))


def _dispatch_tls_set_dispatch_key_included(key: DispatchKey, included: bool) -> None:
    state.set_included(keyset(key), bool(included))


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
