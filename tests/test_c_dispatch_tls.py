"""``ember._C``'s dispatch-key introspection and thread-local key-set calls
(``ember/_C/_dispatch_tls.py``), beside PyTorch's on the same calls."""

from __future__ import annotations

from typing import Any

import pytest

import ember

from .conftest import torch

LIBS = [ember, torch] if torch is not None else [ember]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_tensor_keys_and_key_sets(lib: Any) -> None:
    C = lib._C
    ks = C._dispatch_keys(lib.ones(2))
    assert ks.has(C.DispatchKey.CPU) and not ks.has(C.DispatchKey.Python)
    both = C.DispatchKeySet(C.DispatchKey.CPU) | C.DispatchKeySet(C.DispatchKey.Python)
    assert both.has(C.DispatchKey.Python)
    assert not (both - C.DispatchKeySet(C.DispatchKey.Python)).has(C.DispatchKey.Python)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_guards_act_in_their_with_block_only(lib: Any) -> None:
    C, py = lib._C, lib._C.DispatchKey.Python
    excluded = lambda: C._dispatch_tls_is_dispatch_key_excluded(py)  # noqa: E731
    included = lambda: C._dispatch_tls_is_dispatch_key_included(py)  # noqa: E731
    guard = C._ExcludeDispatchKeyGuard(C.DispatchKeySet(py))
    assert not excluded()  # made alone, it does nothing (PyTorch's binding)
    del guard
    with C._ExcludeDispatchKeyGuard(C.DispatchKeySet(py)):
        assert excluded()
    assert not excluded()
    with C._IncludeDispatchKeyGuard(py):
        assert included()
    assert not included()


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_set_excluded_persists_until_unset(lib: Any) -> None:
    C, py = lib._C, lib._C.DispatchKey.Python
    C._dispatch_tls_set_dispatch_key_excluded(py, True)
    try:
        assert C._dispatch_tls_is_dispatch_key_excluded(py)
        assert C._dispatch_tls_local_exclude_set().has(py)
    finally:
        C._dispatch_tls_set_dispatch_key_excluded(py, False)
    assert not C._dispatch_tls_is_dispatch_key_excluded(py)


def test_excluding_the_python_key_skips_a_dispatch_mode() -> None:
    from ember.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    C = ember._C
    with Log():
        ember.ones(2) + 1
        n = len(seen)
        with C._ExcludeDispatchKeyGuard(C.DispatchKeySet(C.DispatchKey.Python)):
            ember.ones(2) + 1
    assert n > 0 and len(seen) == n
    assert repr(C.DispatchKeySet(C.DispatchKey.CPU)) == "DispatchKeySet(CPU)"
