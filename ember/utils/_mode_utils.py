"""``no_dispatch``, as ``torch.utils._mode_utils``: ops in the block skip the Python key."""

from __future__ import annotations

from typing import Any

from ember.dispatch.keys import PYTHON_BIT
from ember.dispatch.state import KeyGuard

__all__ = ["all_same_mode", "no_dispatch"]


def no_dispatch() -> Any:
    """A with-block in which no TorchDispatchMode nor ``__torch_dispatch__`` runs.

    >>> from ember.utils._mode_utils import no_dispatch
    >>> with no_dispatch():
    ...     ember.ones(2).sum()
    tensor(2.)
    """
    return KeyGuard(exclude=PYTHON_BIT)


def all_same_mode(modes: Any) -> bool:
    """Whether every entry of ``modes`` is the one same mode object (None never is).

    >>> from ember.utils._mode_utils import all_same_mode
    >>> from ember.utils._python_dispatch import TorchDispatchMode
    >>> m = TorchDispatchMode()
    >>> all_same_mode([m, m]), all_same_mode([m, None])
    (True, False)
    """
    modes = list(modes)
    return all(m is modes[0] for m in modes) and (not modes or modes[0] is not None)
