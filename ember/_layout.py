"""Tensor layouts: ``ember.strided``, the only one ember's tensors have (PyTorch's
``torch.layout`` values; ``sparse_coo`` exists to be named and refused).

>>> ember.zeros(2).layout
ember.strided
"""

from __future__ import annotations


class layout:  # noqa: N801 - PyTorch's name
    """How a tensor's elements are stored, e.g. ``ember.strided``.

    >>> ember.strided
    ember.strided
    """

    __slots__ = ("name",)
    __module__ = "ember"  # printed as PyTorch prints its own: <class 'ember.layout'>

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self) -> str:
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
