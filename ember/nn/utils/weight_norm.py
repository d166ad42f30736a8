"""``weight_norm`` by a forward pre-hook (PyTorch's older API, deprecated there in favour of
``ember.nn.utils.parametrizations.weight_norm``): the parameter ``name`` becomes ``name_g``
(its norm over every dim but ``dim``) and ``name_v`` (its direction), and ``name`` is
recomputed as ``name_v * name_g / ||name_v||`` before every forward."""

from __future__ import annotations

import warnings
from typing import Any

from ember._tensor import Tensor
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils._weight_hooks import check_not_registered, remove_hook
from ember.ops.registry import ops

aten = ops.aten

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook that recomputes the weight from ``name_g`` and ``name_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return aten._weight_norm.default(v, g, self.dim)  # type: ignore[no-any-return]

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        check_not_registered(module, WeightNorm, name, "weight_norm")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        g = aten.norm_except_dim.default(weight, 2, fn.dim)
        module.register_parameter(name + "_g", Parameter(g.data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Reparametrize ``module.<name>`` as magnitude ``<name>_g`` times direction ``<name>_v``.

    >>> import warnings
    >>> with warnings.catch_warnings(action="ignore"):  # it warns that it is deprecated
    ...     m = ember.nn.utils.weight_norm(ember.nn.Linear(3, 2))
    >>> sorted(n for n, _ in m.named_parameters())
    ['bias', 'weight_g', 'weight_v']
    """
    warnings.warn(
        "`torch.nn.utils.weight_norm` is deprecated in favor of "
        "`torch.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``weight_norm``: ``name`` becomes one parameter again, with its current value.

    >>> import warnings
    >>> with warnings.catch_warnings(action="ignore"):  # weight_norm warns that it is deprecated
    ...     m = ember.nn.utils.remove_weight_norm(ember.nn.utils.weight_norm(ember.nn.Linear(3, 2)))
    >>> sorted(n for n, _ in m.named_parameters())
    ['bias', 'weight']
    """
    return remove_hook(module, WeightNorm, name, "weight_norm")
