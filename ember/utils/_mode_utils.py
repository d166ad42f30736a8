"""``no_dispatch``, as ``torch.utils._mode_utils``: ops in the block skip the Python key."""

from __future__ import annotations

from typing import Any

from ember.dispatch.keys import PYTHON_BIT
from ember.dispatch.state import KeyGuard

__all__ = ["no_dispatch"]


def no_dispatch() -> Any:
    """A with-block in which no TorchDispatchMode nor ``__torch_dispatch__`` runs.

    >>> from ember.utils._mode_utils import no_dispatch
    >>> with no_dispatch():
    ...     ember.ones(2).sum()
    tensor(2.)
    """
    return KeyGuard(exclude=PYTHON_BIT)
