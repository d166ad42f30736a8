"""The pooling layers: max and average pooling in 1-3 dims, and adaptive pooling."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module


class _Pool2d(Module):
    """The window ``AvgPool2d`` (and ``AvgPool3d``) keep: ``stride`` defaults to ``kernel_size``."""

    def __init__(self, kernel_size: Any, stride: Any, padding: Any) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding


class AvgPool2d(_Pool2d):
    """2-d average pooling.

    >>> ember.nn.AvgPool2d(2)(ember.ones(1, 1, 4, 4)).shape
    ember.Size([1, 1, 2, 2])
    """

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _MaxPoolNd(Module):
    """A max-pooling layer of ``_n`` spatial dims (PyTorch's ``_MaxPoolNd``): its window
    options, and ``forward`` by ``F.max_pool{_n}d``."""

    _n = 0

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[self._n - 1]
        return fn(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling over ``(N, C, L)`` or ``(C, L)``.

    >>> ember.nn.MaxPool1d(2)(ember.ones(1, 2, 6)).shape
    ember.Size([1, 2, 3])
    """

    _n = 1


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling.

    >>> ember.nn.MaxPool2d(2)(ember.ones(1, 1, 4, 4)).shape
    ember.Size([1, 1, 2, 2])
    """

    _n = 2


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> ember.nn.MaxPool3d(2)(ember.ones(1, 2, 4, 4, 4)).shape
    ember.Size([1, 2, 2, 2, 2])
    """

    _n = 3


class AvgPool1d(Module):
    """1-d average pooling over ``(N, C, L)`` or ``(C, L)``.

    >>> ember.nn.AvgPool1d(2)(ember.ones(1, 2, 6)).shape
    ember.Size([1, 2, 3])
    """

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """3-d average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> ember.nn.AvgPool3d(2)(ember.ones(1, 2, 4, 4, 4)).shape
    ember.Size([1, 2, 2, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip


def _single(v: Any) -> tuple[int, ...]:
    return (v,) if isinstance(v, int) else tuple(v)


class _AdaptivePool(Module):
    """An adaptive pooling layer of ``_n`` spatial dims: ``output_size`` (None entries keep
    the input's size); average pooling (``F.adaptive_avg_pool{_n}d``) unless a subclass
    says otherwise."""

    _n = 0

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Any:
        fn = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[self._n - 1]
        return fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """1-d adaptive average pooling.

    >>> ember.nn.AdaptiveAvgPool1d(3)(ember.ones(1, 2, 7)).shape
    ember.Size([1, 2, 3])
    """

    _n = 1


class AdaptiveAvgPool2d(_AdaptivePool):
    """2-d adaptive average pooling.

    >>> ember.nn.AdaptiveAvgPool2d((1, 1))(ember.ones(2, 3, 7, 5)).shape
    ember.Size([2, 3, 1, 1])
    """

    _n = 2


class AdaptiveAvgPool3d(_AdaptivePool):
    """3-d adaptive average pooling.

    >>> ember.nn.AdaptiveAvgPool3d(2)(ember.ones(1, 2, 4, 5, 6)).shape
    ember.Size([1, 2, 2, 2, 2])
    """

    _n = 3


class _AdaptiveMaxPool(_AdaptivePool):
    """An adaptive max-pooling layer (``F.adaptive_max_pool{_n}d``), optionally returning
    the positions of the maxima."""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        fn = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self._n - 1]
        return fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """1-d adaptive max pooling.

    >>> ember.nn.AdaptiveMaxPool1d(3)(ember.ones(1, 2, 7)).shape
    ember.Size([1, 2, 3])
    """

    _n = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """2-d adaptive max pooling.

    >>> ember.nn.AdaptiveMaxPool2d(2)(ember.ones(1, 2, 5, 5)).shape
    ember.Size([1, 2, 2, 2])
    """

    _n = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """3-d adaptive max pooling.

    >>> ember.nn.AdaptiveMaxPool3d(2)(ember.ones(1, 2, 4, 5, 6)).shape
    ember.Size([1, 2, 2, 2, 2])
    """

    _n = 3


class _MaxUnpoolNd(Module):
    _n = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        n = self._n

        def tup(v: Any) -> tuple[int, ...]:
            return (v,) * n if isinstance(v, int) else tuple(v)

        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._n - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of ``MaxPool1d`` (``F.max_unpool1d``), given its indices.

    >>> ember.nn.MaxUnpool1d(2)(ember.ones(1, 1, 2), ember.tensor([[[0, 3]]]))
    tensor([[[1., 0., 0., 1.]]])
    """

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of ``MaxPool2d`` (``F.max_unpool2d``), given its indices.

    >>> ember.nn.MaxUnpool2d(2)(ember.ones(1, 1, 1, 1), ember.tensor([[[[0]]]])).shape
    ember.Size([1, 1, 2, 2])
    """

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The inverse of ``MaxPool3d`` (``F.max_unpool3d``), given its indices.

    >>> ember.nn.MaxUnpool3d(2)(ember.ones(1, 1, 1, 1, 1), ember.tensor([[[[[0]]]]])).shape
    ember.Size([1, 1, 2, 2, 2])
    """

    _n = 3


class _LPPoolNd(Module):
    _n = 0

    def __init__(
        self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        fn = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._n - 1]
        return fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (
            "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
            "ceil_mode={ceil_mode}".format(**self.__dict__)
        )


class LPPool1d(_LPPoolNd):
    """The power-average pool over windows (``F.lp_pool1d``).

    >>> ember.nn.LPPool1d(2, 2)(ember.tensor([[[3.0, 4.0]]]))
    tensor([[[5.]]])
    """

    _n = 1


class LPPool2d(_LPPoolNd):
    """The 2-D power-average pool (``F.lp_pool2d``).

    >>> ember.nn.LPPool2d(1, 2)(ember.ones(1, 1, 2, 2))
    tensor([[[[4.]]]])
    """

    _n = 2


class LPPool3d(_LPPoolNd):
    """The 3-D power-average pool (``F.lp_pool3d``).

    >>> ember.nn.LPPool3d(1, 2)(ember.ones(1, 1, 2, 2, 2)).flatten()
    tensor([8.])
    """

    _n = 3


class _FractionalMaxPool(Module):
    """A fractional max-pooling layer (``F.fractional_max_pool{_n}d``): ``output_size`` or
    ``output_ratio`` (each in (0, 1)), a ``_random_samples`` buffer when given."""

    _n = 0

    def __init__(
        self,
        kernel_size: Any,
        output_size: Any = None,
        output_ratio: Any = None,
        return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ) -> None:
        super().__init__()
        n = self._n

        def tup(v: Any) -> tuple[Any, ...]:
            return (v,) * n if isinstance(v, (int, float)) else tuple(v)

        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        fn = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return fn(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPool):
    """2-d fractional max pooling.

    >>> ember.nn.FractionalMaxPool2d(2, output_ratio=0.5)(ember.ones(1, 2, 8, 6)).shape
    ember.Size([1, 2, 4, 3])
    """

    _n = 2


class FractionalMaxPool3d(_FractionalMaxPool):
    """3-d fractional max pooling.

    >>> ember.nn.FractionalMaxPool3d(2, output_size=3)(ember.ones(1, 2, 5, 6, 7)).shape
    ember.Size([1, 2, 3, 3, 3])
    """

    _n = 3
