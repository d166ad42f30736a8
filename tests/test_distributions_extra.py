"""The distribution families added for issue 18 (Independent, Beta, Gamma, Dirichlet,
Exponential, Laplace, LogNormal, Poisson, Binomial, Multinomial, OneHotCategorical,
StudentT, MixtureSameFamily, TransformedDistribution and transforms) and their KL pairs,
against PyTorch: log_prob (with parameter gradients), entropy, mean, variance and KL from the
same parameters; samples by their moments (ember's random stream is its own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch
from tests.test_distributions_more import _pair

pytestmark = requires_torch


def _close(e: Any, t: Any, rtol: float = 1e-6, atol: float = 1e-8, msg: str = "") -> None:
    np.testing.assert_allclose(
        e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, err_msg=msg
    )


# name -> (params, build(lib, *params) -> distribution, values in the support)
FAMILIES: dict[str, tuple[list[Any], Callable[..., Any], Any]] = {
    "Gamma": ([[2.0, 0.5, 7.0], [1.5, 3.0, 0.2]], lambda D, c, r: D.Gamma(c, r),
              [0.3, 1.2, 20.0]),
    "Exponential": ([[2.0, 0.5]], lambda D, r: D.Exponential(r), [0.3, 4.0]),
    "Laplace": ([[0.5, -1.0], [1.0, 2.5]], lambda D, m, s: D.Laplace(m, s), [0.0, 3.0]),
    "Beta": ([[2.0, 0.5, 1.0], [1.5, 3.0, 1.0]], lambda D, a, b: D.Beta(a, b),
             [0.3, 0.05, 0.9]),
    "Dirichlet": ([[[1.0, 2.0, 0.5], [3.0, 3.0, 3.0]]], lambda D, c: D.Dirichlet(c),
                  [[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]),
    "LogNormal": ([[0.0, 1.0], [0.5, 0.25]], lambda D, m, s: D.LogNormal(m, s), [0.5, 3.0]),
    "StudentT": ([[3.0, 0.7, 12.0], [0.5, -1.0, 0.0], [1.0, 2.0, 0.5]],
                 lambda D, df, m, s: D.StudentT(df, m, s), [0.3, -4.0, 1.0]),
    "Poisson": ([[2.0, 0.5, 9.0]], lambda D, r: D.Poisson(r), [1.0, 0.0, 12.0]),
    "Binomial": ([[0.3, 0.9, 0.05]], lambda D, p: D.Binomial(7, probs=p), [2.0, 7.0, 0.0]),
    "BinomialLogits": ([[0.3, -2.0, 4.0]], lambda D, lg: D.Binomial(5, logits=lg),
                       [1.0, 2.0, 5.0]),
    "Multinomial": ([[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]],
                    lambda D, p: D.Multinomial(6, probs=p), [[1.0, 2.0, 3.0], [0.0, 0.0, 6.0]]),
    "OneHotCategorical": ([[[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]],
                          lambda D, p: D.OneHotCategorical(probs=p),
                          [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    "IndependentNormal": ([[[0.0, 1.0], [2.0, -1.0]], [[1.0, 2.0], [0.5, 0.3]]],
                          lambda D, m, s: D.Independent(D.Normal(m, s), 1),
                          [[0.1, 0.2], [1.0, 1.0]]),
    "MixtureSameFamily": ([[0.2, 0.8], [-1.0, 2.0], [0.5, 1.5]],
                          lambda D, w, m, s: D.MixtureSameFamily(
                              D.Categorical(probs=w), D.Normal(m, s)), [0.3, -2.0]),
    "Affine(Normal)": ([[0.0, 1.0], [1.0, 2.0]],
                       lambda D, m, s: D.TransformedDistribution(
                           D.Normal(m, s), [D.transforms.AffineTransform(1.0, -3.0)]),
                       [0.5, -2.0]),
    "Sigmoid(Normal)": ([[0.0, 1.0], [1.0, 2.0]],
                        lambda D, m, s: D.TransformedDistribution(
                            D.Normal(m, s), [D.transforms.SigmoidTransform()]), [0.3, 0.9]),
    "Tanh(Exp(Normal))": ([[0.0, -1.0], [0.5, 0.4]],
                          lambda D, m, s: D.TransformedDistribution(
                              D.Normal(m, s), [D.transforms.ExpTransform(),
                                               D.transforms.TanhTransform()]), [0.3, 0.9]),
}  # fmt: skip

NO_ENTROPY = {
    "Poisson",
    "MixtureSameFamily",
    "Affine(Normal)",
    "Sigmoid(Normal)",
    "Tanh(Exp(Normal))",
}
NO_MOMENTS = {"Affine(Normal)", "Sigmoid(Normal)", "Tanh(Exp(Normal))"}


def _build(name: str) -> tuple[Any, Any, list[Any], list[Any]]:
    params, build, _ = FAMILIES[name]
    pairs = [_pair(p) for p in params]
    e = build(ember.distributions, *(p[0] for p in pairs))
    t = build(torch.distributions, *(p[1] for p in pairs))
    return e, t, [p[0] for p in pairs], [p[1] for p in pairs]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_log_prob_and_its_gradients_match_torch(name: str) -> None:
    e, t, ep, tp = _build(name)
    assert tuple(e.batch_shape) == tuple(t.batch_shape)
    assert tuple(e.event_shape) == tuple(t.event_shape)
    values = np.asarray(FAMILIES[name][2], dtype=np.float64)
    le, lt = e.log_prob(ember.tensor(values)), t.log_prob(torch.tensor(values))
    _close(le, lt, msg="log_prob")
    ge = ember.autograd.grad(le.sum(), ep, allow_unused=True)
    gt = torch.autograd.grad(lt.sum(), tp, allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt, strict=True)):
        if b is None:
            assert a is None or not a.numpy().any()
            continue
        _close(a, b, rtol=1e-5, atol=1e-7, msg=f"grad of parameter {i}")


@pytest.mark.parametrize("name", sorted(set(FAMILIES) - NO_ENTROPY))
def test_entropy_matches_torch(name: str) -> None:
    e, t, ep, tp = _build(name)
    _close(e.entropy(), t.entropy(), rtol=1e-6, msg="entropy")
    ge = ember.autograd.grad(e.entropy().sum(), ep, allow_unused=True)
    gt = torch.autograd.grad(t.entropy().sum(), tp, allow_unused=True)
    for a, b in zip(ge, gt, strict=True):
        if b is not None:
            _close(a, b, rtol=1e-5, atol=1e-7, msg="entropy gradient")


@pytest.mark.parametrize("name", sorted(set(FAMILIES) - NO_MOMENTS))
def test_mean_and_variance_match_torch(name: str) -> None:
    e, t, _, _ = _build(name)
    _close(e.mean, t.mean, msg="mean")
    _close(e.variance, t.variance, msg="variance")


@pytest.mark.parametrize("name", sorted(set(FAMILIES) - NO_MOMENTS))
def test_samples_have_the_distributions_moments(name: str) -> None:
    ember.manual_seed(0)
    e, t, _, _ = _build(name)
    n = 40000
    s = e.sample((n,))
    assert tuple(s.shape) == (n, *t.batch_shape, *t.event_shape)
    assert not s.requires_grad
    x = s.numpy()
    mean, var = t.mean.detach().numpy(), t.variance.detach().numpy()
    finite = np.isfinite(var)
    sd = np.sqrt(np.where(finite, var, 1.0))
    if name == "StudentT":  # heavy tails: the median, and the variance where df is large
        np.testing.assert_allclose(np.median(x, 0), t.loc.detach().numpy(), atol=0.05)
        np.testing.assert_allclose(x.var(0)[2], var[2], rtol=0.1)
        return
    np.testing.assert_allclose(x.mean(0), mean, atol=(5 * sd / np.sqrt(n)).max() + 1e-9)
    np.testing.assert_allclose(x.var(0)[finite], var[finite], rtol=0.06, atol=1e-4)
    if t.support is not None and not isinstance(e, ember.distributions.MixtureSameFamily):
        assert bool(t.support.check(torch.from_numpy(x)).all())


@pytest.mark.parametrize("name", ["Gamma", "Exponential", "Laplace", "Beta", "Dirichlet",
                                  "LogNormal", "IndependentNormal"])  # fmt: skip
def test_rsample_gradients_are_the_gradients_of_the_mean(name: str) -> None:
    """E[d sample / d theta] = d E[sample] / d theta: the reparametrised (or implicit)
    gradients are unbiased."""
    ember.manual_seed(1)
    e, t, ep, tp = _build(name)
    assert e.has_rsample and t.has_rsample
    n = 40000
    ge = ember.autograd.grad(e.rsample((n,)).sum() / n, ep)
    gt = torch.autograd.grad(t.mean.sum(), tp, allow_unused=True)
    for a, b in zip(ge, gt, strict=True):
        want = np.zeros(tuple(a.shape)) if b is None else b.numpy()
        np.testing.assert_allclose(a.numpy(), want, rtol=0.05, atol=0.02)


def test_studentt_rsample_scale_gradient() -> None:
    ember.manual_seed(2)
    df, loc, scale = (
        ember.tensor(5.0),
        ember.tensor(1.0, requires_grad=True),
        ember.tensor(2.0, requires_grad=True),
    )  # noqa: E501
    s = ember.distributions.StudentT(df, loc, scale).rsample((40000,))
    (g_loc, g_scale) = ember.autograd.grad(s.abs().mean(), [loc, scale])
    assert np.isfinite(g_loc.item()) and g_scale.item() > 0


def _kl_pairs() -> list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]]:
    t = torch.tensor
    return [
        (
            "Beta-Beta",
            lambda D: D.Beta(t([2.0, 0.5]), t([1.5, 3.0])),
            lambda D: D.Beta(t([1.0, 2.0]), t([2.0, 0.7])),
        ),  # noqa: E501
        (
            "Binomial-Binomial",
            lambda D: D.Binomial(5, probs=t([0.3, 0.6])),
            lambda D: D.Binomial(5, probs=t([0.5, 0.2])),
        ),  # noqa: E501
        (
            "Dirichlet-Dirichlet",
            lambda D: D.Dirichlet(t([[1.0, 2.0, 0.5]])),
            lambda D: D.Dirichlet(t([[2.0, 2.0, 2.0]])),
        ),  # noqa: E501
        (
            "Exponential-Exponential",
            lambda D: D.Exponential(t([2.0, 0.5])),
            lambda D: D.Exponential(t([1.0, 3.0])),
        ),  # noqa: E501
        (
            "Gamma-Gamma",
            lambda D: D.Gamma(t([2.0, 0.5]), t([1.5, 3.0])),
            lambda D: D.Gamma(t([1.0, 2.0]), t([2.0, 0.7])),
        ),  # noqa: E501
        (
            "Laplace-Laplace",
            lambda D: D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])),
            lambda D: D.Laplace(t([0.5, -1.0]), t([2.0, 0.5])),
        ),  # noqa: E501
        (
            "OneHot-OneHot",
            lambda D: D.OneHotCategorical(probs=t([0.2, 0.8])),
            lambda D: D.OneHotCategorical(probs=t([0.5, 0.5])),
        ),  # noqa: E501
        ("Poisson-Poisson", lambda D: D.Poisson(t([2.0, 0.5])), lambda D: D.Poisson(t([1.0, 3.0]))),  # noqa: E501
        (
            "LogNormal-LogNormal",
            lambda D: D.LogNormal(t([0.0, 1.0]), t([1.0, 0.5])),
            lambda D: D.LogNormal(t([0.5, 0.0]), t([2.0, 1.0])),
        ),  # noqa: E501
        (
            "Independent-Independent",
            lambda D: D.Independent(D.Normal(t([[0.0, 1.0]]), t([[1.0, 2.0]])), 1),
            lambda D: D.Independent(D.Normal(t([[1.0, 1.0]]), t([[2.0, 2.0]])), 1),
        ),  # noqa: E501
        (
            "Bernoulli-Poisson",
            lambda D: D.Bernoulli(probs=t([0.3, 0.9])),
            lambda D: D.Poisson(t([1.0, 3.0])),
        ),  # noqa: E501
        (
            "Beta-Exponential",
            lambda D: D.Beta(t([2.0, 0.5]), t([1.5, 3.0])),
            lambda D: D.Exponential(t([1.0, 3.0])),
        ),  # noqa: E501
        (
            "Beta-Gamma",
            lambda D: D.Beta(t([2.0, 0.5]), t([1.5, 3.0])),
            lambda D: D.Gamma(t([1.0, 2.0]), t([2.0, 0.7])),
        ),  # noqa: E501
        (
            "Beta-Normal",
            lambda D: D.Beta(t([2.0, 0.5]), t([1.5, 3.0])),
            lambda D: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
        ),  # noqa: E501
        (
            "Beta-Uniform",
            lambda D: D.Beta(t([2.0, 0.5]), t([1.5, 3.0])),
            lambda D: D.Uniform(t([0.0, 0.1]), t([1.0, 2.0])),
        ),  # noqa: E501
        (
            "Exponential-Gamma",
            lambda D: D.Exponential(t([2.0, 0.5])),
            lambda D: D.Gamma(t([1.0, 2.0]), t([2.0, 0.7])),
        ),  # noqa: E501
        (
            "Exponential-Normal",
            lambda D: D.Exponential(t([2.0, 0.5])),
            lambda D: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
        ),  # noqa: E501
        (
            "Gamma-Exponential",
            lambda D: D.Gamma(t([2.0, 0.5]), t([1.5, 3.0])),
            lambda D: D.Exponential(t([1.0, 3.0])),
        ),  # noqa: E501
        (
            "Gamma-Normal",
            lambda D: D.Gamma(t([2.0, 0.5]), t([1.5, 3.0])),
            lambda D: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
        ),  # noqa: E501
        (
            "Laplace-Normal",
            lambda D: D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])),
            lambda D: D.Normal(t([0.5, 0.0]), t([1.0, 2.0])),
        ),  # noqa: E501
        (
            "Normal-Laplace",
            lambda D: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
            lambda D: D.Laplace(t([0.5, 0.0]), t([1.0, 2.0])),
        ),  # noqa: E501
        (
            "Uniform-Beta",
            lambda D: D.Uniform(t([0.1, 0.0]), t([0.5, 1.5])),
            lambda D: D.Beta(t([2.0, 0.5]), t([1.5, 3.0])),
        ),  # noqa: E501
        (
            "Uniform-Exponential",
            lambda D: D.Uniform(t([0.1, -1.0]), t([0.5, 1.5])),
            lambda D: D.Exponential(t([1.0, 3.0])),
        ),  # noqa: E501
        (
            "Uniform-Gamma",
            lambda D: D.Uniform(t([0.1, -1.0]), t([0.5, 1.5])),
            lambda D: D.Gamma(t([1.0, 2.0]), t([2.0, 0.7])),
        ),  # noqa: E501
        (
            "Gamma-Uniform (inf)",
            lambda D: D.Gamma(t([2.0, 0.5]), t([1.5, 3.0])),
            lambda D: D.Uniform(t([0.0, 0.1]), t([1.0, 2.0])),
        ),  # noqa: E501
        (
            "Laplace-Beta (inf)",
            lambda D: D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])),
            lambda D: D.Beta(t([2.0, 0.5]), t([1.5, 3.0])),
        ),  # noqa: E501
        (
            "Normal-Gamma (inf)",
            lambda D: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
            lambda D: D.Gamma(t([1.0, 2.0]), t([2.0, 0.7])),
        ),  # noqa: E501
        (
            "Poisson-Binomial (inf)",
            lambda D: D.Poisson(t([2.0, 0.5])),
            lambda D: D.Binomial(5, probs=t([0.5, 0.2])),
        ),  # noqa: E501
    ]


def _to_ember(build: Callable[[Any], Any]) -> Any:
    """Build the distribution with ember, turning the torch tensors the builder makes into
    ember ones (the builders are written once, with ``torch.tensor``)."""

    class Shim:
        def __getattr__(self, name: str) -> Any:
            cls = getattr(ember.distributions, name)

            def make(*args: Any, **kwargs: Any) -> Any:
                conv = [ember.tensor(a.numpy()) if isinstance(a, torch.Tensor) else a for a in args]
                kw = {k: ember.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v
                      for k, v in kwargs.items()}  # fmt: skip
                return cls(*conv, **kw)

            return make

    return build(Shim())


@pytest.mark.parametrize(("name", "p", "q"), _kl_pairs(), ids=[x[0] for x in _kl_pairs()])
def test_kl_divergence_matches_torch(name: str, p: Any, q: Any) -> None:
    ref = torch.distributions.kl_divergence(p(torch.distributions), q(torch.distributions))
    mine = ember.distributions.kl_divergence(_to_ember(p), _to_ember(q))
    np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_transforms_invert_and_their_jacobians_match_torch() -> None:
    x = np.array([-1.5, 0.2, 2.0])
    for make in (lambda T: T.ExpTransform(), lambda T: T.SigmoidTransform(),
                 lambda T: T.TanhTransform(), lambda T: T.AffineTransform(0.5, -2.0),
                 lambda T: T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)]),
                 lambda T: T.ExpTransform().inv.inv):  # fmt: skip
        te, tt = make(ember.distributions.transforms), make(torch.distributions.transforms)
        ye, yt = te(ember.tensor(x)), tt(torch.tensor(x))
        _close(ye, yt)
        _close(te.inv(ye), tt.inv(yt), rtol=1e-6, atol=1e-8)
        _close(
            te.log_abs_det_jacobian(ember.tensor(x), ye),
            tt.log_abs_det_jacobian(torch.tensor(x), yt),
        )  # noqa: E501
    pe = ember.distributions.transforms.PowerTransform(2.5)
    pt = torch.distributions.transforms.PowerTransform(torch.tensor(2.5))
    xp = np.array([0.5, 2.0])
    _close(pe.log_abs_det_jacobian(ember.tensor(xp), pe(ember.tensor(xp))),
           pt.log_abs_det_jacobian(torch.tensor(xp), pt(torch.tensor(xp))))  # fmt: skip
    _close(ember.distributions.transforms.SoftmaxTransform()(ember.tensor(x)),
           torch.distributions.transforms.SoftmaxTransform()(torch.tensor(x)))  # fmt: skip


def test_poisson_entropy_is_not_implemented_as_in_torch() -> None:
    for D in (ember.distributions, torch.distributions):
        with pytest.raises(NotImplementedError):
            D.Poisson(2.0).entropy()


def test_argument_errors_match_torch() -> None:
    for D in (ember.distributions, torch.distributions):
        with pytest.raises(ValueError, match="concentration"):
            D.Gamma(-1.0, 1.0, validate_args=True)
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            D.Binomial(3)
        with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
            D.Independent(D.Normal(0.0, 1.0), 1)
