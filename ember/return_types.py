"""Named tuples that ops with several results return, as ``torch.return_types`` does.

>>> v, i = ember.tensor([1.0, 3.0, 2.0]).max(0)
>>> ember.tensor([1.0, 3.0, 2.0]).max(0).indices
tensor(1)
"""

from __future__ import annotations

from typing import NamedTuple

from ember._tensor import Tensor

__all__ = ["max", "min", "sort", "topk"]
__all__ += ["median", "nanmedian", "mode", "kthvalue"]


class max(NamedTuple):  # noqa: A001, N801 - named after the op, as torch.return_types.max
    """``(values, indices)`` of ``max(dim)``."""

    values: Tensor
    indices: Tensor


class min(NamedTuple):  # noqa: A001, N801
    """``(values, indices)`` of ``min(dim)``."""

    values: Tensor
    indices: Tensor


class sort(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``sort``."""

    values: Tensor
    indices: Tensor


class topk(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``topk``."""

    values: Tensor
    indices: Tensor


class median(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``median(dim)``."""

    values: Tensor
    indices: Tensor


class nanmedian(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``nanmedian(dim)``."""

    values: Tensor
    indices: Tensor


class mode(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``mode``."""

    values: Tensor
    indices: Tensor


class kthvalue(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``kthvalue``."""

    values: Tensor
    indices: Tensor
