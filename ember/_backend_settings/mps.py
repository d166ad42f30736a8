"""``ember.backends.mps``: Apple's Metal backend, which ember does not have.

>>> ember.backends.mps.is_available()
False
"""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether the MPS device can be used: never, in ember.

    >>> ember.backends.mps.is_available()
    False
    """
    return False


def is_built() -> bool:
    """Whether ember was built with MPS support: no.

    >>> ember.backends.mps.is_built()
    False
    """
    return False
