"""Tensor layouts: ``ember.strided``, the only one ember's tensors have (PyTorch's
``torch.layout`` values; ``sparse_coo`` exists to be named and refused).

>>> ember.zeros(2).layout
ember.strided
"""

from __future__ import annotations

from ember._named import NamedConstant


class layout(NamedConstant):  # noqa: N801 - PyTorch's name
    """How a tensor's elements are stored, e.g. ``ember.strided``.

    >>> ember.strided
    ember.strided
    """

    __slots__ = ()
    __module__ = "ember"  # printed as PyTorch prints its own: <class 'ember.layout'>


strided = layout("strided")
sparse_coo = layout("sparse_coo")
