"""A tensor's own dispatch keys, asked and set by name: the one place outside the Tensor
class that reads or writes a tensor's key bits (``_ekeys``).

A layer that makes or changes tensors says what it means ("this output is recorded by
autograd", "this wrapper is batched", "is this a dual tensor?", "which backend?") and the
bits stay here, next to the keys they stand for (``ember/dispatch/keys.py``); the test in
tests/test_architecture.py fails when a module elsewhere touches ``_ekeys``. The Tensor
class (``ember/_tensor.py``) owns the slot, and hot paths allow-listed there inline the
same bit tests.

>>> import ember
>>> from ember.dispatch import marks
>>> t = ember.ones(2)
>>> marks.tracks_grad(t), marks.backend_keys(t) == marks.backend_keys(ember.zeros(1))
(False, True)
"""

from __future__ import annotations

from typing import Any

from ember.dispatch.keys import (
    AUTOGRAD_BIT,
    BACKEND_MASK,
    BATCHED_BIT,
    FORWARD_AD_BIT,
    META_BIT,
    PYTHON_BIT,
    TORCH_FUNCTION_BIT,
)

# ------------------------------------------------------------------ Autograd


def tracks_grad(t: Any) -> bool:
    """Whether ``t`` dispatches through the Autograd key (it requires grad)."""
    return bool(t._ekeys & AUTOGRAD_BIT)


def mark_autograd(t: Any) -> None:
    """Make ``t`` dispatch through the Autograd key (an output the tape records)."""
    t._ekeys |= AUTOGRAD_BIT


def unmark_autograd(t: Any) -> None:
    """Take ``t`` off the Autograd key (``detach_``, ``requires_grad_(False)``)."""
    t._ekeys &= ~AUTOGRAD_BIT


# ------------------------------------------------------------------ ForwardAD


def is_dual(t: Any) -> bool:
    """Whether ``t`` carries a forward-mode tangent (dispatches through ForwardAD)."""
    return bool(t._ekeys & FORWARD_AD_BIT)


def mark_dual(t: Any) -> None:
    """Make ``t`` dispatch through the ForwardAD key (a tangent was attached)."""
    t._ekeys |= FORWARD_AD_BIT


def unmark_dual(t: Any) -> None:
    """Take ``t`` off the ForwardAD key (its last tangent went away)."""
    t._ekeys &= ~FORWARD_AD_BIT


# ------------------------------------------------------------------ wrappers


def mark_batched(t: Any) -> None:
    """A new BatchedTensor wrapper dispatches on FuncTorchBatched alone (NOTE [vmap
    levels] in ``ember/_batched/tensor.py``)."""
    t._ekeys = BATCHED_BIT


def is_batched(t: Any) -> bool:
    """Whether ``t`` is a BatchedTensor wrapper (dispatches on FuncTorchBatched)."""
    return bool(t._ekeys & BATCHED_BIT)


def mark_fake(t: Any) -> None:
    """A new fake (or proxy) tensor: Meta values, its class's ``__torch_dispatch__`` on the
    Python key."""
    t._ekeys = META_BIT | PYTHON_BIT


def mark_python(t: Any) -> None:
    """Send ``t``'s ops to its class's ``__torch_dispatch__`` (the Python key)."""
    t._ekeys |= PYTHON_BIT


def has_python_key(t: Any) -> bool:
    """Whether ``t``'s ops reach a ``__torch_dispatch__`` (a wrapper or fake tensor)."""
    return bool(t._ekeys & PYTHON_BIT)


def wants_torch_function(t: Any) -> bool:
    """Whether ``t``'s class overrides ``__torch_function__`` (NOTE [torch function keys]):
    the TorchFunction keys are the highest, so one comparison answers."""
    return t._ekeys >= TORCH_FUNCTION_BIT


# ------------------------------------------------------------------ backend


def backend_keys(t: Any) -> int:
    """``t``'s backend (device kind and layout) as a key set: equal for two tensors that
    one kernel call can take together (``cpu``, ``meta``, ``lazy``, sparse)."""
    return int(t._ekeys & BACKEND_MASK)


def same_backend(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are on the same backend (``backend_keys`` equal)."""
    return (a._ekeys & BACKEND_MASK) == (b._ekeys & BACKEND_MASK)


def take_backend(t: Any, like: Any) -> None:
    """``t`` dispatches as ``like``'s backend alone (a new alias of its data, such as a
    Parameter made from a tensor): every other key is dropped."""
    t._ekeys = like._ekeys & BACKEND_MASK


def keys(t: Any) -> int:
    """The whole key set a tensor carries (``torch._C._dispatch_keys``; read-only)."""
    return t._ekeys  # type: ignore[no-any-return]
