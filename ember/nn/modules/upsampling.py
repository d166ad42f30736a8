"""``Upsample`` and its fixed-mode forms ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module


class Upsample(Module):
    """Resizes the spatial dims to ``size`` or by ``scale_factor`` (``F.interpolate``).

    >>> ember.nn.Upsample(scale_factor=2, mode="bilinear")(ember.ones(1, 1, 2, 3)).shape
    ember.Size([1, 1, 4, 6])
    """

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(
            input, self.size, self.scale_factor, self.mode, self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )  # fmt: skip

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of ``(N, C, H, W)`` input.

    >>> ember.nn.UpsamplingNearest2d(scale_factor=2)(ember.ones(1, 1, 2, 2)).shape
    ember.Size([1, 1, 4, 4])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of ``(N, C, H, W)`` input with ``align_corners=True``.

    >>> ember.nn.UpsamplingBilinear2d(size=(3, 3))(ember.ones(1, 1, 2, 2)).shape
    ember.Size([1, 1, 3, 3])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
