"""``functional_call``: a module run with other parameters and buffers for one call.

>>> from ember.func import functional_call
>>> lin = ember.nn.Linear(2, 1, bias=False)
>>> functional_call(lin, {"weight": ember.ones(1, 2)}, (ember.tensor([[1.0, 2.0]]),))
tensor([[3.]])
"""

from __future__ import annotations

from typing import Any

from ember.nn.modules.module import Module

__all__ = ["functional_call"]


def _swap(module: Module, name: str, value: Any) -> tuple[Module, str, str, Any]:
    *path, field = name.split(".")
    owner = module.get_submodule(".".join(path)) if path else module
    for registry in ("_parameters", "_buffers"):
        table = owner.__dict__[registry]
        if field in table:
            old = table[field]
            table[field] = value
            return owner, registry, field, old
    if hasattr(owner, field) and not isinstance(getattr(owner, field), Module):
        old = getattr(owner, field)
        object.__setattr__(owner, field, value)
        return owner, "", field, old
    raise AttributeError(
        f"functional_call: {type(module).__name__} has no parameter or buffer {name!r}"
    )


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: dict[str, Any] | tuple[dict[str, Any], ...],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with its parameters and buffers named in the dict(s)
    replaced by the given tensors for the call (the module is unchanged afterwards)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    else:
        values = {}
        for d in parameter_and_buffer_dicts:
            clash = set(values) & set(d)
            if clash:
                raise ValueError(f"functional_call: {sorted(clash)} given in several dicts")
            values.update(d)
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        expected |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = expected - set(values), set(values) - expected
        if missing or unexpected:
            raise RuntimeError(
                f"functional_call(strict=True): missing {sorted(missing)}, "
                f"unexpected {sorted(unexpected)}"
            )
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    return call_swapped(module, values, module, args, kwargs or {})


def call_swapped(
    module: Module,
    values: dict[str, Any],
    fn: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """``fn(*args, **kwargs)`` with ``module``'s parameters and buffers named in ``values``
    replaced by them for the call."""
    swapped = []
    try:
        for name, value in values.items():
            swapped.append(_swap(module, name, value))
        return fn(*args, **kwargs)
    finally:
        for owner, registry, field, old in reversed(swapped):
            if registry:
                owner.__dict__[registry][field] = old
            else:
                object.__setattr__(owner, field, old)
