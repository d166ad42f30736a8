"""``Conv1d``, ``Conv2d``, ``Conv3d`` and ``ConvTranspose1d``, ``ConvTranspose2d``,
``ConvTranspose3d``: one ``_ConvNd`` base keeps the geometry, the weight and PyTorch's
initialization; the subclasses say the number of spatial dims."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.linear import register_bias, reset_kaiming
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    return (v,) * n if isinstance(v, int) else tuple(v)


class _ConvNd(Module):
    """The geometry and parameters every convolution layer keeps (PyTorch's ``_ConvNd``)."""

    _n = 0  # spatial dims

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        transposed: bool,
        output_padding: Any,
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.dilation = _ntuple(dilation, n)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.transposed, self.output_padding = transposed, _ntuple(output_padding, n)
        self.groups, self.padding_mode = groups, padding_mode
        # F.pad's padding for the non-zero modes: (left, right) pairs from the last dim
        self._reversed_padding_repeated_twice = [0, 0] * n
        for i in range(n):
            if padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                left = total // 2
                pair = [left, total - left]
            elif padding == "valid":
                pair = [0, 0]
            else:
                pair = [self.padding[i]] * 2
            self._reversed_padding_repeated_twice[2 * (n - 1 - i) : 2 * (n - i)] = pair
        if transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(ember.empty(shape, device=device, dtype=dtype))
        register_bias(self, bias, out_channels, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_kaiming(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    """A plain convolution layer: ``padding_mode`` other than zeros pads with ``F.pad`` first."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
            bias, padding_mode, device, dtype,
        )  # fmt: skip

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._n - 1]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)  # type: ignore[no-any-return]
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)  # type: ignore[no-any-return]

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over ``(N, C, L)`` input, weight ``(out_channels, in_channels // groups,
    k)``.

    >>> ember.nn.Conv1d(2, 4, 3, padding="same", padding_mode="circular")(ember.ones(1, 2, 5)).shape
    ember.Size([1, 4, 5])
    """

    _n = 1


class Conv2d(_Conv):
    """2-d convolution, weight ``(out_channels, in_channels // groups, kh, kw)``.

    >>> ember.nn.Conv2d(1, 4, 3, padding=1)(ember.ones(2, 1, 5, 5)).shape
    ember.Size([2, 4, 5, 5])
    """

    _n = 2


class Conv3d(_Conv):
    """3-d convolution over ``(N, C, D, H, W)`` input.

    >>> ember.nn.Conv3d(1, 2, 3)(ember.ones(1, 1, 4, 5, 5)).shape
    ember.Size([1, 2, 2, 3, 3])
    """

    _n = 3


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution layer; ``forward(input, output_size)`` picks the
    ``output_padding`` that gives ``output_size``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, True,
            output_padding, groups, bias, padding_mode, device, dtype,
        )  # fmt: skip

    def _output_padding(self, input: Tensor, output_size: Any) -> list[int]:
        """``output_padding``, or the one that makes the output ``output_size`` (its spatial
        part, or the whole shape), checked to be reachable."""
        n = self._n
        if output_size is None:
            return list(self.output_padding)
        batched = input.ndim == n + 2
        lead = 2 if batched else 1
        size = list(output_size)
        if len(size) == lead + n:
            size = size[lead:]
        if len(size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or "
                f"{lead + n} elements (got {len(size)})"
            )
        mins = [
            (input.shape[lead + d] - 1) * self.stride[d]
            - 2 * self.padding[d]  # type: ignore[operator]
            + self.dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(n)
        ]
        maxs = [mins[d] + self.stride[d] - 1 for d in range(n)]
        for d in range(n):
            if not mins[d] <= size[d] <= maxs[d]:
                raise ValueError(
                    f"requested an output size of {size}, but valid sizes range from {mins} to "
                    f"{maxs} (for an input of {list(input.shape[lead:])})"
                )
        return [size[d] - mins[d] for d in range(n)]

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for ConvTranspose{self._n}d")
        output_padding = self._output_padding(input, output_size)
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._n - 1]
        return conv(  # type: ignore[no-any-return]
            input, self.weight, self.bias, self.stride, self.padding, output_padding,
            self.groups, self.dilation,
        )  # fmt: skip


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution, weight ``(in_channels, out_channels // groups, k)``.

    >>> ember.nn.ConvTranspose1d(2, 4, 3, stride=2)(ember.ones(1, 2, 5)).shape
    ember.Size([1, 4, 11])
    """

    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution, weight ``(in_channels, out_channels // groups, kh, kw)``.

    >>> up = ember.nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1)
    >>> up(ember.ones(1, 2, 5, 5), output_size=[10, 10]).shape
    ember.Size([1, 4, 10, 10])
    """

    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution, weight ``(in_channels, out_channels // groups, kd, kh,
    kw)``.

    >>> ember.nn.ConvTranspose3d(2, 1, 2, stride=2)(ember.ones(1, 2, 2, 3, 3)).shape
    ember.Size([1, 1, 4, 6, 6])
    """

    _n = 3
