"""What ``weight_norm`` and ``spectral_norm`` (the forward pre-hook versions) share: finding
the hook of their kind that recomputes a given parameter, to refuse a second one and to
remove it."""

from __future__ import annotations

from typing import Any

from ember.nn.modules.module import Module


def _find(module: Module, kind: type, name: str) -> tuple[int, Any] | None:
    """The id and hook of ``module``'s forward pre-hook of type ``kind`` recomputing
    ``name``, or None."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return k, hook
    return None


def check_not_registered(module: Module, kind: type, name: str, what: str) -> None:
    """Refuse a second ``what`` hook (``kind``) on parameter ``name``, as PyTorch does."""
    if _find(module, kind, name) is not None:
        raise RuntimeError(f"Cannot register two {what} hooks on the same parameter {name}")


def remove_hook(module: Module, kind: type, name: str, what: str) -> Module:
    """Undo a ``what`` hook (``kind``): its ``remove`` makes ``name`` one parameter again,
    and the hook is dropped; a ValueError where ``module`` has none for ``name``."""
    found = _find(module, kind, name)
    if found is None:
        raise ValueError(f"{what} of '{name}' not found in {module}")
    k, hook = found
    hook.remove(module)
    del module._forward_pre_hooks[k]
    return module
