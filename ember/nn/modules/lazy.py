"""Lazy layers: ``LazyLinear``, ``LazyConv1d/2d/3d`` and ``LazyConvTranspose1d/2d/3d``,
whose input size is read from their first input.

# NOTE [lazy modules]
As PyTorch's ``LazyModuleMixin``: the layer is built with ``in_features`` (or
``in_channels``) 0 and ``UninitializedParameter``s; a forward pre-hook, on the first call,
reads the size from the input, materialises the parameters, runs ``reset_parameters``,
removes itself and turns the module into its ``cls_to_become`` (``Linear``, ``Conv2d``...),
so that afterwards it is indistinguishable from one built eagerly. Loading a state dict into
a lazy module materialises its parameters with the checkpoint's shapes.
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.nn.modules.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.parameter import UninitializedParameter, is_lazy

__all__ = [
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyLinear",
    "LazyModuleMixin",
]


class LazyModuleMixin:
    """What makes a module lazy (NOTE [lazy modules]); the class defines
    ``initialize_parameters(input)`` and ``cls_to_become``."""

    cls_to_become: type[Module] | None = None

    def _lazy_setup(self) -> None:
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)  # type: ignore[attr-defined]
        self._load_hook = self.register_load_state_dict_pre_hook(_materialize_from_state)  # type: ignore[attr-defined]

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter of this module is still uninitialised."""
        return any(is_lazy(p) for p in self._parameters.values())  # type: ignore[attr-defined]

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )


def _infer_parameters(module: Any, args: tuple[Any, ...]) -> None:
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    _finish(module)


def _finish(module: Any) -> None:
    module._initialize_hook.remove()
    module._load_hook.remove()
    del module._initialize_hook
    del module._load_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


def _materialize_from_state(module: Any, state_dict: Any, prefix: str, *rest: Any) -> None:
    for name, param in module._parameters.items():
        key = prefix + name
        if key in state_dict and is_lazy(param):
            value = state_dict[key]
            if not is_lazy(value):
                param.materialize(value.shape)
    if not module.has_uninitialized_params():
        if hasattr(module, "_infer_sizes_from_weight"):
            module._infer_sizes_from_weight()
        _finish(module)


def _input_size(input: Tensor, dim: int) -> int:
    return int(input.shape[dim])


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` comes from its first input's last dim.

    >>> m = ember.nn.LazyLinear(3); m(ember.ones(2, 5)).shape, type(m).__name__
    (ember.Size([2, 3]), 'Linear')
    """

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:  # noqa: E501
        super().__init__(0, 0, False, device, dtype)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._lazy_setup()

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        if self.has_uninitialized_params():
            self.in_features = _input_size(input, -1)
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()

    def _infer_sizes_from_weight(self) -> None:
        self.in_features = int(self.weight.shape[1])


class _LazyConvMixin(LazyModuleMixin):
    """Shared by the lazy convolutions: the channels come from dim 1 of a batched input (0
    of an unbatched one)."""

    _n: int
    transposed: bool

    def _lazy_conv_setup(self, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._lazy_setup()

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:  # type: ignore[attr-defined]
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        if not self.has_uninitialized_params():
            return
        batched = input.ndim == self._n + 2
        self.in_channels = _input_size(input, 1 if batched else 0)
        if self.in_channels % self.groups:  # type: ignore[attr-defined]
            raise ValueError("in_channels must be divisible by groups")
        k = self.kernel_size  # type: ignore[attr-defined]
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *k)  # type: ignore[attr-defined]
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *k)  # type: ignore[attr-defined]
        self.weight.materialize(shape)  # type: ignore[attr-defined]
        if self.bias is not None:  # type: ignore[attr-defined]
            self.bias.materialize((self.out_channels,))  # type: ignore[attr-defined]
        self.reset_parameters()

    def _infer_sizes_from_weight(self) -> None:
        w = self.weight  # type: ignore[attr-defined]
        self.in_channels = int(w.shape[0] if self.transposed else w.shape[1] * self.groups)  # type: ignore[attr-defined]


def _lazy_conv(base: type[Module], n: int, transposed: bool) -> type[Module]:
    """A lazy subclass of ``base`` (a convolution of ``n`` spatial dims)."""

    def __init__(self: Any, out_channels: int, kernel_size: Any, *args: Any, **kwargs: Any) -> None:  # noqa: E501
        bias = kwargs.get("bias", True)
        device, dtype = kwargs.get("device"), kwargs.get("dtype")
        groups = kwargs.get("groups", 1)
        kwargs["bias"] = False
        base.__init__(self, groups, groups, kernel_size, *args, **kwargs)  # placeholder sizes
        self.in_channels, self.out_channels = 0, out_channels
        self._lazy_conv_setup(bias, device, dtype)

    name = f"Lazy{base.__name__}"
    doc = (
        f"A ``{base.__name__}`` whose ``in_channels`` comes from its first input.\n\n"
        f"    >>> m = ember.nn.{name}(4, 3)\n"
        f"    >>> m(ember.ones({', '.join(['1', '2'] + ['5'] * n)})).shape[1], type(m).__name__\n"
        f"    (4, '{base.__name__}')\n"
    )
    return type(
        name,
        (_LazyConvMixin, base),
        {"__init__": __init__, "cls_to_become": base, "_n": n, "__doc__": doc,
         "__module__": __name__, "__qualname__": name},
    )  # fmt: skip


LazyConv1d = _lazy_conv(Conv1d, 1, False)
LazyConv2d = _lazy_conv(Conv2d, 2, False)
LazyConv3d = _lazy_conv(Conv3d, 3, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, 1, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, 2, True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, 3, True)
