"""Put an op's arguments back in full, as ``torch.fx.operator_schemas``: the inverse of the
default stripping that ``__torch_dispatch__`` handlers see (NOTE [python key]).

>>> from ember.fx.operator_schemas import normalize_function
>>> x = ember.ones(1)
>>> normalize_function(ember.ops.aten.add.Tensor, (x, x), {}).kwargs
{'alpha': 1}
"""

from __future__ import annotations

from typing import Any, NamedTuple

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

    >>> from ember.fx.operator_schemas import normalize_function
    >>> x = ember.ones(2)
    >>> normalize_function(ember.ops.aten.sum.dim_IntList, (x, [0]), {})
    ArgsKwargsPair(args=(tensor([1., 1.]), [0]), kwargs={'keepdim': False, 'dtype': None})
    """
    if not isinstance(target, OpOverload):
        return None
    a, k = target._schema.normalize(tuple(args), dict(kwargs or {}), normalize_to_only_use_kwargs)
    return ArgsKwargsPair(a, k)
