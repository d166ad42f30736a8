"""The public op functions (``ember.add``, ``ember.sum``, ...), generated from the registry
by ``ember._bind``; ``ember/__init__.py`` re-exports them. The few whose Python signature
differs from their schema's (as in ``torch/functional.py``) are wrapped here."""

from __future__ import annotations

from typing import Any

from ember._bind import bind_all
from ember._tensor import Tensor
from ember.overrides import handle_torch_function, has_torch_function, python_route

__all__ = bind_all(globals())
__all__ += ["is_nonzero"]
_einsum_op = globals()["einsum"]


def einsum(equation: str, *operands: Any, **kwargs: Any) -> Any:
    """``einsum(equation, *operands)`` or ``einsum(equation, [operands])``, as in PyTorch
    (also its ``__torch_function__`` route: the operands count, plain tensors too).

    >>> ember.einsum("ij,j->i", ember.ones(2, 3), ember.ones(3))
    tensor([3., 3.])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if has_torch_function(operands):
        return handle_torch_function(einsum, operands, equation, *operands, **kwargs)
    return _einsum_op(equation, list(operands), **kwargs)


@python_route("input")
def is_nonzero(input: Tensor) -> bool:
    """The truth of a one-element tensor; RuntimeError for more or fewer elements.

    >>> ember.is_nonzero(ember.tensor([0.0]))
    False
    """
    return input.is_nonzero()  # type: ignore[no-any-return]
