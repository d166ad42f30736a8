"""The foreach ops beyond their samples (``tests/test_ops.py`` runs those against PyTorch):
gradients through them, in-place history on non-leaves, the leaf error, and that a list is
one dispatch. NOTE [foreach ops] in ``ember/ops/native/foreach.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember.library import Library

from .conftest import requires_torch, torch


def _leaves(m: Any) -> list[Any]:
    rng = np.random.default_rng(0)
    return [
        m.tensor(rng.uniform(0.5, 2.0, s), dtype=m.float64, requires_grad=True)
        for s in [(2, 3), (3,), ()]
    ]


#: foreach calls on lists derived from the leaves; each returns a scalar
GRAPHS = {
    "mul_scalar": lambda m, xs: sum(t.sum() for t in m._foreach_mul(xs, 3.0)),
    "addcmul": lambda m, xs: sum(
        t.sum() for t in m._foreach_addcmul(xs, xs, [x.exp() for x in xs], 0.5)
    ),
    "sqrt_of_products": lambda m, xs: sum(t.sum() for t in m._foreach_sqrt(m._foreach_mul(xs, xs))),
    "in_place_on_non_leaves": lambda m, xs: _in_place(m, xs),
}


def _in_place(m: Any, xs: list[Any]) -> Any:
    ys = [x * 2 for x in xs]
    m._foreach_add_(ys, xs, alpha=3.0)  # history rewritten per element: y = 2x + 3x
    m._foreach_mul_(ys, ys[0].sum())  # and scaled by a value that depends on x too
    return sum((y * y).sum() for y in ys)


@requires_torch
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_gradients_through_foreach_ops_match_torch(name: str) -> None:
    xs, ts = _leaves(ember), _leaves(torch)
    GRAPHS[name](ember, xs).backward()
    GRAPHS[name](torch, ts).backward()
    for x, t in zip(xs, ts, strict=True):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_in_place_on_a_leaf_that_requires_grad_raises() -> None:
    xs = _leaves(ember)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ember._foreach_add_(xs, 1.0)
    with ember.no_grad():  # what an optimizer does
        ember._foreach_add_(xs, 1.0)
    assert xs[2].item() > 1.5 and all(x._version == 1 for x in xs)


def test_a_list_is_one_dispatch() -> None:
    """Below the Autograd key, a foreach op reaches the Python key once, as on PyTorch;
    its elements run as kernels, not as dispatched ops."""
    seen: list[str] = []

    def log(op: Any, keyset: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        seen.append(str(op))
        from ember.dispatch.keys import DispatchKey, below

        return op.redispatch(keyset & below(DispatchKey.Python), *args, **kwargs)

    xs = [ember.ones(2), ember.ones(3), ember.ones(())]
    with Library("aten", "IMPL") as lib:
        lib.fallback(log, "Python")
        from ember.dispatch import state
        from ember.dispatch.keys import PYTHON_BIT

        with state.include_keys(PYTHON_BIT):
            ember._foreach_mul_(xs, 2.0)
            out = ember._foreach_add(xs, xs, alpha=0.5)
    assert seen == ["aten._foreach_mul_.Scalar", "aten._foreach_add.List"]
    assert [o.tolist() for o in out] == [[3.0, 3.0], [3.0, 3.0, 3.0], 3.0]


def test_meta_lists_give_shapes() -> None:
    xs = [ember.empty(2, 3, device="meta"), ember.empty(4, device="meta")]
    out = ember._foreach_lerp(xs, xs, 0.5)
    assert [tuple(o.shape) for o in out] == [(2, 3), (4,)]
    assert all(o.device.type == "meta" for o in out)
