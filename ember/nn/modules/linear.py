"""``Linear``, ``Identity``, ``Flatten``, ``Bilinear``, ``Unflatten``."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter


class Identity(Module):
    """Returns its input unchanged.

    >>> ember.nn.Identity()(ember.ones(2)).shape
    ember.Size([2])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


def register_bias(module: Module, bias: bool, size: int, device: Any, dtype: Any) -> None:
    """Give ``module`` its ``bias``: an uninitialized Parameter of ``size`` elements, or, when
    ``bias`` is False, None registered in its place (as Linear, Bilinear and the convolutions
    keep it)."""
    if bias:
        module.bias = Parameter(ember.empty(size, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def reset_kaiming(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's default initialization of ``Linear`` and the convolutions: ``weight`` by
    ``kaiming_uniform_(a=sqrt(5))``, ``bias`` uniform in ``±1/sqrt(fan_in)``."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


class Linear(Module):
    """``y = x @ weight.T + bias``, weight ``(out_features, in_features)``.

    >>> ember.nn.Linear(3, 2)(ember.ones(4, 3)).shape
    ember.Size([4, 2])
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(
            ember.empty((out_features, in_features), device=device, dtype=dtype)
        )
        register_bias(self, bias, out_features, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_kaiming(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        has_bias = self.bias is not None
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={has_bias}"


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim``.

    >>> ember.nn.Flatten()(ember.ones(2, 3, 4)).shape
    ember.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Bilinear(Module):
    """``y_k = x1 @ weight[k] @ x2 + bias_k``, weight ``(out, in1, in2)``.

    >>> ember.nn.Bilinear(2, 3, 4)(ember.ones(5, 2), ember.ones(5, 3)).shape
    ember.Size([5, 4])
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        kw = {"device": device, "dtype": dtype}
        self.weight = Parameter(ember.empty((out_features, in1_features, in2_features), **kw))
        register_bias(self, bias, out_features, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size``.

    >>> ember.nn.Unflatten(1, (2, 3))(ember.ones(4, 6)).shape
    ember.Size([4, 2, 3])
    """

    def __init__(self, dim: int | str, unflattened_size: Any) -> None:
        super().__init__()
        if isinstance(dim, str):
            raise NotImplementedError("Unflatten: named dims are not supported by ember")
        if not isinstance(unflattened_size, (tuple, list)):
            kind = type(unflattened_size).__name__
            raise TypeError(f"unflattened_size must be tuple of ints, but found type {kind}")
        for i, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError(
                    f"unflattened_size must be tuple of ints, but found element of type "
                    f"{type(size).__name__} at pos {i}"
                )
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
