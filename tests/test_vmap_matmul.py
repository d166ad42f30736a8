"""The matmul family under ``vmap``: the shortcuts its rules take (one gemm over the
examples' rows, a bmm of outer products, NOTE [stacked outer products]) against
``torch.func``, and graphs recorded under ``vmap(grad(f))`` freed without the collector."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import ember
from ember.func import grad, vmap

from .conftest import requires_torch, torch


def _pair(*shape: int, seed: int = 0, dtype: Any = np.float32) -> tuple[Any, Any]:
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _close(got: Any, want: Any, exact: bool = False) -> None:
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    g, w = got.detach().numpy(), want.detach().numpy()
    if exact:
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch_b", [64, 1])
def test_bmm_of_outer_products_equals_torch(dtype: Any, batch_b: int) -> None:
    # (64, 128, 1) @ (B, 1, 64): above the size the compiled loop takes over
    a, ta = _pair(64, 128, 1, dtype=dtype)
    b, tb = _pair(batch_b, 1, 64, seed=1, dtype=dtype)
    if batch_b == 1:
        b, tb = b.expand(64, 1, 64), tb.expand(64, 1, 64)
    _close(ember.bmm(a, b), torch.bmm(ta, tb), exact=True)
    # a transposed (non-contiguous) column stack
    c, tc = _pair(64, 1, 128, seed=2, dtype=dtype)
    _close(ember.bmm(c.transpose(1, 2), b), torch.bmm(tc.transpose(1, 2), tb), exact=True)


@requires_torch
def test_small_and_integer_outer_products_equal_torch() -> None:
    a, ta = _pair(3, 4, 1)
    b, tb = _pair(3, 1, 5, seed=1)
    _close(ember.bmm(a, b), torch.bmm(ta, tb), exact=True)
    ia = ember.arange(24).reshape(2, 12, 1)
    ib = ember.arange(2 * 700).reshape(2, 1, 700)
    want = torch.bmm(torch.arange(24).reshape(2, 12, 1), torch.arange(1400).reshape(2, 1, 700))
    _close(ember.bmm(ia, ib), want, exact=True)


# (in_dims, example shapes of a and b): mm of batched by unbatched, both batched, unbatched
# by batched, with inner size 1 (outer products) and larger
MM_CASES = [
    ((0, None), (3, 4), (4, 5)),
    ((0, 0), (3, 4), (4, 5)),
    ((None, 0), (3, 4), (4, 5)),
    ((0, 0), (130, 1), (1, 70)),
    ((0, None), (130, 1), (1, 70)),
    ((None, 0), (130, 1), (1, 70)),
    ((1, 0), (3, 1), (1, 5)),
]


@requires_torch
@pytest.mark.parametrize("case", range(len(MM_CASES)))
def test_vmap_mm_equals_torch(case: int) -> None:
    dims, sa, sb = MM_CASES[case]
    shape_a = sa if dims[0] is None else (*sa[: dims[0]], 6, *sa[dims[0] :])
    shape_b = sb if dims[1] is None else (*sb[: dims[1]], 6, *sb[dims[1] :])
    a, ta = _pair(*shape_a)
    b, tb = _pair(*shape_b, seed=1)
    got = vmap(ember.mm, in_dims=dims)(a, b)
    _close(got, torch.func.vmap(torch.mm, in_dims=dims)(ta, tb))


# addmm's bias shapes: the one-gemm shortcut takes a row, a (1, m) row or a scalar; a full
# (n, m) matrix and a batched bias take the general path
@requires_torch
@pytest.mark.parametrize("bias_shape", [(5,), (1, 5), (), (3, 5), (1,)])
@pytest.mark.parametrize("scale", [(1, 1), (0.5, 2.0), (0, 1)])
def test_vmap_addmm_equals_torch(bias_shape: tuple[int, ...], scale: tuple[float, float]) -> None:
    beta, alpha = scale
    x, tx = _pair(7, 3, 4)
    w, tw = _pair(4, 5, seed=1)
    c, tc = _pair(*bias_shape, seed=2)
    got = vmap(lambda m: ember.addmm(c, m, w, beta=beta, alpha=alpha))(x)
    want = torch.func.vmap(lambda m: torch.addmm(tc, m, tw, beta=beta, alpha=alpha))(tx)
    _close(got, want)
    batched_bias = vmap(lambda b, m: ember.addmm(b, m, w))(ember.stack([c] * 7), x)
    _close(batched_bias, torch.func.vmap(lambda b, m: torch.addmm(b, m, tw))(
        torch.stack([tc] * 7), tx))  # fmt: skip


@requires_torch
def test_vmap_addmm_errors_name_the_logical_shapes() -> None:
    x = ember.ones(4, 2, 3)
    with pytest.raises(RuntimeError, match=r"\(2, 3\) and \(4, 5\)"):
        vmap(lambda m: ember.addmm(ember.ones(5), m, ember.ones(4, 5)))(x)


@requires_torch
def test_grad_of_vmap_through_the_one_gemm_addmm_equals_torch() -> None:
    # grad outside vmap: the rule's physical addmm must be recorded by the outer grad
    x, tx = _pair(6, 2, 4)
    w, tw = _pair(4, 3, seed=1)
    b, tb = _pair(3, seed=2)

    def run(lib: Any, xx: Any) -> Any:
        def f(ww: Any, bb: Any) -> Any:
            return lib.func.vmap(lambda m: lib.addmm(bb, m, ww).tanh())(xx).sum()

        return lib.func.grad(f, argnums=(0, 1))(*((w, b) if lib is ember else (tw, tb)))

    for g, want in zip(run(ember, x), run(torch, tx), strict=True):
        _close(g, want)


@requires_torch
def test_per_sample_grads_of_a_linear_relu_net_equal_torch() -> None:
    x, tx = _pair(16, 20)
    params = [_pair(30, 20, seed=1), _pair(30, seed=2), _pair(5, 30, seed=3), _pair(5, seed=4)]

    def run(lib: Any, ps: list[Any], data: Any) -> Any:
        def loss(p: list[Any], xi: Any) -> Any:
            h = lib.nn.functional.linear(xi.unsqueeze(0), p[0], p[1]).relu()
            out = lib.nn.functional.linear(h, p[2], p[3])
            return lib.nn.functional.cross_entropy(out, lib.tensor([1]))

        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(ps, data)

    got = run(ember, [p[0] for p in params], x)
    want = run(torch, [p[1] for p in params], tx)
    for g, w in zip(got, want, strict=True):
        _close(g, w)


def test_vmap_grad_graphs_make_no_reference_cycles() -> None:
    # a saved output of a BatchedTensor is an alias without grad_fn (NOTE [saved outputs])
    w = ember.ones(8, 4, requires_grad=False)

    def loss(ww: Any, xi: Any) -> Any:
        return (xi @ ww.t()).relu().log_softmax(-1).sum()

    run = vmap(grad(loss), in_dims=(None, 0))
    x = ember.ones(5, 4)
    run(w, x)
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        run(w, x)
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()


def test_saved_batched_output_still_catches_inplace_changes() -> None:
    def f(xi: Any) -> Any:
        y = xi.exp()  # exp saves its output
        y.add_(1)
        return y.sum()

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        vmap(grad(f))(ember.ones(3, 2))
