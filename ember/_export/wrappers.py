"""``mark_subclass_constructor_exportable_experimental``: PyTorch's marker for a tensor
subclass's ``__init__`` that ``torch.export`` may trace. ember has no export, so the marker
returns the constructor unchanged (subclass files such as PyTorch's ``two_tensor.py``
import it).

>>> from ember._export.wrappers import mark_subclass_constructor_exportable_experimental
>>> f = lambda self: None
>>> mark_subclass_constructor_exportable_experimental(f) is f
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def mark_subclass_constructor_exportable_experimental(constructor_subclass: F) -> F:
    """``constructor_subclass`` itself (see the module's docstring)."""
    if not callable(constructor_subclass):
        raise TypeError(
            "mark_subclass_constructor_exportable_experimental: expected a subclass's "
            f"__init__, got {type(constructor_subclass).__name__}"
        )
    return constructor_subclass
