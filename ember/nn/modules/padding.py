"""The padding layers: ``ReflectionPad{1,2,3}d``, ``ReplicationPad{1,2,3}d``,
``CircularPad{1,2,3}d``, ``ConstantPad{1,2,3}d``, ``ZeroPad{1,2,3}d`` (``F.pad`` in each
mode; ``padding`` is one int or the (left, right) pairs from the last dim backwards)."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module


def _pads(padding: Any, n: int) -> tuple[int, ...]:
    return (padding,) * (2 * n) if isinstance(padding, int) else tuple(padding)


class _PadNd(Module):
    _n = 0
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pads(padding, self._n)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self._n + 1, self._n + 2):
            raise ValueError(
                f"expected {self._n + 1}D or {self._n + 2}D input (got {input.ndim}D input)"
            )
        return F.pad(input, self.padding, "circular")


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its reflection (the edge not repeated).

    >>> ember.nn.ReflectionPad1d(2)(ember.tensor([[0.0, 1.0, 2.0]]))
    tensor([[2., 1., 0., 1., 2., 1., 0.]])
    """

    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pads the last 2 dims with their reflection.

    >>> ember.nn.ReflectionPad2d(1)(ember.ones(1, 3, 3)).shape
    ember.Size([1, 5, 5])
    """

    _n, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pads the last 3 dims with their reflection.

    >>> ember.nn.ReflectionPad3d(1)(ember.ones(1, 2, 3, 3)).shape
    ember.Size([1, 4, 5, 5])
    """

    _n, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating its edge values.

    >>> ember.nn.ReplicationPad1d((1, 2))(ember.tensor([[0.0, 1.0]]))
    tensor([[0., 0., 1., 1., 1.]])
    """

    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pads the last 2 dims by repeating their edge values.

    >>> ember.nn.ReplicationPad2d(1)(ember.ones(1, 3, 3)).shape
    ember.Size([1, 5, 5])
    """

    _n, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pads the last 3 dims by repeating their edge values.

    >>> ember.nn.ReplicationPad3d(1)(ember.ones(1, 2, 3, 3)).shape
    ember.Size([1, 4, 5, 5])
    """

    _n, _mode = 3, "replicate"


class CircularPad1d(_CircularPadNd):
    """Pads the last dim by wrapping around.

    >>> ember.nn.CircularPad1d(1)(ember.tensor([[0.0, 1.0, 2.0]]))
    tensor([[2., 0., 1., 2., 0.]])
    """

    _n = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dims by wrapping around.

    >>> ember.nn.CircularPad2d(1)(ember.ones(1, 3, 3)).shape
    ember.Size([1, 5, 5])
    """

    _n = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dims by wrapping around.

    >>> ember.nn.CircularPad3d(1)(ember.ones(1, 2, 3, 3)).shape
    ember.Size([1, 4, 5, 5])
    """

    _n = 3


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``.

    >>> ember.nn.ConstantPad1d(1, 3.5)(ember.tensor([[0.0]]))
    tensor([[3.5000, 0.0000, 3.5000]])
    """

    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``.

    >>> ember.nn.ConstantPad2d(1, 0.0)(ember.ones(1, 2, 2)).shape
    ember.Size([1, 4, 4])
    """

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``.

    >>> ember.nn.ConstantPad3d(1, 0.0)(ember.ones(1, 1, 2, 2)).shape
    ember.Size([1, 3, 4, 4])
    """

    _n = 3


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros.

    >>> ember.nn.ZeroPad1d((1, 0))(ember.tensor([[1.0]]))
    tensor([[0., 1.]])
    """

    _n = 1


class ZeroPad2d(_ZeroPadNd):
    """Pads the last 2 dims with zeros.

    >>> ember.nn.ZeroPad2d(1)(ember.ones(1, 2, 2)).shape
    ember.Size([1, 4, 4])
    """

    _n = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last 3 dims with zeros.

    >>> ember.nn.ZeroPad3d(1)(ember.ones(1, 1, 2, 2)).shape
    ember.Size([1, 3, 4, 4])
    """

    _n = 3
