"""``ember.backends.opt_einsum``: contraction-order optimisation for ``einsum``.

ember's ``einsum`` hands the whole expression to ``numpy.einsum`` and never computes a
contraction path, so the opt_einsum package is not used: it reads as unavailable, as on a
PyTorch install without that package.

>>> ember.backends.opt_einsum.is_available(), ember.backends.opt_einsum.enabled
(False, False)
"""

from __future__ import annotations

__all__ = ["enabled", "get_opt_einsum", "is_available", "strategy"]

enabled = False
strategy: str | None = None


def is_available() -> bool:
    """Whether the opt_einsum package is used by ``einsum``: no.

    >>> ember.backends.opt_einsum.is_available()
    False
    """
    return False


def get_opt_einsum() -> None:
    """The opt_einsum module ``einsum`` would use: ``None``.

    >>> ember.backends.opt_einsum.get_opt_einsum() is None
    True
    """
    return None
