"""``InstanceNorm1d``, ``InstanceNorm2d``, ``InstanceNorm3d``: each sample's channels are
normalized by their own statistics; running statistics (``track_running_stats``) are kept and
used in eval mode as batch norm keeps them."""

from __future__ import annotations

import warnings
from typing import Any

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.batchnorm import _BatchNorm


class _InstanceNorm(_BatchNorm):
    _unbatched = 0  # the input rank without a batch dim

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def _check_input_dim(self, input: Tensor) -> None:
        want = (self._unbatched, self._unbatched + 1)
        if input.ndim not in want:
            raise ValueError(f"expected {want[0]}D or {want[1]}D input (got {input.ndim}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.ndim - self._unbatched
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        if input.ndim == self._unbatched:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over ``(N, C, L)`` or ``(C, L)`` input.

    >>> ember.nn.InstanceNorm1d(3)(ember.randn(2, 3, 5)).shape
    ember.Size([2, 3, 5])
    """

    _unbatched = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    >>> ember.nn.InstanceNorm2d(3, affine=True)(ember.randn(2, 3, 4, 4)).shape
    ember.Size([2, 3, 4, 4])
    """

    _unbatched = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input.

    >>> ember.nn.InstanceNorm3d(3)(ember.randn(2, 3, 2, 4, 4)).shape
    ember.Size([2, 3, 2, 4, 4])
    """

    _unbatched = 4
