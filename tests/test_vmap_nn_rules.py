"""Batching rules of the neural-network backward ops and friends that left the slow
fallback: the ``upsample_*_backward`` ops, ``grid_sampler`` and its backward,
``affine_grid_generator``, ``im2col``, ``nll_loss_backward`` with per-example weights,
``_prelu_kernel_backward``, the distance kernels, CPU flash attention, ``block_diag`` and
``logspace``. Each case runs under ``vmap`` (often of ``grad``) without the fallback's
warning and equals ``torch.func`` on the same inputs."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.func import vmap

from ._vmap_compare import arr as _arr
from ._vmap_compare import close
from ._vmap_compare import to_lib as _lib
from .conftest import requires_torch, torch

pytestmark = requires_torch

_close = close


def _both(
    fn: Callable[[Any], Any], *inputs: Any, in_dims: Any = 0, nest: Any = None, tol: float = 1e-4
) -> None:
    """``vmap(fn(lib))`` (with ``nest``, inside another vmap) on ``inputs``: ember's, without
    the fallback's warning, equals torch's."""

    def run(lib: Any) -> Any:
        f = lib.func.vmap(fn(lib), in_dims=in_dims)
        if nest is not None:
            f = lib.func.vmap(f, in_dims=nest)
        return f(*_lib(lib, inputs))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = run(ember)
    fallback = [str(w.message) for w in caught if "batching rule" in str(w.message)]
    assert not fallback, fallback
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's own fallback, for some of these ops)
        want = run(torch)
    _close(got, want, tol)


def _loop(fn: Callable[[Any], Any], *inputs: Any, in_dims: Any) -> None:
    """``vmap(fn(ember))`` without the fallback equals a loop of ``fn(torch)`` over the
    batch (where ``torch.func.vmap`` itself is wrong)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = vmap(fn(ember), in_dims=in_dims)(*_lib(ember, inputs))
    assert not [w for w in caught if "batching rule" in str(w.message)]
    ts = _lib(torch, inputs)
    size = next(t.shape[d] for t, d in zip(ts, in_dims, strict=True) if d is not None)
    pick = lambda t, d, b: t if d is None else t.select(d, b)  # noqa: E731
    outs = [fn(torch)(*(pick(t, d, b) for t, d in zip(ts, in_dims, strict=True)))
            for b in range(size)]  # fmt: skip
    if isinstance(outs[0], tuple):
        want: Any = tuple(torch.stack([o[i] for o in outs]) for i in range(len(outs[0])))
    else:
        want = torch.stack(outs)
    _close(got, want, 2e-4)


def _weights(m: Any, shape: Any) -> Any:
    """A fixed cotangent-like weighting, so every output element's gradient differs."""
    n = math.prod(shape)
    return m.arange(n, dtype=m.float32).reshape(shape).sin()


# ------------------------------------------------------------------ resampling


@pytest.mark.parametrize(
    "mode, size, kw",
    [
        ("nearest", (2, 3, 5), {}),
        ("nearest-exact", (2, 3, 5), {}),
        ("linear", (2, 3, 5), {"align_corners": False}),
        ("nearest", (2, 3, 5, 4), {}),
        ("nearest-exact", (2, 3, 5, 4), {}),
        ("bilinear", (2, 3, 5, 4), {"align_corners": True}),
        ("bicubic", (2, 3, 5, 4), {"align_corners": False}),
        ("nearest", (1, 2, 3, 4, 3), {}),
        ("nearest-exact", (1, 2, 3, 4, 3), {}),
        ("trilinear", (1, 2, 3, 4, 3), {"align_corners": False}),
    ],
)
def test_per_example_gradients_through_upsampling(mode: str, size: Any, kw: Any) -> None:
    x = _arr(3, *size)
    out = tuple(2 * s + 1 for s in size[2:])

    def fn(m: Any) -> Any:
        def loss(a: Any) -> Any:
            y = m.nn.functional.interpolate(a, size=out, mode=mode, **kw)
            return (y * _weights(m, y.shape)).sum()

        return m.func.grad(loss)

    _both(fn, x)
    _both(fn, np.moveaxis(x, 0, 2), in_dims=2)


def _sample(m: Any, a: Any, g: Any, mode: str, padding: str) -> Any:
    return m.nn.functional.grid_sample(a, g, mode=mode, padding_mode=padding, align_corners=False)


@pytest.mark.parametrize("mode, padding", [("bilinear", "zeros"), ("nearest", "border"),
                                           ("bilinear", "reflection")])  # fmt: skip
@pytest.mark.parametrize("dims", [(0, 0), (0, None), (None, 0), (1, 0)])
def test_grid_sample_and_its_gradients(mode: str, padding: str, dims: Any) -> None:
    x, grid = _arr(3, 2, 3, 5, 6), np.tanh(_arr(3, 2, 4, 3, 2, seed=1)) * 1.1
    xs = x if dims[0] == 0 else x[0] if dims[0] is None else np.moveaxis(x, 0, 1)
    gs = grid if dims[1] is not None else grid[0]

    def forward(m: Any) -> Any:
        return lambda a, g: _sample(m, a, g, mode, padding)

    def grads(m: Any) -> Any:
        def loss(a: Any, g: Any) -> Any:
            y = _sample(m, a, g, mode, padding)
            return (y * _weights(m, y.shape)).sum()

        return m.func.grad(loss, argnums=(0, 1))

    # torch.func.vmap's grid_sample with the input batched at dim 1 gives the wrong shape
    # and values (PyTorch 2.13): there the loop is the oracle
    check = _both if dims[0] != 1 else _loop
    check(forward, xs, gs, in_dims=dims)
    if mode != "nearest":  # (nearest's grid gradient is zero in both)
        check(grads, xs, gs, in_dims=dims)


def test_grid_sample_3d_nested() -> None:
    x, grid = _arr(2, 3, 1, 2, 4, 3, 5), np.tanh(_arr(2, 3, 1, 3, 2, 2, 3, seed=1))

    def fn(m: Any) -> Any:
        return lambda a, g: _sample(m, a, g, "bilinear", "zeros")

    _both(fn, x, grid, nest=0)


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_per_example_theta(align_corners: bool) -> None:
    theta = _arr(3, 2, 2, 3)

    def fn(m: Any) -> Any:
        return lambda t: m.nn.functional.affine_grid(t, [2, 1, 4, 5], align_corners=align_corners)

    _both(fn, theta)
    _both(fn, np.moveaxis(theta, 0, 1), in_dims=1)

    def model(m: Any) -> Any:  # a spatial transformer: affine_grid into grid_sample
        def loss(t: Any, a: Any) -> Any:
            g = m.nn.functional.affine_grid(t, [2, 3, 4, 5], align_corners=align_corners)
            y = m.nn.functional.grid_sample(a, g, align_corners=align_corners)
            return (y * _weights(m, y.shape)).sum()

        return m.func.grad(loss, argnums=(0, 1))

    _both(model, theta, _arr(3, 2, 3, 6, 7, seed=1))


def test_im2col_through_unfold() -> None:
    x = _arr(3, 2, 3, 7, 6)

    def fn(m: Any) -> Any:
        return lambda a: m.nn.functional.unfold(a, (2, 3), dilation=1, padding=1, stride=(2, 1))

    _both(fn, x)
    _both(fn, x[:, 0])  # a 3-D input: the vmap batch is the op's batch


def test_vmap_of_grad_through_an_upsample_and_grid_sample_model_does_not_warn() -> None:
    """Per-example gradients of a model with a convolution, an upsample and a grid_sample
    (the backward ops that used to take the fallback), with the parameters shared."""
    x, grid = _arr(4, 1, 2, 5, 5), np.tanh(_arr(4, 1, 6, 6, 2, seed=1))
    w = _arr(3, 2, 3, 3, seed=2)

    def fn(m: Any) -> Any:
        def loss(weight: Any, a: Any, g: Any) -> Any:
            h = m.nn.functional.conv2d(a, weight, padding=1)
            h = m.nn.functional.interpolate(h, scale_factor=2, mode="bilinear")
            y = m.nn.functional.grid_sample(h, g, align_corners=False)
            return (y * _weights(m, y.shape)).sum()

        return m.func.grad(loss)

    _both(fn, w, x, grid, in_dims=(None, 0, 0))


# ------------------------------------------------------------------ losses and activations


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_gradients_with_per_example_class_weights(reduction: str) -> None:
    logits, weight = _arr(3, 5, 4), np.abs(_arr(3, 4, seed=1)) + 0.1
    target = np.random.default_rng(2).integers(0, 4, (3, 5)).astype(np.int64)
    target[0, 1] = target[2, 3] = -100  # ignored

    def fn(m: Any) -> Any:
        def loss(a: Any, t: Any, w: Any) -> Any:
            out = m.nn.functional.nll_loss(a.log_softmax(-1), t, weight=w, reduction=reduction)
            return (out * _weights(m, out.shape)).sum()

        return m.func.grad(loss)

    _both(fn, logits, target, weight)
    _both(fn, logits[0], target, weight, in_dims=(None, 0, 0))
    _both(fn, logits[:, 0], target[:, 0], weight)  # a 1-D input per example


def test_prelu_gradients_with_batched_weights() -> None:
    x, w = _arr(3, 2, 4, 5), _arr(3, 4, seed=1)

    def fn(m: Any) -> Any:
        def loss(a: Any, ww: Any) -> Any:
            y = m.nn.functional.prelu(a, ww)
            return (y * _weights(m, y.shape)).sum()

        return m.func.grad(loss, argnums=(0, 1))

    _both(fn, x, w)
    _both(fn, x[0], w, in_dims=(None, 0))
    _both(fn, x, w[0], in_dims=(0, None))


def test_native_dropout_backward() -> None:
    g, mask = _arr(3, 4, 5), np.random.default_rng(1).random((3, 4, 5)) > 0.3

    def fn(m: Any) -> Any:
        return lambda a, k: m.ops.aten.native_dropout_backward.default(a, k, 1 / 0.7)

    _both(fn, g, mask)
    _both(fn, g[0], mask, in_dims=(None, 0))


# ------------------------------------------------------------------ distances


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, math.inf])
def test_cdist_and_its_gradients(p: float) -> None:
    a, b = _arr(3, 4, 3), _arr(3, 5, 3, seed=1)

    def fn(m: Any) -> Any:
        def loss(x1: Any, x2: Any) -> Any:
            d = m.cdist(x1, x2, p=p)
            return (d * _weights(m, d.shape)).sum()

        return m.func.grad(loss, argnums=(0, 1))

    _both(lambda m: lambda x1, x2: m.cdist(x1, x2, p=p), a, b)
    _both(lambda m: lambda x1, x2: m.cdist(x1, x2, p=p), a[0], b, in_dims=(None, 0))
    _both(fn, a, b)
    _both(fn, a, b[0], in_dims=(0, None))
    _both(lambda m: lambda x1, x2: m.cdist(x1, x2, p=p), _arr(2, 3, 4, 3), b[0],
          in_dims=(0, None), nest=(0, None))  # fmt: skip


def test_cdist_by_matrix_products() -> None:
    """Rows past 25: the ``_euclidean_dist`` path."""
    a, b = _arr(2, 30, 3), _arr(2, 27, 3, seed=1)
    _both(lambda m: lambda x1, x2: m.cdist(x1, x2), a, b)
    _both(lambda m: lambda x1, x2: m.ops.aten._euclidean_dist.default(x1, x2), a, b[0],
          in_dims=(0, None))  # fmt: skip


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, math.inf])
def test_pdist_and_its_gradient(p: float) -> None:
    x = _arr(3, 5, 4)

    def fn(m: Any) -> Any:
        def loss(a: Any) -> Any:
            d = m.pdist(a, p=p)
            return (d * _weights(m, d.shape)).sum()

        return m.func.grad(loss)

    _both(lambda m: lambda a: m.pdist(a, p=p), x)
    _both(fn, x)
    _both(fn, np.moveaxis(x, 0, 2), in_dims=2)


# ------------------------------------------------------------------ attention


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_cpu_flash_attention_and_its_backward(causal: bool, masked: bool) -> None:
    q, k, v = _arr(3, 2, 2, 4, 8), _arr(3, 2, 2, 5, 8, seed=1), _arr(3, 2, 2, 5, 8, seed=2)
    mask = _arr(3, 4, 5, seed=3) if masked and not causal else None

    def op(m: Any) -> Any:
        return m.ops.aten._scaled_dot_product_flash_attention_for_cpu.default

    def forward(m: Any) -> Any:
        if mask is None:
            return lambda a, b, c: op(m)(a, b, c, 0.0, causal)
        return lambda a, b, c, mk: op(m)(a, b, c, 0.0, causal, attn_mask=mk)

    extra = () if mask is None else (mask,)
    _both(forward, q, k, v, *extra)
    _both(forward, q, k[0], v[0], *extra, in_dims=(0, None, None, *(0,) * len(extra)))

    def backward(m: Any) -> Any:
        bwd = m.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default

        def f(a: Any, b: Any, c: Any, *mk: Any) -> Any:
            kw = {"attn_mask": mk[0]} if mk else {}
            out, lse = op(m)(a, b, c, 0.0, causal, **kw)
            return bwd(_weights(m, out.shape), a, b, c, out, lse, 0.0, causal, **kw)

        return f

    _both(backward, q, k, v, *extra)
    _both(backward, q[0], k, v[0], *extra, in_dims=(None, 0, None, *(0,) * len(extra)))


# ------------------------------------------------------------------ built tensors


def test_block_diag() -> None:
    a, b = _arr(3, 2, 3), _arr(3, 4, seed=1)
    c = np.arange(3, dtype=np.int64)  # 0-dim integer blocks: float32 wins

    def fn(m: Any) -> Any:
        return lambda x, y, z: m.block_diag(x, y, z)

    _both(fn, a, b, c)
    _both(fn, a[0], b, c, in_dims=(None, 0, 0))
    _both(fn, a, b[0], np.array(c[0]), in_dims=(0, None, None))
    _both(fn, np.moveaxis(a, 0, 2), b, c, in_dims=(2, 0, 0))
    _both(lambda m: lambda x, y: m.block_diag(x, y), _arr(2, 3, 2, 3), b[0], in_dims=(0, None),
          nest=(0, None))  # fmt: skip


@pytest.mark.parametrize("dtype", [None, "float64", "int64"])
def test_logspace_with_tensor_bounds(dtype: str | None) -> None:
    start = np.array([-1.0, 0.5, 2.0], np.float32)
    end = np.array([2.0, 3.25, -1.0], np.float32)
    if dtype == "int64":  # (ember's kernel keeps fractional bounds where PyTorch's truncates)
        start, end = np.trunc(start), np.trunc(end)

    def fn(m: Any) -> Any:
        d = None if dtype is None else getattr(m, dtype)
        return lambda s, e: m.logspace(s, e, 7, base=2.0, dtype=d)

    def start_only(m: Any) -> Any:
        d = None if dtype is None else getattr(m, dtype)
        return lambda s: m.logspace(s, 3.0, 6, dtype=d)

    def end_only(m: Any) -> Any:
        d = None if dtype is None else getattr(m, dtype)
        return lambda e: m.logspace(-2, e, 5, base=3.0, dtype=d)

    _both(fn, start, end)
    _both(end_only, end)
    # torch.func.vmap's logspace(tensor, number) is float64 by default (PyTorch 2.13), a
    # loop's the default dtype: the loop is the oracle
    _loop(fn, start, np.array(end[0]), in_dims=(0, None))
    _loop(start_only, start, in_dims=(0,))
