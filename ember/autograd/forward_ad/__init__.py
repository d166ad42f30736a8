"""Forward-mode automatic differentiation: dual tensors, as ``torch.autograd.forward_ad``.

>>> import ember.autograd.forward_ad as fwAD
>>> x = ember.tensor([1.0, 2.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, ember.tensor([0.0, 1.0])).sin()
...     fwAD.unpack_dual(y).tangent
tensor([ 0.0000, -0.4161])

How it works: NOTE [forward AD as a dispatch key] in ``_kernel.py``; which rule gives each
op its forward derivative: NOTE [forward rules] in ``_rules.py``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ember._tensor import Tensor
from ember.autograd.forward_ad import _formulas as _formulas
from ember.autograd.forward_ad import _kernel as _kernel
from ember.autograd.forward_ad import _levels
from ember.autograd.forward_ad._formulas import defjvp
from ember.autograd.forward_ad._rules import rule_name
from ember.dispatch import state
from ember.ops.registry import ops

_ALIAS = ops.aten.alias.default
_EMPTY_STRIDED = ops.aten.empty_strided.default


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view of the dual without its tangent at the
    level) and the tangent (None if it has none)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Open a new dual level (nested in the open one) and return its index; prefer the
    ``dual_level`` context manager.

    >>> lv = ember.autograd.forward_ad.enter_dual_level()
    >>> ember.autograd.forward_ad.exit_dual_level(level=lv)
    """
    return _levels.enter()


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost dual level: every tangent given at it is taken away.

    >>> lv = ember.autograd.forward_ad.enter_dual_level()
    >>> ember.autograd.forward_ad.exit_dual_level()
    """
    _levels.exit_(level)


class dual_level:  # noqa: N801  (PyTorch's name)
    """Context manager of a dual level: tangents made inside it exist only inside it.

    >>> import ember.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level() as lv:
    ...     d = fwAD.make_dual(ember.ones(2), ember.ones(2))
    ...     fwAD.unpack_dual(d).tangent is not None
    True
    >>> fwAD.unpack_dual(d).tangent is None
    True
    """

    def __enter__(self) -> int:
        self._level = enter_dual_level()
        return self._level

    def __exit__(self, *exc: object) -> None:
        exit_dual_level(level=self._level)


def _level_of(level: int | None, what: str) -> int:
    if level is None:
        level = _levels.current_level()
        if level < 0:
            raise RuntimeError(
                f"{what}: a dual level must be open: use `with "
                "ember.autograd.forward_ad.dual_level():` around it"
            )
    elif not _levels.is_open(level):
        raise RuntimeError(f"{what}: dual level {level} is not open")
    return level


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` whose tangent at ``level`` (default: the innermost open one) is
    ``tangent``; ops on it compute their outputs' tangents.

    >>> import ember.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     d = fwAD.make_dual(ember.tensor([3.0]), ember.tensor([1.0]))
    ...     fwAD.unpack_dual(d * d).tangent
    tensor([6.])
    """
    level = _level_of(level, "make_dual")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(
            f"make_dual: expected two Tensors, got {type(tensor).__name__} and "
            f"{type(tangent).__name__}"
        )
    if tensor.dtype.category < 2 or tangent.dtype.category < 2:
        raise ValueError(
            "make_dual: expected the primal and its tangent to be floating point or complex, "
            f"got {tensor.dtype} and {tangent.dtype}"
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "make_dual: trying to set a forward gradient that has a different size than that "
            f"of the original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}."
        )
    if tangent.dtype != tensor.dtype:
        raise RuntimeError(
            f"make_dual: the tangent's dtype {tangent.dtype} differs from the primal's "
            f"{tensor.dtype}; convert it with tangent.to({tensor.dtype})"
        )
    with state.DualCeiling(level):
        dual = _ALIAS(tensor)
        if tuple(tangent.stride()) != tuple(tensor.stride()):  # laid out as the primal
            tangent = _EMPTY_STRIDED(
                tuple(tensor.shape), tuple(tensor.stride()), dtype=tensor.dtype,
                device=tensor.device,
            ).copy_(tangent)  # fmt: skip
    _levels.set_tangent(dual, level, tangent)
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal (a view without the tangent) and the tangent at ``level`` (default: the
    innermost open one; None when it has none).

    >>> import ember.autograd.forward_ad as fwAD
    >>> fwAD.unpack_dual(ember.ones(1))
    UnpackedDualTensor(primal=tensor([1.]), tangent=None)
    """
    if level is None:
        level = _levels.current_level()
    if level < 0 or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    if tensor._base is not None:  # NOTE [views of a base with a tangent] in _kernel.py
        _kernel.adopt_base_tangents(tensor, level + 1)
    t = _levels.tangent(tensor, level)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    with state.DualCeiling(level):
        primal = _ALIAS(tensor)
    return UnpackedDualTensor(primal, t)


__all__ = [
    "UnpackedDualTensor", "defjvp", "dual_level", "enter_dual_level", "exit_dual_level",
    "make_dual", "rule_name", "unpack_dual",
]  # fmt: skip
