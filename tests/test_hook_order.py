"""The order in which the engine runs the hooks around one node, against PyTorch: a
tensor's ``register_hook`` hooks, then ``retain_grad``, then the node's pre-hooks, then
the node, then its post hooks; for a leaf, its hooks and its accumulator's pre-hooks run
once each (ember used to run a node's pre-hooks first, and a leaf's hooks twice when its
accumulator had a pre-hook). Each hook changes the gradient, so an order shows in it."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import ember

KINDS = ["tensor", "retain", "pre", "post"]


def _run(lib: Any, kinds: tuple[str, ...], leaf: bool) -> tuple[list[str], Any, Any]:
    order: list[str] = []

    def tensor_hook(g: Any) -> Any:
        order.append("tensor")
        return g * 10

    def pre_hook(gs: Any) -> Any:
        order.append("pre")
        return (gs[0] + 1,)

    def post_hook(grad_inputs: Any, grad_outputs: Any) -> Any:
        order.append("post")
        return tuple(g * 2 if g is not None else None for g in grad_inputs)

    x = lib.tensor([1.0, -2.0], requires_grad=True)
    y = x if leaf else x * 3
    z = (y * y).sum()
    # y's node: its own, or for the leaf x its accumulator, below z's sum and product
    node = z.grad_fn.next_functions[0][0].next_functions[0][0] if leaf else y.grad_fn
    for kind in kinds:
        if kind == "tensor":
            y.register_hook(tensor_hook)
        elif kind == "retain" and not leaf:
            y.retain_grad()
        elif kind == "pre":
            node.register_prehook(pre_hook)
        elif kind == "post" and not leaf:
            node.register_hook(post_hook)
    z.backward()
    retained = None if leaf or "retain" not in kinds else y.grad
    return order, x.grad, retained


@pytest.mark.parametrize("leaf", [False, True], ids=["non_leaf", "leaf"])
@pytest.mark.parametrize(
    "kinds", [p for n in (2, 3, 4) for p in itertools.permutations(KINDS, n)], ids=str
)
def test_hooks_run_in_pytorchs_order(kinds: tuple[str, ...], leaf: bool) -> None:
    torch = pytest.importorskip("torch")
    want = _run(torch, kinds, leaf)
    got = _run(ember, kinds, leaf)
    assert got[0] == want[0]
    for g, w in zip(got[1:], want[1:], strict=True):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy())
