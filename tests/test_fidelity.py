"""Small visible details that must be PyTorch's: grad_fn classes, named-tuple printing,
storage offsets of empty views, memory formats, factory ``out=``, ``*_like`` options,
bfloat16, loss-size warnings, the legacy ``library`` forms, reprs and dtype info."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import ember

from .conftest import requires_torch, torch

pytestmark = requires_torch


def _kind(text: str) -> str:
    """A repr up to its address, with PyTorch's module names spelled as ember's."""
    return text.split(" object at")[0].replace("torch.", "ember.")


def _graph(lib: Any) -> dict[str, Any]:
    """grad_fns of a few everyday expressions, built with ``lib`` (ember or torch)."""
    a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = lib.tensor([[1.0, 0.5], [2.0, 1.5], [0.5, 3.0]], requires_grad=True)
    c = lib.tensor([1.0, -1.0], requires_grad=True)
    w = a * 1
    w[0].mul_(2)  # an in-place write through a view: the base gets CopySlices
    v = a * 1
    view = v[0]
    view.add_(1)

    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    return {
        "mul": (a * 2).grad_fn,
        "addmm": lib.addmm(c, a, b).grad_fn,
        "sum": a.sum().grad_fn,
        "sum_dim": a.sum(0).grad_fn,
        "max_dim": a.max(1).values.grad_fn,
        "unbind": a.unbind(0)[1].grad_fn,
        "relu": a.relu().grad_fn,
        "copy_slices": w.grad_fn,
        "written_view": view.grad_fn,
        "function": Twice.apply(a).grad_fn,
        "leaf": (a * 2).grad_fn.next_functions[0][0],
    }


def test_grad_fn_classes_and_names_are_pytorchs() -> None:
    ours, theirs = _graph(ember), _graph(torch)
    for key, t_fn in theirs.items():
        e_fn = ours[key]
        assert type(e_fn).__name__ == type(t_fn).__name__, key
        assert e_fn.name() == t_fn.name(), key
        assert _kind(repr(e_fn)) == _kind(repr(t_fn)), key
        assert isinstance(e_fn, ember.autograd.graph.Node), key
    # one class per kind of node, as PyTorch's
    a = ember.ones(2, requires_grad=True)
    assert type((a * 2).grad_fn) is type((a * 3).grad_fn)
    assert type((a * 2).grad_fn) is not type((a + 2).grad_fn)


def test_grad_fn_names_in_tensor_repr() -> None:
    e, t = _graph(ember), _graph(torch)
    assert e["copy_slices"].name() == t["copy_slices"].name() == "torch::autograd::CopySlices"
    a_e = ember.ones(2, requires_grad=True)
    a_t = torch.ones(2, requires_grad=True)
    w_e, w_t = a_e * 1, a_t * 1
    w_e[0].mul_(2)
    w_t[0].mul_(2)
    assert repr(w_e) == repr(w_t)  # grad_fn=<CopySlices>
