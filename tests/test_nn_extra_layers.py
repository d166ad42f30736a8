"""The layers and functions added for issue 18 (EmbeddingBag, LocalResponseNorm,
AlphaDropout, FeatureAlphaDropout, RMSNorm, the lazy layers, MaxUnpool, LPPool,
MultiMarginLoss, RReLU; gumbel_softmax and the functional forms), against PyTorch: outputs
and gradients from the same weights, and random ones by their statistics."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch
from tests.nn_compare import compare_call, compare_module, load_from_torch, to_pair

pytestmark = requires_torch
rng = np.random.default_rng(0)


def _randn(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize(("shape", "norm"), [((4, 6), [6]), ((2, 3, 4), [3, 4])])
def test_rms_norm_matches_torch(shape: tuple[int, ...], norm: list[int], affine: bool) -> None:
    e, t = (
        ember.nn.RMSNorm(norm, elementwise_affine=affine),
        torch.nn.RMSNorm(norm, elementwise_affine=affine),
    )  # noqa: E501
    if affine:
        with torch.no_grad():
            t.weight.copy_(torch.from_numpy(_randn(*norm)))
    compare_module(e, t, _randn(*shape))
    assert repr(e) == repr(t)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        ember.nn.functional.rms_norm(ember.ones(2, 5), [4])


def test_rms_norm_eps_matches_torch() -> None:
    x = _randn(3, 4)
    ex, tx = to_pair(x)
    compare_call(
        lambda a: ember.nn.functional.rms_norm(a, [4], eps=0.5),
        lambda a: torch.nn.functional.rms_norm(a, [4], eps=0.5), [ex], [tx],
    )  # fmt: skip


@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("shape", [(2, 6, 4), (2, 5, 3, 3), (1, 4, 2, 2, 3)])
def test_local_response_norm_matches_torch(size: int, shape: tuple[int, ...]) -> None:
    compare_module(
        ember.nn.LocalResponseNorm(size, 1e-2, 0.6, 2.0),
        torch.nn.LocalResponseNorm(size, 1e-2, 0.6, 2.0), _randn(*shape), atol=1e-5,
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_offsets_match_torch(mode: str, padding_idx: int | None) -> None:
    t = torch.nn.EmbeddingBag(8, 3, mode=mode, padding_idx=padding_idx)
    e = ember.nn.EmbeddingBag(8, 3, mode=mode, padding_idx=padding_idx)
    load_from_torch(e, t)
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9 % 8, 2], dtype=np.int64)
    offsets = np.array([0, 2, 2, 5], dtype=np.int64)  # bag 1 is empty
    compare_call(
        lambda: e(ember.from_numpy(idx), ember.from_numpy(offsets)),
        lambda: t(torch.from_numpy(idx), torch.from_numpy(offsets)),
        [], [], list(e.parameters()), list(t.parameters()),
    )  # fmt: skip
    assert repr(e) == repr(t)


def test_embedding_bag_2d_weights_and_last_offset_match_torch() -> None:
    t = torch.nn.EmbeddingBag(6, 4, mode="sum", include_last_offset=True)
    e = ember.nn.EmbeddingBag(6, 4, mode="sum", include_last_offset=True)
    load_from_torch(e, t)
    idx = np.array([0, 5, 1, 1, 3], dtype=np.int64)
    offsets = np.array([0, 3, 5], dtype=np.int64)
    w = _randn(5)
    ew, tw = to_pair(w)
    compare_call(
        lambda a: e(ember.from_numpy(idx), ember.from_numpy(offsets), per_sample_weights=a),
        lambda a: t(torch.from_numpy(idx), torch.from_numpy(offsets), per_sample_weights=a),
        [ew], [tw], list(e.parameters()), list(t.parameters()),
    )  # fmt: skip
    for mode in ("mean", "max"):
        t2, e2 = torch.nn.EmbeddingBag(6, 4, mode=mode), ember.nn.EmbeddingBag(6, 4, mode=mode)
        load_from_torch(e2, t2)
        x = np.array([[0, 1, 2], [5, 5, 4]], dtype=np.int64)
        compare_call(
            lambda: e2(ember.from_numpy(x)), lambda: t2(torch.from_numpy(x)),  # noqa: B023
            [], [], list(e2.parameters()), list(t2.parameters()),
        )  # fmt: skip
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        ember.nn.functional.embedding_bag(
            ember.tensor([[0, 1]]),
            ember.ones(3, 2),
            mode="mean",
            per_sample_weights=ember.ones(1, 2),
        )
    with pytest.raises(ValueError, match="offsets has to be None"):
        ember.nn.functional.embedding_bag(
            ember.tensor([[0, 1]]), ember.ones(3, 2), ember.tensor([0])
        )


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_inverts_max_pool_as_torch(n: int) -> None:
    shape = (2, 3) + (6,) * n
    x = _randn(*shape)
    pool_t = getattr(torch.nn, f"MaxPool{n}d")(2, stride=2, return_indices=True)
    out_t, idx_t = pool_t(torch.from_numpy(x))
    e_in, t_in = to_pair(out_t.numpy())
    e_unpool, t_unpool = (
        getattr(ember.nn, f"MaxUnpool{n}d")(2),
        getattr(torch.nn, f"MaxUnpool{n}d")(2),
    )
    e_idx = ember.from_numpy(idx_t.numpy().copy())
    compare_call(lambda a: e_unpool(a, e_idx), lambda a: t_unpool(a, idx_t), [e_in], [t_in])
    size = [7] * n  # an explicit output size one larger
    compare_call(
        lambda a: e_unpool(a, e_idx, output_size=size),
        lambda a: t_unpool(a, idx_t, output_size=size), [e_in], [t_in],
    )  # fmt: skip
    assert repr(e_unpool) == repr(t_unpool)


@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0])
@pytest.mark.parametrize(
    ("n", "kernel", "stride"), [(1, 3, None), (1, 2, 1), (2, 2, None), (2, (2, 3), 1), (3, 2, None)]
)  # noqa: E501
def test_lp_pool_matches_torch(norm_type: float, n: int, kernel: Any, stride: Any) -> None:
    x = np.abs(_randn(2, 3, *([6] * n))) + 0.1
    e = getattr(ember.nn, f"LPPool{n}d")(norm_type, kernel, stride)
    t = getattr(torch.nn, f"LPPool{n}d")(norm_type, kernel, stride)
    compare_module(e, t, x, atol=1e-5, rtol=1e-4)
    assert repr(e) == repr(t)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss_matches_torch(p: int, reduction: str, weighted: bool) -> None:
    x = _randn(5, 4)
    y = np.array([0, 3, 1, 1, 2])
    w = np.abs(_randn(4)) if weighted else None
    e = ember.nn.MultiMarginLoss(
        p, 0.7, None if w is None else ember.from_numpy(w), reduction=reduction
    )  # noqa: E501
    t = torch.nn.MultiMarginLoss(
        p, 0.7, None if w is None else torch.from_numpy(w), reduction=reduction
    )  # noqa: E501
    ex, tx = to_pair(x)
    compare_call(
        lambda a: e(a, ember.from_numpy(y)), lambda a: t(a, torch.from_numpy(y)), [ex], [tx]
    )
    one_e, one_t = to_pair(x[0])
    compare_call(lambda a: e(a, ember.tensor(2)), lambda a: t(a, torch.tensor(2)), [one_e], [one_t])


def test_rrelu_eval_and_training_match_torch() -> None:
    x = _randn(200)
    ex, tx = to_pair(x)
    compare_call(
        lambda a: ember.nn.RReLU(0.1, 0.3).eval()(a),
        lambda a: torch.nn.RReLU(0.1, 0.3).eval()(a),
        [ex],
        [tx],
    )  # noqa: E501
    m = ember.nn.RReLU(0.1, 0.3)  # training: a slope per negative element, in [0.1, 0.3]
    out = m(ex)
    neg = x < 0
    slopes = out.detach().numpy()[neg] / x[neg]
    assert ((slopes >= 0.1 - 1e-6) & (slopes <= 0.3 + 1e-6)).all() and slopes.std() > 0.01
    np.testing.assert_array_equal(out.detach().numpy()[~neg], x[~neg])
    out.sum().backward()  # the gradient is the slope used
    np.testing.assert_allclose(ex.grad.numpy()[neg], slopes, rtol=1e-5)
    assert repr(m) == repr(torch.nn.RReLU(0.1, 0.3))


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_mean_and_variance(feature: bool) -> None:
    ember.manual_seed(0)
    x = ember.randn(400, 50, 4)
    cls = ember.nn.FeatureAlphaDropout if feature else ember.nn.AlphaDropout
    out = cls(0.3)(x).numpy()
    assert abs(out.mean()) < 0.05 and abs(out.std() - 1) < 0.05
    # dropped entries all take one value (a' = -alpha*a + b of PyTorch's formula)
    alpha, p = 1.7580993408473766, 0.3
    a = 1 / np.sqrt((alpha**2 * p + 1) * (1 - p))
    dropped = np.isclose(out, -alpha * a + alpha * a * p)
    assert abs(dropped.mean() - 0.3) < 0.03
    if feature:  # whole channels together
        assert (dropped.all(-1) | ~dropped.any(-1)).all()
    assert cls(0.3).eval()(x) is x
    assert repr(cls(0.3)) == repr(getattr(torch.nn, cls.__name__)(0.3))


def test_alpha_dropout_gradient_is_the_noise_scale() -> None:
    x = ember.randn(50, requires_grad=True)
    out = ember.nn.functional.alpha_dropout(x, 0.5, training=True)
    out.sum().backward()
    a = 1 / np.sqrt((1.7580993408473766**2 * 0.5 + 1) * 0.5)
    g = x.grad.numpy()
    assert (np.isclose(g, 0.0) | np.isclose(g, a)).all() and np.isclose(g, a).any()


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_samples_and_gradients(hard: bool) -> None:
    ember.manual_seed(0)
    logits = ember.tensor([[1.0, 0.0, -1.0]]).expand(20000, 3).clone().requires_grad_()
    y = ember.nn.functional.gumbel_softmax(logits, tau=0.5, hard=hard)
    np.testing.assert_allclose(y.sum(-1).detach().numpy(), 1.0, rtol=1e-5)
    if hard:
        assert set(np.unique(y.detach().numpy())) <= {0.0, 1.0}
        freq = y.detach().numpy().mean(0)  # argmax of logits + Gumbel noise ~ softmax(logits)
        np.testing.assert_allclose(
            freq, torch.tensor([1.0, 0.0, -1.0]).softmax(0).numpy(), atol=0.015
        )  # noqa: E501
    (y * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert logits.grad is not None and np.isfinite(logits.grad.numpy()).all()
    assert abs(float(logits.grad.sum())) < 1e-2  # softmax's gradient sums to zero per row


def test_lazy_linear_matches_linear_after_first_call() -> None:
    m = ember.nn.LazyLinear(3)
    assert isinstance(m.weight, ember.nn.UninitializedParameter) and m.has_uninitialized_params()
    t = torch.nn.LazyLinear(3)
    assert repr(m) == repr(t)
    x = _randn(2, 5)
    m(ember.from_numpy(x))
    t(torch.from_numpy(x))
    assert type(m) is ember.nn.Linear and repr(m) == repr(t)
    assert type(m.weight) is ember.nn.Parameter and m.weight.shape == (3, 5)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    compare_module(m, t, x)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)  # ordinary parameters now
    m(ember.ones(1, 5)).sum().backward()
    opt.step()


@pytest.mark.parametrize("name", ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
                                  "LazyConvTranspose2d", "LazyConvTranspose3d"])  # fmt: skip
def test_lazy_convolutions_match_torch(name: str) -> None:
    n = int(name[-2])
    e, t = (
        getattr(ember.nn, name)(4, 3, stride=2, groups=2),
        getattr(torch.nn, name)(4, 3, stride=2, groups=2),
    )  # noqa: E501
    x = _randn(2, 6, *([5] * n))
    e(ember.from_numpy(x))
    t(torch.from_numpy(x))
    assert type(e).__name__ == type(t).__name__ == name.removeprefix("Lazy")
    assert repr(e) == repr(t)
    compare_module(e, t, x, atol=1e-5)


def test_lazy_module_loads_a_state_dict() -> None:
    src = ember.nn.Linear(5, 3)
    m = ember.nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())
    assert type(m) is ember.nn.Linear and m.in_features == 5
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())
