"""``CosineSimilarity`` and ``PairwiseDistance``."""

from __future__ import annotations

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module


class PairwiseDistance(Module):
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim.

    >>> ember.nn.PairwiseDistance(eps=0.0)(ember.tensor([[0.0, 0.0]]), ember.tensor([[3.0, 4.0]]))
    tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    >>> ember.nn.CosineSimilarity()(ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
