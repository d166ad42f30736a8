"""Helpers the nn module tests share: the same weights in ember and PyTorch, the same inputs,
then outputs, input and parameter gradients, and training steps compared."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember

from .conftest import torch


def load_from_torch(e: Any, t: Any) -> None:
    """Copy ``t``'s state_dict into ``e`` (through NumPy), checking the keys match."""
    sd = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()}
    result = e.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys, result


def to_pair(a: np.ndarray, grad: bool = True) -> tuple[Any, Any]:
    """An ember and a torch tensor of ``a``; floating ones require grad when ``grad``."""
    e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if grad and a.dtype.kind == "f":
        e.requires_grad_()
        t.requires_grad_()
    return e, t


def flat_outputs(out: Any) -> list[Any]:
    """The tensors of a module's output (nested tuples, PackedSequence data)."""
    if out is None:
        return []
    if hasattr(out, "data") and hasattr(out, "batch_sizes"):
        return flat_outputs(out.data)
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat_outputs(o)]
    return [out]


def assert_close(e: Any, t: Any, atol: float = 1e-6, rtol: float = 1e-5, msg: str = "") -> None:
    """An ember tensor equals a torch tensor: shape, dtype name and values."""
    assert tuple(e.shape) == tuple(t.shape), f"{msg}: shape {tuple(e.shape)} != {tuple(t.shape)}"
    assert e.dtype.name == str(t.dtype).removeprefix("torch."), f"{msg}: {e.dtype} != {t.dtype}"
    np.testing.assert_allclose(
        e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=rtol, err_msg=msg
    )


def compare_call(
    e_fn: Callable[..., Any],
    t_fn: Callable[..., Any],
    e_args: Sequence[Any],
    t_args: Sequence[Any],
    e_params: Sequence[Any] = (),
    t_params: Sequence[Any] = (),
    atol: float = 1e-6,
    rtol: float = 1e-5,
    seed: int = 0,
) -> None:
    """Call both, compare every output, then backpropagate the same random cotangents and
    compare the gradients of the floating arguments that require grad and of the params."""
    eo, to = flat_outputs(e_fn(*e_args)), flat_outputs(t_fn(*t_args))
    assert len(eo) == len(to)
    for i, (a, b) in enumerate(zip(eo, to, strict=True)):
        assert_close(a, b, atol, rtol, f"output {i}")
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for a, b in zip(eo, to, strict=True) if b.requires_grad]
    if not pairs:
        return
    cots = [rng.standard_normal(tuple(b.shape)).astype(b.detach().numpy().dtype) for _, b in pairs]
    e_leaves = [x for x in e_args if isinstance(x, ember.Tensor) and x.requires_grad]
    t_leaves = [x for x in t_args if isinstance(x, torch.Tensor) and x.requires_grad]
    e_leaves += list(e_params)
    t_leaves += list(t_params)
    eg = ember.autograd.grad(
        [a for a, _ in pairs], e_leaves, [ember.from_numpy(c) for c in cots], allow_unused=True
    )
    tg = torch.autograd.grad(
        [b for _, b in pairs], t_leaves, [torch.from_numpy(c) for c in cots], allow_unused=True
    )
    for i, (a, b) in enumerate(zip(eg, tg, strict=True)):
        if b is None:
            assert a is None or not a.numpy().any(), f"grad {i}: torch has none"
            continue
        assert a is not None, f"grad {i}: ember has none"
        assert_close(a, b, atol, rtol, f"grad {i}")


def compare_module(
    e: Any, t: Any, *inputs: np.ndarray, atol: float = 1e-6, rtol: float = 1e-5, **kwargs: Any
) -> None:
    """``e`` and ``t`` from the same weights, on the same inputs: outputs and gradients."""
    load_from_torch(e, t)
    ein, tin = zip(*(to_pair(a) for a in inputs), strict=True) if inputs else ((), ())
    compare_call(
        lambda *a: e(*a, **kwargs),
        lambda *a: t(*a, **kwargs),
        ein,
        tin,
        list(e.parameters()),
        list(t.parameters()),
        atol,
        rtol,
    )


def train_both(
    e: Any,
    t: Any,
    batches: Sequence[tuple[np.ndarray, ...]],
    loss: Callable[[Any, Any, tuple[Any, ...]], Any],
    lr: float = 0.05,
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> None:
    """A few SGD steps of ``loss(lib, model, batch)`` with both libraries from the same
    weights: every loss and, at the end, every parameter equal."""
    load_from_torch(e, t)
    eo = ember.optim.SGD(e.parameters(), lr=lr, momentum=0.9)
    to = torch.optim.SGD(t.parameters(), lr=lr, momentum=0.9)
    for step, batch in enumerate(batches):
        el = loss(ember, e, tuple(ember.from_numpy(b.copy()) for b in batch))
        tl = loss(torch, t, tuple(torch.from_numpy(b.copy()) for b in batch))
        np.testing.assert_allclose(
            el.item(), tl.item(), atol=atol, rtol=rtol, err_msg=f"loss of step {step}"
        )
        eo.zero_grad()
        to.zero_grad()
        el.backward()
        tl.backward()
        eo.step()
        to.step()
    tp = dict(t.named_parameters())
    for name, p in e.named_parameters():
        assert_close(p, tp[name], atol, rtol, f"parameter {name} after training")
