"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``,
``clip_grads_with_norm_``, as PyTorch's (same norms, the same ``1e-6`` in the clip
coefficient, grads scaled in place even when the coefficient is 1)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import ember
from ember._tensor import Tensor
from ember.ops.registry import ops

aten = ops.aten

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
]

_Tensors = Tensor | Iterable[Tensor]


def _as_list(tensors: _Tensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _check_foreach(foreach: bool | None, tensors: list[Tensor]) -> bool:
    """Whether to use the foreach ops (the default on the cpu, as in PyTorch)."""
    devices = {t.device.type for t in tensors}
    supported = devices <= {"cpu"}
    if foreach and not supported:
        kind = sorted(devices - {"cpu"})[0]
        raise RuntimeError(
            f"foreach=True was passed, but can't use the foreach API on {kind} tensors"
        )
    return foreach is not False and supported


def get_total_norm(
    tensors: _Tensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type`` norm of the norms of ``tensors`` (as if concatenated into one vector).

    >>> ember.nn.utils.get_total_norm([ember.tensor([3.0]), ember.tensor([4.0])])
    tensor(5.)
    """
    ts = _as_list(tensors)
    norm_type = float(norm_type)
    if not ts:
        return ember.tensor(0.0)
    _check_foreach(foreach, ts)
    norms = [aten.linalg_vector_norm.default(t, norm_type) for t in ts]
    first = ts[0].device
    total = aten.linalg_vector_norm.default(ember.stack([n.to(first) for n in norms]), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total  # type: ignore[no-any-return]


def clip_grads_with_norm_(
    parameters: _Tensors, max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    """Scale the gradients of ``parameters`` in place by ``max_norm / (total_norm + 1e-6)``,
    at most 1.

    >>> p = ember.ones(2, requires_grad=True); p.grad = ember.tensor([3.0, 4.0])
    >>> ember.nn.utils.clip_grads_with_norm_([p], 1.0, ember.tensor(5.0)); p.grad
    tensor([0.6000, 0.8000])
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    with ember.no_grad():
        if _check_foreach(foreach, grads):
            by_device: dict[Any, list[Tensor]] = {}
            for g in grads:
                by_device.setdefault((g.device, g.dtype), []).append(g)
            for (_, dtype), group in by_device.items():
                aten._foreach_mul_.Scalar(group, float(coef.to(dtype).item()))
        else:
            for g in grads:
                g.mul_(coef)  # type: ignore[attr-defined]


def clip_grad_norm_(
    parameters: _Tensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients of ``parameters`` in place so their total ``norm_type`` norm is at
    most ``max_norm``; returns the total norm before clipping.

    >>> p = ember.ones(2, requires_grad=True); p.grad = ember.tensor([3.0, 4.0])
    >>> ember.nn.utils.clip_grad_norm_([p], 1.0)
    tensor(5.)
    """
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(*args: Any, **kwargs: Any) -> Tensor:
    """Deprecated name of ``clip_grad_norm_``.

    >>> p = ember.ones(1, requires_grad=True); p.grad = ember.ones(1)
    >>> import warnings
    >>> with warnings.catch_warnings(action="ignore"):  # it warns that it is deprecated
    ...     ember.nn.utils.clip_grad_norm([p], 1.0)
    tensor(1.)
    """
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(*args, **kwargs)


clip_grad_norm.__wrapped__ = clip_grad_norm_  # type: ignore[attr-defined]  # its signature


def clip_grad_value_(parameters: _Tensors, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp the gradients of ``parameters`` in place to ``[-clip_value, clip_value]``.

    >>> p = ember.ones(2, requires_grad=True); p.grad = ember.tensor([3.0, -0.5])
    >>> ember.nn.utils.clip_grad_value_([p], 1.0); p.grad
    tensor([ 1.0000, -0.5000])
    """
    clip_value = float(clip_value)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    _check_foreach(foreach, grads)
    with ember.no_grad():
        for g in grads:
            g.clamp_(min=-clip_value, max=clip_value)  # type: ignore[attr-defined]
