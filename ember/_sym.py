"""``torch.SymInt``, ``SymFloat`` and ``SymBool``: the classes of symbolic sizes. ember
traces with concrete sizes only (``tracing_mode="symbolic"`` is still to come), so no
value of these types ever appears: the classes are here for the ``isinstance`` checks
that code written for PyTorch makes on sizes.

>>> isinstance(ember.ones(2).shape[0], (int, ember.SymInt)), isinstance(2, ember.SymInt)
(True, False)
"""

from __future__ import annotations

from typing import Any

__all__ = ["SymBool", "SymFloat", "SymInt"]


class _Symbolic:
    def __init__(self, node: Any) -> None:
        raise RuntimeError(
            f"{type(self).__name__}: ember has no symbolic shapes yet (sizes are ints); "
            "trace with tracing_mode='real' or 'fake'"
        )


class SymInt(_Symbolic):
    """A symbolic integer (never made by ember yet)."""


class SymFloat(_Symbolic):
    """A symbolic float (never made by ember yet)."""


class SymBool(_Symbolic):
    """A symbolic bool (never made by ember yet)."""
