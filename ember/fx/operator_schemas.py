"""Put an op's arguments back in full, as ``torch.fx.operator_schemas``: the inverse of the
default stripping that ``__torch_dispatch__`` handlers see (NOTE [python key]).

>>> x = ember.ones(1)
>>> normalize_function(ember.ops.aten.add.Tensor, (x, x), {}).kwargs
{'alpha': 1}
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ember.ops.binding import canonical
from ember.ops.registry import OpOverload

__all__ = ["ArgsKwargsPair", "normalize_function"]


class ArgsKwargsPair(NamedTuple):
    """Positional and keyword arguments of a normalised call."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def normalize_function(
    target: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    arg_types: Any = None,
    kwarg_types: Any = None,
    normalize_to_only_use_kwargs: bool = False,
) -> ArgsKwargsPair | None:
    """``target``'s arguments with every default filled in: parameters without a default
    stay positional, the rest become keywords (with ``normalize_to_only_use_kwargs``, all
    are keywords, ``self`` spelled ``input``, as PyTorch does). None for a target that is
    not an ``OpOverload``.

    >>> x = ember.ones(2)
    >>> normalize_function(ember.ops.aten.sum.dim_IntList, (x, [0]), {})
    ArgsKwargsPair(args=(tensor([1., 1.]), [0]), kwargs={'keepdim': False, 'dtype': None})
    """
    if not isinstance(target, OpOverload):
        return None
    a, k = canonical(target, tuple(args), dict(kwargs or {}))
    schema = target._schema
    out_args: list[Any] = []
    out_kwargs: dict[str, Any] = {}
    for i, p in enumerate(schema.positional):
        if i < len(a):
            value = a[i]
        elif p.has_default_value():
            value = p.default_value
        else:
            raise TypeError(f"{target}: missing required argument '{p.name}'")
        name = "input" if p.name == "self" else p.name
        if normalize_to_only_use_kwargs or p.has_default_value():
            out_kwargs[name] = _plain(value)
        else:
            out_args.append(value)
    for p in schema.kwarg_only:
        if p.name in k:
            out_kwargs[p.name] = k[p.name]
        elif p.has_default_value():
            out_kwargs[p.name] = _plain(p.default_value)
        elif p.type.optional:
            out_kwargs[p.name] = None
    return ArgsKwargsPair(tuple(out_args), out_kwargs)


def _plain(value: Any) -> Any:
    """Schema defaults are kept as tuples; a list default reads as PyTorch's."""
    return list(value) if type(value) is tuple else value
