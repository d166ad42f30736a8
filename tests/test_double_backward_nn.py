"""Double backward through the nn layers: second derivatives of conv2d, avg_pool2d,
layer_norm, batch_norm (training and eval), embedding and nll_loss/cross_entropy through the
public ``nn.functional`` API, checked against finite differences (``gradgradcheck``) and, for
small networks, against PyTorch's second-order gradients (a gradient penalty).

The backward ops' own formulas are checked one by one in ``test_gradcheck.py``; here they
are checked as they are used, chained through the forward formulas (NOTE [double backward of
the nn backward ops] in ``ember/autograd/derivatives_nn.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

from .conftest import python_key_calls, requires_torch, torch

F64 = ember.float64


def _rand(*shape: int, seed: int = 0, low: float | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, low + 1.5, shape)
    return rng.standard_normal(shape)


def _leaf(a: np.ndarray) -> ember.Tensor:
    return ember.from_numpy(a.copy()).requires_grad_()


def _long(values: Any) -> ember.Tensor:
    return ember.from_numpy(np.asarray(values, np.int64))


# --------------------------------------------------------------------------- gradgradcheck


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"stride": 2, "padding": 1},
        {"padding": (1, 0), "dilation": (2, 1)},
        {"groups": 2},
    ],
    ids=["plain", "stride-padding", "dilation", "groups"],
)
def test_conv2d(kwargs: dict[str, Any]) -> None:
    x, b = _leaf(_rand(1, 2, 5, 4)), _leaf(_rand(2, seed=2))
    w = _leaf(_rand(2, 2 // kwargs.get("groups", 1), 3, 2, seed=1))
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, **kwargs), (x, w, b))


def test_conv2d_without_bias_or_input_grad() -> None:
    """Only the weight differentiates: the second derivative flows through the weight alone."""
    x, w = ember.from_numpy(_rand(1, 2, 5, 4)), _leaf(_rand(3, 2, 2, 2, seed=1))
    assert gradgradcheck(lambda w: F.conv2d(x, w, padding=1).tanh(), (w,))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
        {"kernel_size": (3, 2), "stride": (2, 1), "ceil_mode": True},
        {"kernel_size": 2, "stride": 1, "divisor_override": 3},
    ],
    ids=["plain", "exclude-pad", "ceil-mode", "divisor"],
)
def test_avg_pool2d(kwargs: dict[str, Any]) -> None:
    x = _leaf(_rand(1, 2, 5, 4))
    # avg_pool2d is linear: square it so the second derivative is not zero everywhere
    assert gradgradcheck(lambda x: F.avg_pool2d(x, **kwargs).pow(2), (x,))


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(4,), (3, 4)])
def test_layer_norm(affine: bool, shape: tuple[int, ...]) -> None:
    x = _leaf(_rand(2, 3, 4))
    params = (_leaf(_rand(*shape, seed=1)), _leaf(_rand(*shape, seed=2))) if affine else ()
    assert gradgradcheck(lambda x, *p: F.layer_norm(x, list(shape), *p, eps=1e-3), (x, *params))


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (2, 3, 2, 2)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training(shape: tuple[int, ...], affine: bool) -> None:
    x = _leaf(_rand(*shape))
    params = (_leaf(_rand(3, seed=1)), _leaf(_rand(3, seed=2))) if affine else ()

    def fn(x: ember.Tensor, *p: ember.Tensor) -> ember.Tensor:
        rm, rv = ember.zeros(3, dtype=F64), ember.ones(3, dtype=F64)  # updated: fresh per call
        return F.batch_norm(x, rm, rv, *p, training=True, eps=1e-3)

    assert gradgradcheck(fn, (x, *params))


def test_batch_norm_training_without_running_stats() -> None:
    x, w = _leaf(_rand(4, 3, 2)), _leaf(_rand(3, seed=1))
    assert gradgradcheck(lambda x, w: F.batch_norm(x, None, None, w, training=True), (x, w))


@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_eval(affine: bool) -> None:
    x = _leaf(_rand(4, 3, 2))
    rm, rv = ember.from_numpy(_rand(3, seed=3)), ember.from_numpy(_rand(3, seed=4, low=0.5))
    params = (_leaf(_rand(3, seed=1)), _leaf(_rand(3, seed=2))) if affine else ()

    def fn(x: ember.Tensor, *p: ember.Tensor) -> ember.Tensor:
        return F.batch_norm(x, rm, rv, *p, training=False).pow(2)  # eval mode is affine in x

    assert gradgradcheck(fn, (x, *params))


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}], ids=["plain", "padding_idx"])
def test_embedding(kwargs: dict[str, Any]) -> None:
    idx = _long([[0, 4, 2], [2, 2, 1]])
    w = _leaf(_rand(5, 3))
    assert gradgradcheck(lambda w: F.embedding(idx, w, **kwargs).pow(2), (w,))


def test_embedding_scale_grad_by_freq() -> None:
    """Scaling by frequency makes the first "gradient" a heuristic, not the derivative of the
    lookup (PyTorch's gradcheck fails on it too), so the lookup is kept linear here: what is
    checked is how the first gradient depends on the incoming one (the double backward)."""
    idx = _long([[0, 4, 2], [2, 2, 1]])
    w, scale = _leaf(_rand(5, 3)), ember.from_numpy(_rand(2, 3, 3, seed=1))
    assert gradgradcheck(lambda w: F.embedding(idx, w, scale_grad_by_freq=True) * scale, (w,))
    go, c = _leaf(_rand(2, 3, 3, seed=2)), _rand(5, 3, seed=3)
    out = F.embedding(idx, w, scale_grad_by_freq=True)
    (gw,) = ember.autograd.grad(out, [w], [go], create_graph=True)
    (g_go,) = ember.autograd.grad((gw * ember.from_numpy(c)).sum(), [go])
    counts = np.bincount(idx.numpy().ravel(), minlength=5)
    expected = c[idx.numpy()] / counts[idx.numpy()][..., None]  # row 2 is looked up 3 times
    np.testing.assert_allclose(g_go.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction: str, weighted: bool) -> None:
    x = _leaf(_rand(5, 4))
    target = _long([0, 3, 1, 1, 2])
    weight = ember.from_numpy(_rand(4, seed=1, low=0.2)) if weighted else None

    def fn(x: ember.Tensor) -> ember.Tensor:
        return F.nll_loss(x.log_softmax(1), target, weight, ignore_index=1, reduction=reduction)

    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy(label_smoothing: float) -> None:
    x = _leaf(_rand(4, 3, 2))
    target = _long([[0, 2], [1, -100], [2, 2], [0, 1]])
    weight = ember.from_numpy(_rand(3, seed=1, low=0.2))

    def fn(x: ember.Tensor) -> ember.Tensor:
        return F.cross_entropy(x, target, weight, label_smoothing=label_smoothing)

    assert gradgradcheck(fn, (x,))


def test_third_derivative_of_conv_and_layer_norm() -> None:
    """The double-backward formulas are ember ops themselves, so they differentiate again."""
    x, w = _leaf(_rand(1, 1, 4, 3)), _leaf(_rand(2, 1, 2, 2, seed=1))

    def second(x: ember.Tensor, w: ember.Tensor) -> ember.Tensor:
        y = F.layer_norm(F.conv2d(x, w), [3, 2]).pow(2).sum()
        (gx,) = ember.autograd.grad(y, [x], create_graph=True)
        return gx.pow(2).sum()

    assert gradgradcheck(second, (x, w))


# --------------------------------------------------------------------------- what runs


def test_statistics_are_recomputed_only_when_recording() -> None:
    """Without create_graph, layer_norm's backward reuses the saved statistics (no var op);
    with it, they are recomputed in ember ops so the second backward reaches the input."""
    for create_graph in (False, True):
        x = _leaf(_rand(2, 4))
        y = F.layer_norm(x, [4]).pow(2).sum()
        with python_key_calls() as calls:
            ember.autograd.grad(y, [x], create_graph=create_graph)
        names = [name for name, _ in calls]
        assert "native_layer_norm_backward.default" in names, names
        assert any(n.startswith("var.") for n in names) is create_graph, names


def test_conv_double_backward_skips_unwanted_gradients() -> None:
    """With the input not requiring grad, no convolution_backward of the second pass computes
    an input gradient (output_mask[0] is False throughout), as PyTorch's grad_input_mask."""
    x, w = ember.from_numpy(_rand(1, 2, 5, 4)), _leaf(_rand(3, 2, 2, 2, seed=1))
    (gw,) = ember.autograd.grad(F.conv2d(x, w).pow(2).sum(), [w], create_graph=True)
    with python_key_calls() as calls:
        (ggw,) = ember.autograd.grad(gw.pow(2).sum(), [w])
    masks = [list(args[-1]) for name, args in calls if name == "convolution_backward.default"]
    assert any(name == "convolution.default" for name, _ in calls), "no double backward ran"
    assert not any(m[0] for m in masks), masks
    assert ggw.shape == w.shape


def test_first_gradients_do_not_change_with_create_graph() -> None:
    """Recording the graph recomputes batch norm's statistics: the values stay the same."""
    x, w = _leaf(_rand(4, 3, 2)), _leaf(_rand(3, seed=1))
    y = (F.batch_norm(x, None, None, w, training=True) * ember.from_numpy(_rand(4, 3, 2))).sum()
    plain = ember.autograd.grad(y, [x, w], retain_graph=True)
    recorded = ember.autograd.grad(y, [x, w], create_graph=True)
    for a, b in zip(plain, recorded, strict=True):
        assert b.requires_grad
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_backward_ops_are_differentiable_in_their_statistics() -> None:
    """native_layer_norm_backward differentiates in mean and rstd as independent inputs
    (PyTorch refuses): what gradcheck of the op alone needs."""
    x = ember.from_numpy(_rand(2, 3))
    go, mean, rstd = (
        _leaf(_rand(2, 3, seed=1)),
        _leaf(_rand(2, 1, seed=2)),
        _leaf(_rand(2, 1, seed=3, low=0.5)),
    )

    def fn(go: ember.Tensor, mean: ember.Tensor, rstd: ember.Tensor) -> ember.Tensor:
        out = ember.ops.aten.native_layer_norm_backward(
            go, x, [3], mean, rstd, None, None, [True, False, False]
        )
        return out[0]

    assert gradcheck(fn, (go, mean, rstd))


# --------------------------------------------------------------------------- against PyTorch


def _gradient_penalty_grads(
    lib: Any,
    fn: Callable[..., Any],
    x_array: np.ndarray,
    param_arrays: Sequence[np.ndarray],
) -> list[np.ndarray]:
    """Gradients of ``loss + ||d loss / d x||^2`` w.r.t. the parameters, in ``lib`` (ember or
    torch): a gradient penalty, so the second derivatives of every layer enter."""
    x = lib.from_numpy(x_array.copy()).requires_grad_()
    params = [lib.from_numpy(p.copy()).requires_grad_() for p in param_arrays]
    loss = fn(lib, x, *params)
    (gx,) = lib.autograd.grad(loss, [x], create_graph=True)
    total = loss + gx.pow(2).sum()
    grads = lib.autograd.grad(total, [x, *params])
    return [g.detach().numpy() for g in grads]


def _conv_net(lib: Any, x: Any, w1: Any, g1: Any, w2: Any, b2: Any, wl: Any) -> Any:
    f = lib.nn.functional
    h = f.conv2d(x, w1, None, padding=1)  # a bias before batch norm would cancel out
    h = f.batch_norm(h, None, None, g1, None, training=True)
    h = f.avg_pool2d(h.tanh(), 2, ceil_mode=True)
    h = f.conv2d(h, w2, b2, stride=1, groups=2)
    h = f.layer_norm(h, list(h.shape[1:]))
    logits = f.linear(h.flatten(1).tanh(), wl)
    target = lib.from_numpy(np.array([0, 2, 1], np.int64))
    return f.cross_entropy(logits, target, label_smoothing=0.1)


@requires_torch
def test_gradient_penalty_of_conv_net_matches_torch() -> None:
    shapes = [(4, 2, 3, 3), (4,), (4, 2, 2, 2), (4,), (3, 8)]
    params = [_rand(*s, seed=i + 1) * 0.5 for i, s in enumerate(shapes)]
    x = _rand(3, 2, 5, 4)
    ours = _gradient_penalty_grads(ember, _conv_net, x, params)
    theirs = _gradient_penalty_grads(torch, _conv_net, x, params)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert np.abs(b).max() > 1e-6, f"input {i}: PyTorch's gradient is zero, a weak check"
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11, err_msg=f"input {i}")


def _embedding_net(lib: Any, x: Any, table: Any, w: Any, g: Any) -> Any:
    f = lib.nn.functional
    idx = lib.from_numpy(np.array([[0, 3, 3], [1, 0, 2]], np.int64))
    e = f.embedding(idx, table, padding_idx=1, scale_grad_by_freq=False)
    h = (e * x).sum(-1)  # x: (2, 3, 4) mixes with the looked-up rows
    h = f.batch_norm(h.unsqueeze(-1), None, None, g, None, training=True).squeeze(-1)
    logp = f.log_softmax(f.linear(h.tanh(), w), 1)
    return f.nll_loss(logp, lib.from_numpy(np.array([1, 0], np.int64)), reduction="sum")


@requires_torch
def test_gradient_penalty_of_embedding_net_matches_torch() -> None:
    params = [_rand(4, 4, seed=1), _rand(3, 3, seed=2), _rand(3, seed=3)]
    x = _rand(2, 3, 4)
    ours = _gradient_penalty_grads(ember, _embedding_net, x, params)
    theirs = _gradient_penalty_grads(torch, _embedding_net, x, params)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11, err_msg=f"input {i}")


@requires_torch
def test_batch_norm_eval_double_backward_matches_torch() -> None:
    """Eval mode normalizes with the running statistics: second derivatives through the
    weight and input, against PyTorch."""
    rm, rv = _rand(3, seed=5), _rand(3, seed=6, low=0.5)

    def fn(lib: Any, x: Any, w: Any, b: Any) -> Any:
        rmean, rvar = lib.from_numpy(rm.copy()), lib.from_numpy(rv.copy())
        y = lib.nn.functional.batch_norm(x, rmean, rvar, w, b, training=False)
        return (y.tanh() * w.sum()).sum()

    params = [_rand(3, seed=1), _rand(3, seed=2)]
    ours = _gradient_penalty_grads(ember, fn, _rand(4, 3, 2), params)
    theirs = _gradient_penalty_grads(torch, fn, _rand(4, 3, 2), params)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11, err_msg=f"input {i}")
