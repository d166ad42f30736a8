"""``Unfold`` (sliding blocks to columns, im2col) and ``Fold`` (columns summed back, col2im)."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module


class Fold(Module):
    """Sums columns ``(N, C * prod(kernel_size), L)`` into ``(N, C, *output_size)``.

    >>> ember.nn.Fold((3, 3), 2)(ember.ones(1, 8, 4)).shape
    ember.Size([1, 2, 3, 3])
    """

    def __init__(
        self,
        output_size: Any,
        kernel_size: Any,
        dilation: Any = 1,
        padding: Any = 0,
        stride: Any = 1,
    ) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """Sliding blocks of ``(N, C, H, W)`` input as columns ``(N, C * prod(kernel_size), L)``.

    >>> ember.nn.Unfold(2)(ember.ones(1, 2, 3, 3)).shape
    ember.Size([1, 8, 4])
    """

    def __init__(
        self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
    ) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
            f"stride={self.stride}"
        )
