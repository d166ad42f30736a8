"""``norm_except_dim`` and ``_weight_norm``, the two ops weight normalization is built on; both
are compositions in PyTorch too (CompositeImplicitAutograd), so their parts are what
autograd and tracers see. (PyTorch's ``_weight_norm`` routes dims 0 and -1 through a fused
kernel, ``_weight_norm_interface``, with the same values.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import define
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

define("norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor", variants=("function",))
define("_weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor", variants=("function",))

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


@impl(aten.norm_except_dim.default, _CIA)
def norm_except_dim(v: Tensor, pow: int = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm over every dim but ``dim`` (kept, size-1 elsewhere); -1: all dims."""
    norm = aten.norm.ScalarOpt_dim
    if dim == -1:
        return aten.norm.Scalar(v, pow)  # type: ignore[no-any-return]
    if dim == 0:
        out = [1] * v.ndim
        out[0] = v.shape[0]
        return norm(v.reshape(v.shape[0], -1), pow, [1]).reshape(out)  # type: ignore[no-any-return]
    if dim == v.ndim - 1:
        out = [1] * v.ndim
        out[-1] = v.shape[-1]
        return norm(v.reshape(-1, v.shape[-1]), pow, [0]).reshape(out)  # type: ignore[no-any-return]
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


@impl(aten._weight_norm.default, _CIA)
def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    if v.device != g.device:
        raise RuntimeError(
            f"weight_norm: expected v_in and g_in to be on the same device, but v_in is on "
            f"{v.device} and g_in is on {g.device}"
        )
    return v * (g / aten.norm_except_dim.default(v, 2, dim))
