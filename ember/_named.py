"""PyTorch's named constants (``ember.strided``, ``ember.channels_last``): an object that
holds its name, prints as ``ember.<name>`` and pickles as a reference to that name."""

from __future__ import annotations


class NamedConstant:
    """The base of ``layout`` and ``memory_format``: one instance per name, each bound to that
    name at the top of ``ember`` (which is how pickle finds it again).

    >>> ember.strided, type(ember.channels_last).__name__
    (ember.strided, 'memory_format')
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self) -> str:
        return self.name
