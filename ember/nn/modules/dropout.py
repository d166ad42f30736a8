"""``Dropout``, and the channel dropouts ``Dropout1d``, ``Dropout2d``, ``Dropout3d``."""

from __future__ import annotations

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module


class _DropoutNd(Module):
    """What the dropout modules share: ``p`` (checked) and ``inplace``."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        F._check_dropout_p(p)
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes elements with probability ``p`` while training, scaling the rest by ``1/(1-p)``.

    >>> ember.nn.Dropout(0.5).eval()(ember.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p`` while
    training, scaling the rest by ``1/(1-p)``.

    >>> ember.nn.Dropout1d(0.5).eval()(ember.ones(1, 2))
    tensor([[1., 1.]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels (2-d feature maps) of ``(N, C, H, W)`` input with probability
    ``p`` while training, scaling the rest by ``1/(1-p)``.

    >>> ember.nn.Dropout2d(0.0)(ember.ones(1, 2, 1, 1)).flatten()
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels (3-d feature maps) of ``(N, C, D, H, W)`` input with
    probability ``p`` while training, scaling the rest by ``1/(1-p)``.

    >>> ember.nn.Dropout3d(1.0)(ember.ones(1, 2, 1, 1, 1)).flatten()
    tensor([0., 0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks (``F.alpha_dropout``): keeps the mean and variance.

    >>> ember.nn.AlphaDropout(0.2).eval()(ember.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    """``AlphaDropout`` of whole channels (``F.feature_alpha_dropout``).

    >>> ember.nn.FeatureAlphaDropout(0.2).eval()(ember.ones(1, 2, 2)).shape
    ember.Size([1, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
