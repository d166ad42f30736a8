"""``parameters_to_vector`` and ``vector_to_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

import ember
from ember._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(param: Tensor, device: object) -> object:
    if device is not None and param.device != device:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return param.device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one vector.

    >>> ember.nn.utils.parameters_to_vector(ember.nn.Linear(2, 1).parameters()).shape
    ember.Size([3])
    """
    device: object = None
    flat = []
    for p in parameters:
        device = _check_device(p, device)
        flat.append(p.reshape(-1))
    return ember.cat(flat)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into the parameters (the inverse of
    ``parameters_to_vector``).

    >>> lin = ember.nn.Linear(2, 1)
    >>> ember.nn.utils.vector_to_parameters(ember.zeros(3), lin.parameters()); lin.bias
    Parameter containing:
    tensor([0.], requires_grad=True)
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device: object = None
    start = 0
    for p in parameters:
        device = _check_device(p, device)
        n = p.numel()
        p.data = vec[start : start + n].reshape(p.shape).data  # type: ignore[attr-defined]
        start += n
