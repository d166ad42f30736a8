"""``Dropout``."""

from __future__ import annotations

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module


class Dropout(Module):
    """Zeroes elements with probability ``p`` while training, scaling the rest by ``1/(1-p)``.

    >>> ember.nn.Dropout(0.5).eval()(ember.ones(2))
    tensor([1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
