"""ember.nn.functional against torch.nn.functional: values, and gradients of every input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
import ember.autograd
from ember.nn import functional as F

from .conftest import requires_torch, torch
from .nn_compare import to_pair as _pair

pytestmark = requires_torch
RNG = np.random.default_rng(0)


def _arr(*shape: int, low: float = -2, high: float = 2) -> np.ndarray:
    return RNG.uniform(low, high, shape)


def check(
    fn: str,
    arrays: list[np.ndarray],
    *args: Any,
    grad: bool = True,
    atol: float = 1e-7,
    **kwargs: Any,
) -> None:
    """Call F.<fn> and torch's with the same inputs; compare outputs and input gradients."""
    pairs = [_pair(a, grad) for a in arrays]
    e_out = getattr(F, fn)(*[p[0] for p in pairs], *args, **kwargs)
    t_out = getattr(torch.nn.functional, fn)(*[p[1] for p in pairs], *args, **kwargs)
    e_out = e_out[0] if isinstance(e_out, tuple) else e_out
    t_out = t_out[0] if isinstance(t_out, tuple) else t_out
    np.testing.assert_allclose(
        np.asarray(e_out._edata), t_out.detach().numpy(), atol=atol, rtol=1e-6
    )
    if not grad or not t_out.requires_grad:
        return
    cot = RNG.standard_normal(tuple(t_out.shape))
    leaves = [(e, t) for e, t in pairs if t.requires_grad]
    eg = ember.autograd.grad(
        [e_out], [e for e, _ in leaves], [ember.from_numpy(cot)], allow_unused=True
    )
    tg = torch.autograd.grad(
        [t_out], [t for _, t in leaves], [torch.from_numpy(cot)], allow_unused=True
    )
    for i, (a, b) in enumerate(zip(eg, tg, strict=True)):
        if b is None:
            continue
        np.testing.assert_allclose(
            a.numpy(), b.numpy(), atol=atol, rtol=1e-6, err_msg=f"{fn} grad {i}"
        )


def _idx(*values: Any) -> np.ndarray:
    return np.asarray(values, np.int64)


CASES: list[tuple[str, Callable[[], list[np.ndarray]], tuple[Any, ...], dict[str, Any]]] = [
    ("linear", lambda: [_arr(4, 3), _arr(5, 3), _arr(5)], (), {}),
    ("linear", lambda: [_arr(2, 4, 3), _arr(5, 3)], (), {}),
    (
        "conv2d",
        lambda: [_arr(2, 3, 7, 6), _arr(4, 3, 3, 3), _arr(4)],
        (),
        {"stride": 2, "padding": 1},
    ),
    ("conv2d", lambda: [_arr(2, 4, 7, 6), _arr(4, 2, 3, 2)], (), {"groups": 2, "dilation": (2, 1)}),
    ("conv2d", lambda: [_arr(1, 2, 6, 6), _arr(3, 2, 4, 4)], (), {"padding": "same"}),
    (
        "max_pool2d",
        lambda: [_arr(2, 3, 7, 6)],
        (3,),
        {"stride": 2, "padding": 1, "ceil_mode": True},
    ),
    (
        "avg_pool2d",
        lambda: [_arr(2, 3, 7, 6)],
        (3,),
        {"stride": 2, "padding": 1, "count_include_pad": False},
    ),
    ("relu", lambda: [_arr(3, 4)], (), {}),
    ("gelu", lambda: [_arr(3, 4)], (), {}),
    ("gelu", lambda: [_arr(3, 4)], (), {"approximate": "tanh"}),
    ("silu", lambda: [_arr(3, 4)], (), {}),
    ("tanh", lambda: [_arr(3, 4)], (), {}),
    ("sigmoid", lambda: [_arr(3, 4)], (), {}),
    ("softmax", lambda: [_arr(3, 4)], (), {"dim": 1}),
    ("log_softmax", lambda: [_arr(3, 4)], (), {"dim": 0}),
    ("layer_norm", lambda: [_arr(2, 3, 4)], ((3, 4),), {}),
    ("layer_norm", lambda: [_arr(2, 3, 4)], ((4,),), {"eps": 1e-3}),
    ("embedding", lambda: [_idx([1, 4, 4], [0, 2, 4]), _arr(5, 3)], (), {"padding_idx": 2}),
    ("mse_loss", lambda: [_arr(3, 4), _arr(3, 4)], (), {}),
    ("mse_loss", lambda: [_arr(3, 4), _arr(3, 4)], (), {"reduction": "sum"}),
    ("l1_loss", lambda: [_arr(3, 4), _arr(3, 4)], (), {"reduction": "none"}),
    (
        "binary_cross_entropy_with_logits",
        lambda: [_arr(3, 4, low=-9, high=9), _arr(3, 4, low=0, high=1)],
        (),
        {},
    ),
    ("nll_loss", lambda: [_arr(5, 4, low=-3, high=0), _idx(0, 3, -100, 1, 2)], (), {}),
    (
        "nll_loss",
        lambda: [_arr(3, 4, 2, 2, low=-3, high=0), _idx(*range(12)).reshape(3, 2, 2) % 4],
        (),
        {"reduction": "sum"},
    ),
    ("cross_entropy", lambda: [_arr(5, 4), _idx(0, 3, -100, 1, 2)], (), {}),
    (
        "cross_entropy",
        lambda: [_arr(5, 4), _idx(0, 3, 1, 1, 2)],
        (),
        {"ignore_index": 1, "label_smoothing": 0.2},
    ),
    (
        "cross_entropy",
        lambda: [_arr(5, 4), _idx(0, 3, -100, 1, 2)],
        (),
        {"label_smoothing": 0.1, "reduction": "sum"},
    ),
    (
        "cross_entropy",
        lambda: [_arr(5, 4), _idx(0, 3, -100, 1, 2)],
        (),
        {"label_smoothing": 0.1, "reduction": "none"},
    ),
    (
        "cross_entropy",
        lambda: [_arr(5, 4), _arr(5, 4, low=0, high=1)],
        (),
        {"label_smoothing": 0.3},
    ),
    ("cross_entropy", lambda: [_arr(3, 4, 2, 2), _idx(*range(12)).reshape(3, 2, 2) % 4], (), {}),
    ("pad", lambda: [_arr(2, 3, 4)], ((1, 2, -1, 1),), {}),
    ("pad", lambda: [_arr(2, 3)], ((1, 1),), {"value": 3.0}),
    (
        "scaled_dot_product_attention",
        lambda: [_arr(2, 3, 4, 8), _arr(2, 3, 5, 8), _arr(2, 3, 5, 6)],
        (),
        {},
    ),
    (
        "scaled_dot_product_attention",
        lambda: [_arr(2, 4, 8), _arr(2, 4, 8), _arr(2, 4, 6)],
        (),
        {"is_causal": True},
    ),
    ("dropout", lambda: [_arr(3, 4)], (0.5,), {"training": False}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_functional_matches_torch(case: Any) -> None:
    fn, make, args, kwargs = case
    check(fn, make(), *args, **kwargs)


def test_weighted_losses_values() -> None:
    x, t, w = _arr(5, 4), _idx(0, 3, -100, 1, 2), _arr(4, low=0.1, high=2)
    for kw in ({}, {"label_smoothing": 0.2}, {"reduction": "sum", "label_smoothing": 0.1}):
        e = F.cross_entropy(ember.from_numpy(x), ember.from_numpy(t), ember.from_numpy(w), **kw)
        r = torch.nn.functional.cross_entropy(
            torch.from_numpy(x), torch.from_numpy(t), torch.from_numpy(w), **kw
        )
        np.testing.assert_allclose(e.numpy(), r.numpy(), rtol=1e-6)
    y = _arr(3, 4, low=0, high=1)
    pw, ww = _arr(4, low=0, high=3), _arr(3, 4, low=0, high=2)
    e = F.binary_cross_entropy_with_logits(
        ember.from_numpy(_arr(3, 4)),
        ember.from_numpy(y),
        ember.from_numpy(ww),
        pos_weight=ember.from_numpy(pw),
    )
    assert e.shape == ()


def test_batch_norm_training_updates_running_stats() -> None:
    x = _arr(6, 3, 4)
    rm, rv = np.zeros(3), np.ones(3)
    erm, erv, trm, trv = (
        ember.from_numpy(rm.copy()),
        ember.from_numpy(rv.copy()),
        torch.from_numpy(rm.copy()),
        torch.from_numpy(rv.copy()),
    )
    e = F.batch_norm(ember.from_numpy(x), erm, erv, training=True, momentum=0.3)
    t = torch.nn.functional.batch_norm(torch.from_numpy(x), trm, trv, training=True, momentum=0.3)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(erm.numpy(), trm.numpy(), rtol=1e-6)
    np.testing.assert_allclose(erv.numpy(), trv.numpy(), rtol=1e-6)
    e = F.batch_norm(ember.from_numpy(x), erm, erv, training=False)
    t = torch.nn.functional.batch_norm(torch.from_numpy(x), trm, trv, training=False)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


def test_one_hot_and_dropout() -> None:
    idx = _idx(0, 3, 1)
    np.testing.assert_array_equal(
        F.one_hot(ember.from_numpy(idx)).numpy(),
        torch.nn.functional.one_hot(torch.from_numpy(idx)).numpy(),
    )
    x = ember.ones(1000)
    y = F.dropout(x, 0.25)
    kept = y.numpy() != 0
    assert 0.65 < kept.mean() < 0.85
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.75)


def test_errors() -> None:
    with pytest.raises(ValueError):
        F.cross_entropy(ember.ones(2, 3), ember.from_numpy(_idx(0, 1)), reduction="avg")
    with pytest.raises(ValueError):
        F.binary_cross_entropy_with_logits(ember.ones(2, 3), ember.ones(3))
    with pytest.raises(RuntimeError):
        F.conv2d(ember.ones(1, 3, 5, 5), ember.ones(2, 2, 3, 3))


@requires_torch
@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_pointwise_losses_match_torch(fn: str, reduction: str) -> None:
    """A weighted mean is sum(w * loss) / sum(w), as in PyTorch (not mean(w * loss))."""
    rng = np.random.default_rng(7)
    x, y, w = (rng.standard_normal((2, 3)) for _ in range(3))
    w = np.abs(w)
    ours = getattr(ember.nn.functional, fn)(
        ember.tensor(x), ember.tensor(y), reduction=reduction, weight=ember.tensor(w)
    )
    theirs = getattr(torch.nn.functional, fn)(
        torch.tensor(x), torch.tensor(y), reduction=reduction, weight=torch.tensor(w)
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="same size"):
        getattr(ember.nn.functional, fn)(
            ember.tensor(x), ember.tensor(y), weight=ember.tensor(w[0])
        )


def test_embedding_backward_with_an_empty_index() -> None:
    """Random programs found it: the weight's gradient is zeros (was a reshape error)."""
    w = ember.ones(4, 3, requires_grad=True)
    ember.nn.functional.embedding(ember.tensor([], dtype=ember.int64), w).sum().backward()
    assert w.grad.tolist() == [[0.0] * 3] * 4


@pytest.mark.parametrize("target", [[0], 0, [0, 1]], ids=["(1,)", "()", "(2,)"])
@pytest.mark.parametrize("reduction", ["sum", "none", "mean"])
def test_nll_loss_of_one_sample_matches_torch(target: Any, reduction: str) -> None:
    """A 1-D input is one sample: its target is () or (1,) (was refused with a message
    contradicting itself; found by the random programs)."""
    import torch

    x = [0.1, 0.2, 0.3, 0.4]
    t_args = (torch.tensor(x), torch.tensor(target))
    e_args = (ember.tensor(x), ember.tensor(target))
    try:
        want = torch.nn.functional.nll_loss(*t_args, reduction=reduction)
    except ValueError as exc:
        with pytest.raises(ValueError, match="must have size 1"):
            ember.nn.functional.nll_loss(*e_args, reduction=reduction)
        assert "must have size 1" in str(exc)
        return
    got = ember.nn.functional.nll_loss(*e_args, reduction=reduction)
    assert tuple(got.shape) == tuple(want.shape) and got.item() == pytest.approx(want.item())
