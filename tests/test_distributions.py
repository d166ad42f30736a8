"""``ember.distributions`` against ``torch.distributions``: densities, entropies, moments,
KL divergences and their gradients from the same parameters; reparametrised samples'
gradients from the same noise; validation errors; shapes. Samples come from ember's own
generator, so their distributions are tested statistically, with tolerances computed from
the sample size, and their reproducibility under ``manual_seed``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

pytestmark = requires_torch

RNG = np.random.default_rng(11)
LOC = RNG.standard_normal((2, 3))
SCALE = RNG.uniform(0.5, 2.0, (2, 3))
PROBS = RNG.uniform(0.05, 0.95, (2, 3))
LOGITS = RNG.standard_normal((2, 4))
CAT_PROBS = RNG.uniform(0.1, 1.0, (2, 4))
LOW = RNG.uniform(-2.0, 0.0, (3,))
HIGH = LOW + RNG.uniform(0.5, 3.0, (3,))


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _close(e: Any, t: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor)
        assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1], (e.dtype, t.dtype)
        np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)
    else:
        assert e == t


# each: (a distribution of the library X from float64 parameters that require grad, the
# parameters, values in its support)
def normal(X: Any, grad: bool = True) -> tuple[Any, list[Any]]:
    loc, scale = X.tensor(LOC, requires_grad=grad), X.tensor(SCALE, requires_grad=grad)
    return X.distributions.Normal(loc, scale), [loc, scale]


def normal_scalar(X: Any, grad: bool = True) -> tuple[Any, list[Any]]:
    return X.distributions.Normal(0.5, 2.0), []


def bernoulli_probs(X: Any, grad: bool = True) -> tuple[Any, list[Any]]:
    p = X.tensor(PROBS, requires_grad=grad)
    return X.distributions.Bernoulli(probs=p), [p]


def bernoulli_logits(X: Any, grad: bool = True) -> tuple[Any, list[Any]]:
    lg = X.tensor(LOC, requires_grad=grad)
    return X.distributions.Bernoulli(logits=lg), [lg]


def categorical_probs(X: Any, grad: bool = True) -> tuple[Any, list[Any]]:
    p = X.tensor(CAT_PROBS, requires_grad=grad)
    return X.distributions.Categorical(probs=p), [p]


def categorical_logits(X: Any, grad: bool = True) -> tuple[Any, list[Any]]:
    lg = X.tensor(LOGITS, requires_grad=grad)
    return X.distributions.Categorical(logits=lg), [lg]


def uniform(X: Any, grad: bool = True) -> tuple[Any, list[Any]]:
    lo, hi = X.tensor(LOW, requires_grad=grad), X.tensor(HIGH, requires_grad=grad)
    return X.distributions.Uniform(lo, hi), [lo, hi]


DISTS: dict[str, tuple[Callable[..., Any], np.ndarray]] = {
    # name: (builder, values to score: sample_shape (4,) + batch_shape)
    "Normal": (normal, RNG.standard_normal((4, 2, 3))),
    "Normal of floats": (normal_scalar, RNG.standard_normal((4,))),
    "Bernoulli(probs)": (bernoulli_probs, RNG.integers(0, 2, (4, 2, 3)).astype(np.float64)),
    "Bernoulli(logits)": (bernoulli_logits, RNG.integers(0, 2, (4, 2, 3)).astype(np.float64)),
    "Categorical(probs)": (categorical_probs, RNG.integers(0, 4, (4, 2))),
    "Categorical(logits)": (categorical_logits, RNG.integers(0, 4, (4, 2))),
    "Uniform": (uniform, LOW + (HIGH - LOW) * RNG.uniform(0, 1, (4, 3))),
}


def _value(X: Any, arr: np.ndarray) -> Any:
    return X.tensor(arr)


@pytest.mark.parametrize("name", DISTS, ids=list(DISTS))
def test_shapes_and_moments_match_pytorch(name: str) -> None:
    build, _ = DISTS[name]
    (e, _), (t, _) = build(ember), build(torch)
    assert tuple(e.batch_shape) == tuple(t.batch_shape)
    assert tuple(e.event_shape) == tuple(t.event_shape)
    assert e.has_rsample == t.has_rsample
    assert e.has_enumerate_support == t.has_enumerate_support
    assert repr(e).replace("ember", "torch") == repr(t)
    for prop in ("mean", "variance", "stddev", "mode"):
        _close(getattr(e, prop), getattr(t, prop))
    _close(e.entropy(), t.entropy())
    _close(e.perplexity(), t.perplexity())
    assert tuple(e.sample((5,)).shape) == tuple(t.sample((5,)).shape)
    assert tuple(e.sample().shape) == tuple(t.sample().shape)
    assert str(e.sample().dtype).split(".")[1] == str(t.sample().dtype).split(".")[1]


@pytest.mark.parametrize("name", DISTS, ids=list(DISTS))
def test_log_prob_and_gradients_match_pytorch(name: str) -> None:
    build, values = DISTS[name]
    grads = []
    for X in (ember, torch):
        d, params = build(X)
        lp = d.log_prob(_value(X, values))
        w = X.tensor(np.linspace(0.5, 1.5, lp.numel()).reshape(tuple(lp.shape)))
        loss = (lp * w).sum() + d.entropy().sum()
        if params:
            grads.append((lp, *X.autograd.grad(loss, params)))
        else:
            grads.append((lp,))
    for e, t in zip(*grads, strict=True):
        _close(e, t)


@pytest.mark.parametrize("name", ["Normal", "Uniform"])
def test_cdf_matches_pytorch(name: str) -> None:
    build, values = DISTS[name]
    got = []
    for X in (ember, torch):
        d, params = build(X)
        c = d.cdf(_value(X, values))
        got.append((c, *X.autograd.grad(c.sum(), params)))
    for e, t in zip(*got, strict=True):
        _close(e, t)


def test_uniform_icdf_matches_pytorch() -> None:
    q = RNG.uniform(0, 1, (5, 3))
    _close(uniform(ember)[0].icdf(ember.tensor(q)), uniform(torch)[0].icdf(torch.tensor(q)))


@pytest.mark.parametrize("name", ["Bernoulli(probs)", "Categorical(logits)"])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support_matches_pytorch(name: str, expand: bool) -> None:
    build, _ = DISTS[name]
    _close(build(ember)[0].enumerate_support(expand), build(torch)[0].enumerate_support(expand))


def test_probs_logits_conversions_match_pytorch() -> None:
    for X_build in (bernoulli_probs, bernoulli_logits, categorical_probs, categorical_logits):
        got = []
        for X in (ember, torch):
            d, params = X_build(X)
            got.append((d.probs, d.logits, *X.autograd.grad((d.probs * d.logits).sum(), params)))
        for e, t in zip(*got, strict=True):
            _close(e, t)
    edge = [0.0, 1.0, 0.5]  # clamped to [eps, 1 - eps] before the log
    _close(
        ember.distributions.Bernoulli(probs=ember.tensor(edge)).logits,
        torch.distributions.Bernoulli(probs=torch.tensor(edge)).logits,
    )


# --------------------------------------------------------------------------- rsample


@pytest.mark.parametrize("name", ["Normal", "Uniform"])
def test_rsample_gradients_match_pytorch_given_the_same_noise(name: str) -> None:
    """ember draws its own noise; PyTorch's sample is rebuilt from that noise, and the
    gradients of the same loss must agree."""
    build, _ = DISTS[name]
    ember.manual_seed(0)
    d, params = build(ember)
    s = d.rsample((5,))
    w = np.linspace(-1, 1, s.numel()).reshape(tuple(s.shape))
    (ember.sin(s) * ember.tensor(w)).sum().backward()
    t, tparams = build(torch)
    if name == "Normal":
        eps = (_np(s) - LOC) / SCALE
        ts = t.loc + torch.tensor(eps) * t.scale
    else:
        u = (_np(s) - LOW) / (HIGH - LOW)
        assert (u >= 0).all() and (u < 1).all()
        ts = t.low + torch.tensor(u) * (t.high - t.low)
    (torch.sin(ts) * torch.tensor(w)).sum().backward()
    for p, tp in zip(params, tparams, strict=True):
        _close(p.grad, tp.grad)


def test_sample_has_no_graph_and_rsample_has_one() -> None:
    d, _ = normal(ember)
    assert not d.sample((3,)).requires_grad
    assert d.rsample((3,)).requires_grad
    b, _ = bernoulli_probs(ember)
    assert not b.sample().requires_grad


# --------------------------------------------------------------------------- KL

KLS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "Normal || Normal": (
        normal,
        lambda X: X.distributions.Normal(X.tensor(SCALE), X.tensor(LOC**2 + 0.5)),
    ),
    "Normal || standard normal (VAE)": (
        normal,
        lambda X: X.distributions.Normal(X.zeros(2, 3, dtype=X.float64), 1.0),
    ),
    "Bernoulli || Bernoulli": (
        bernoulli_probs,
        lambda X: X.distributions.Bernoulli(logits=X.tensor(LOC)),
    ),
    "Categorical || Categorical": (
        categorical_logits,
        lambda X: X.distributions.Categorical(probs=X.tensor(CAT_PROBS)),
    ),
    "Uniform || Uniform": (
        uniform,
        lambda X: X.distributions.Uniform(X.tensor(LOW - 1), X.tensor(HIGH + 0.5)),
    ),
    "Uniform || Normal": (
        uniform,
        lambda X: X.distributions.Normal(X.tensor(HIGH), X.tensor(HIGH - LOW)),
    ),
}


@pytest.mark.parametrize("name", KLS, ids=list(KLS))
def test_kl_divergence_and_gradients_match_pytorch(name: str) -> None:
    build_p, build_q = KLS[name]
    got = []
    for X in (ember, torch):
        p, params = build_p(X)
        kl = X.distributions.kl_divergence(p, build_q(X))
        got.append((kl, *X.autograd.grad(kl.sum(), params)))
    for e, t in zip(*got, strict=True):
        _close(e, t)


def test_kl_with_zero_probabilities_matches_pytorch() -> None:
    cases = [
        ("Bernoulli", [0.2, 0.0, 1.0, 0.5, 0.0], [0.4, 0.5, 0.5, 0.0, 0.0]),
        ("Categorical", [[0.2, 0.8], [0.0, 1.0], [0.5, 0.5]], [[0.5, 0.5], [0.3, 0.7], [0.0, 1.0]]),
    ]
    for cls, p, q in cases:
        e = ember.distributions.kl_divergence(
            getattr(ember.distributions, cls)(ember.tensor(p)),
            getattr(ember.distributions, cls)(ember.tensor(q)),
        )
        t = torch.distributions.kl_divergence(
            getattr(torch.distributions, cls)(torch.tensor(p)),
            getattr(torch.distributions, cls)(torch.tensor(q)),
        )
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-6)


def test_kl_lookup_errors_and_registration() -> None:
    D = ember.distributions
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(ember.tensor([0.5, 0.5])))
    # two exponential families meet in the Bregman pair, which refuses different families
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))

    class Wide(D.Normal):
        pass

    # a subclass uses its base class's formula until it registers its own
    np.testing.assert_allclose(
        _np(D.kl_divergence(Wide(0.0, 2.0), D.Normal(0.0, 1.0))),
        _np(D.kl_divergence(D.Normal(0.0, 2.0), D.Normal(0.0, 1.0))),
    )

    @D.register_kl(Wide, D.Normal)
    def _kl_wide(p: Any, q: Any) -> Any:
        return ember.tensor(-1.0)

    assert D.kl_divergence(Wide(0.0, 2.0), D.Normal(0.0, 1.0)).item() == -1.0
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# --------------------------------------------------------------------------- validation

ERRORS: dict[str, Callable[[Any], Any]] = {
    "negative scale": lambda X: X.distributions.Normal(X.tensor([0.0, 1.0]), X.tensor([1.0, -2.0])),
    "negative float scale": lambda X: X.distributions.Normal(0.0, -1.0),
    "nan loc": lambda X: X.distributions.Normal(X.tensor([0.0, float("nan")]), 1.0),
    "value not a tensor": lambda X: X.distributions.Normal(0.0, 1.0).log_prob(1.0),
    "value not broadcastable": lambda X: X.distributions.Normal(X.zeros(2), 1.0).log_prob(
        X.zeros(3)
    ),
    "value outside support": lambda X: X.distributions.Normal(X.zeros(2), 1.0).log_prob(
        X.tensor([0.0, float("nan")])
    ),
    "probs above 1": lambda X: X.distributions.Bernoulli(probs=X.tensor([0.5, 1.5])),
    "probs and logits": lambda X: X.distributions.Bernoulli(probs=0.5, logits=0.0),
    "neither probs nor logits": lambda X: X.distributions.Bernoulli(),
    "Bernoulli value not 0 or 1": lambda X: X.distributions.Bernoulli(probs=0.5).log_prob(
        X.tensor([0.5])
    ),
    "0-dim probs": lambda X: X.distributions.Categorical(probs=X.tensor(1.0)),
    "0-dim logits": lambda X: X.distributions.Categorical(logits=X.tensor(1.0)),
    "negative probs": lambda X: X.distributions.Categorical(probs=X.tensor([0.5, -0.5])),
    "category out of range": lambda X: X.distributions.Categorical(
        probs=X.tensor([0.5, 0.5])
    ).log_prob(X.tensor([2])),
    "Categorical value shape": lambda X: X.distributions.Categorical(probs=X.ones(2, 3)).log_prob(
        X.tensor([0, 1, 2])
    ),
    "low above high": lambda X: X.distributions.Uniform(1.0, 0.0),
    "outside the interval": lambda X: X.distributions.Uniform(0.0, 1.0).log_prob(X.tensor([2.0])),
    "parameter of the wrong type": lambda X: X.distributions.Normal("a", 1.0),
    "expand to a bad shape": lambda X: X.distributions.Normal(X.zeros(2), 1.0).expand([3, 3]),
    "no validation": lambda X: X.distributions.Normal(0.0, -1.0, validate_args=False).scale,
}  # fmt: skip


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e).replace("torch", "X").replace("ember", "X")
    return "ok", repr(r).replace("torch", "X").replace("ember", "X")


@pytest.mark.parametrize("case", ERRORS, ids=list(ERRORS))
def test_validation_errors_match_pytorch(case: str) -> None:
    fn = ERRORS[case]
    e, t = _outcome(lambda: fn(ember)), _outcome(lambda: fn(torch))
    if case == "expand to a bad shape":  # an expand error: same type, ember's own message
        assert e[0] == t[0]
    else:
        assert e == t


def test_default_validation_switch() -> None:
    D = ember.distributions
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Normal(0.0, -1.0).scale.item() == -1.0
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_expand_shares_parameters_and_keeps_values() -> None:
    for build in (normal, bernoulli_logits, uniform):
        e, _ = build(ember, grad=False)
        t, _ = build(torch, grad=False)
        shape = (5, *e.batch_shape)
        ee, te = e.expand(shape), t.expand(shape)
        assert tuple(ee.batch_shape) == tuple(te.batch_shape) == shape
        _close(ee.mean, te.mean)
        _close(ee.entropy(), te.entropy())
    c = categorical_probs(ember, grad=False)[0].expand((7, 2))
    assert tuple(c.probs.shape) == (7, 2, 4) and tuple(c.sample().shape) == (7, 2)


# --------------------------------------------------------------------------- sampling

N = 200_000


def _mean_ok(samples: np.ndarray, mean: np.ndarray, var: np.ndarray, n: int) -> None:
    """Sample means within 5 standard errors of the true means."""
    se = np.sqrt(var / n)
    assert np.all(np.abs(samples.mean(0) - mean) <= 5 * se + 1e-12), (samples.mean(0), mean)


def _var_ok(samples: np.ndarray, var: np.ndarray, fourth: np.ndarray, n: int) -> None:
    """Sample variances within 5 standard errors: Var(s^2) ~ (mu4 - var^2) / n."""
    se = np.sqrt((fourth - var**2) / n)
    assert np.all(np.abs(samples.var(0) - var) <= 5 * se), (samples.var(0), var)


def test_normal_samples_have_the_right_moments() -> None:
    ember.manual_seed(1)
    d, _ = normal(ember, grad=False)
    s = _np(d.sample((N,)))
    _mean_ok(s, LOC, SCALE**2, N)
    _var_ok(s, SCALE**2, 3 * SCALE**4, N)
    r = _np(d.rsample((N,)))  # the reparametrised path draws the same law
    _mean_ok(r, LOC, SCALE**2, N)


def test_uniform_samples_cover_the_interval() -> None:
    ember.manual_seed(2)
    d, _ = uniform(ember, grad=False)
    s = _np(d.sample((N,)))
    width = HIGH - LOW
    assert np.all(s >= LOW) and np.all(s < HIGH)
    _mean_ok(s, (LOW + HIGH) / 2, width**2 / 12, N)
    _var_ok(s, width**2 / 12, width**4 / 80, N)


def test_bernoulli_samples_have_the_right_frequencies() -> None:
    ember.manual_seed(3)
    probs = np.array([0.0, 0.1, 0.5, 0.97, 1.0])
    s = _np(ember.distributions.Bernoulli(probs=ember.tensor(probs)).sample((N,)))
    assert set(np.unique(s)) <= {0.0, 1.0}
    assert s[:, 0].sum() == 0 and s[:, -1].sum() == N  # certain events are certain
    _mean_ok(s, probs, probs * (1 - probs), N)


def test_categorical_samples_have_the_right_frequencies() -> None:
    ember.manual_seed(4)
    probs = np.array([[0.1, 0.0, 0.6, 0.3], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.0, 1.0]])
    d = ember.distributions.Categorical(probs=ember.tensor(probs))
    s = _np(d.sample((N,)))
    assert s.shape == (N, 3) and s.dtype == np.int64
    onehot = (s[..., None] == np.arange(4)).astype(np.float64)
    _mean_ok(onehot, probs, probs * (1 - probs), N)
    assert not (s[:, 0] == 1).any() and (s[:, 2] == 3).all()  # zero mass is never drawn
    logits = ember.distributions.Categorical(logits=ember.tensor(np.log(probs[1:2] * 2)))
    assert set(np.unique(_np(logits.sample((1000,))))) == {0, 1, 2, 3}


@pytest.mark.parametrize("name", DISTS, ids=list(DISTS))
def test_samples_repeat_under_manual_seed(name: str) -> None:
    build, _ = DISTS[name]
    d, _ = build(ember, grad=False)
    ember.manual_seed(123)
    a = _np(d.sample((6,))).copy()
    ember.manual_seed(123)
    b = _np(d.sample((6,)))
    ember.manual_seed(124)
    c = _np(d.sample((6,)))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c) or name.startswith("Bernoulli")


def test_vae_step_trains_like_pytorch() -> None:
    """A VAE's loss: reparametrised sample, Gaussian log-likelihood and KL to N(0, 1), with
    the same noise in both libraries; the encoder's gradients agree."""
    mu0, logvar0 = RNG.standard_normal((4, 2)), RNG.standard_normal((4, 2)) * 0.1
    ember.manual_seed(5)
    eps = RNG.standard_normal((4, 2))
    grads = []
    for X in (ember, torch):
        mu, logvar = X.tensor(mu0, requires_grad=True), X.tensor(logvar0, requires_grad=True)
        q = X.distributions.Normal(mu, X.exp(0.5 * logvar))
        z = q.loc + X.tensor(eps) * q.scale  # rsample with shared noise
        recon = X.distributions.Normal(z * 2.0, 1.0).log_prob(X.tensor(mu0)).sum()
        prior = X.distributions.Normal(X.zeros_like(mu), X.ones_like(mu))
        loss = X.distributions.kl_divergence(q, prior).sum() - recon
        loss.backward()
        grads.append((loss, mu.grad, logvar.grad))
    for e, t in zip(*grads, strict=True):
        _close(e, t)


# --------------------------------------------------------------------------- MultivariateNormal

_A = RNG.standard_normal((2, 3, 3))
COV = _A @ _A.transpose(0, 2, 1) + 2 * np.eye(3)
MVN_LOC = RNG.standard_normal((2, 3))
MVN_MATRICES = {
    "covariance_matrix": COV,
    "precision_matrix": np.linalg.inv(COV),
    "scale_tril": np.linalg.cholesky(COV),
}


def mvn(X: Any, kind: str, loc: np.ndarray = MVN_LOC, batch: bool = True) -> tuple[Any, list[Any]]:
    m = MVN_MATRICES[kind] if batch else MVN_MATRICES[kind][0]
    lt, mt = X.tensor(loc, requires_grad=True), X.tensor(m, requires_grad=True)
    return X.distributions.MultivariateNormal(lt, **{kind: mt}), [lt, mt]


@pytest.mark.parametrize("kind", MVN_MATRICES)
@pytest.mark.parametrize("batch", [True, False], ids=["batched matrix", "broadcast matrix"])
def test_multivariate_normal_matches_pytorch(kind: str, batch: bool) -> None:
    value = RNG.standard_normal((4, 2, 3))
    got = []
    for X in (ember, torch):
        d, params = mvn(X, kind, batch=batch)
        q = X.distributions.MultivariateNormal(
            X.zeros(3, dtype=X.float64), scale_tril=X.tensor(np.linalg.cholesky(COV[1]))
        )
        lp = d.log_prob(X.tensor(value))
        kl = X.distributions.kl_divergence(d, q)
        derived = (d.covariance_matrix, d.precision_matrix, d.scale_tril)
        loss = lp.sum() + d.entropy().sum() + kl.sum() + sum((m * m).sum() for m in derived)
        got.append(
            (lp, d.entropy(), kl, d.mean, d.variance, *derived, *X.autograd.grad(loss, params))
        )
        assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3,)
    for e, t in zip(*got, strict=True):
        _close(e, t, rtol=1e-9, atol=1e-10)
    assert repr(mvn(ember, kind)[0]).replace("ember", "torch") == repr(mvn(torch, kind)[0])


def test_multivariate_normal_rsample_gradients_given_the_same_noise() -> None:
    ember.manual_seed(0)
    d, params = mvn(ember, "covariance_matrix")
    s = d.rsample((5,))
    w = np.linspace(-1, 1, s.numel()).reshape(tuple(s.shape))
    (ember.tanh(s) * ember.tensor(w)).sum().backward()
    t, tparams = mvn(torch, "covariance_matrix")
    eps = np.linalg.solve(np.linalg.cholesky(COV), (_np(s) - MVN_LOC)[..., None])[..., 0]
    ts = t.loc + (t.scale_tril @ torch.tensor(eps)[..., None])[..., 0]
    (torch.tanh(ts) * torch.tensor(w)).sum().backward()
    for p, tp in zip(params, tparams, strict=True):
        _close(p.grad, tp.grad, rtol=1e-8, atol=1e-10)


def test_multivariate_normal_samples_have_the_right_mean_and_covariance() -> None:
    ember.manual_seed(6)
    d = ember.distributions.MultivariateNormal(
        ember.tensor(MVN_LOC), covariance_matrix=ember.tensor(COV)
    )
    s = _np(d.sample((N,)))
    assert s.shape == (N, 2, 3)
    var = np.diagonal(COV, 0, -2, -1)
    _mean_ok(s, MVN_LOC, var, N)
    centered = s - MVN_LOC
    cov = np.einsum("nbi,nbj->bij", centered, centered) / N
    # Var of a sample covariance entry: (S_ii S_jj + S_ij^2) / n
    se = np.sqrt((var[:, :, None] * var[:, None, :] + COV**2) / N)
    assert np.all(np.abs(cov - COV) <= 5 * se)
    ember.manual_seed(6)  # the same seed, the same samples (PyTorch's blocked Box-Muller
    # makes a shorter draw no prefix of a longer one, so the whole draw is compared)
    np.testing.assert_array_equal(_np(d.sample((N,))), s)


def test_multivariate_normal_expand_matches_pytorch() -> None:
    for kind in MVN_MATRICES:
        e, t = mvn(ember, kind, batch=False)[0], mvn(torch, kind, batch=False)[0]
        ee, te = e.expand((4, 2)), t.expand((4, 2))
        assert tuple(ee.batch_shape) == tuple(te.batch_shape) == (4, 2)
        _close(
            ee.log_prob(ember.zeros(3, dtype=ember.float64)),
            te.log_prob(torch.zeros(3, dtype=torch.float64)),
        )
        _close(ee.covariance_matrix, te.covariance_matrix, rtol=1e-9, atol=1e-10)


MVN_ERRORS: dict[str, Callable[[Any], Any]] = {
    "0-dim loc": lambda X: X.distributions.MultivariateNormal(X.tensor(0.0), X.eye(2)),
    "no matrix": lambda X: X.distributions.MultivariateNormal(X.zeros(2)),
    "two matrices": lambda X: X.distributions.MultivariateNormal(
        X.zeros(2), X.eye(2), scale_tril=X.eye(2)
    ),
    "1-D covariance": lambda X: X.distributions.MultivariateNormal(X.zeros(2), X.ones(2)),
    "1-D scale_tril": lambda X: X.distributions.MultivariateNormal(
        X.zeros(2), scale_tril=X.ones(2)
    ),
    "1-D precision": lambda X: X.distributions.MultivariateNormal(
        X.zeros(2), precision_matrix=X.ones(2)
    ),
    "covariance not positive definite": lambda X: X.distributions.MultivariateNormal(
        X.zeros(2), X.tensor([[1.0, 2.0], [2.0, 1.0]])
    ),
    "covariance not symmetric": lambda X: X.distributions.MultivariateNormal(
        X.zeros(2), X.tensor([[2.0, 1.0], [0.0, 2.0]])
    ),
    "scale_tril not lower": lambda X: X.distributions.MultivariateNormal(
        X.zeros(2), scale_tril=X.tensor([[1.0, 1.0], [0.0, 1.0]])
    ),
    "scale_tril negative diagonal": lambda X: X.distributions.MultivariateNormal(
        X.zeros(2), scale_tril=X.tensor([[1.0, 0.0], [0.5, -1.0]])
    ),
    "value of the wrong event shape": lambda X: X.distributions.MultivariateNormal(
        X.zeros(2), X.eye(2)
    ).log_prob(X.zeros(3)),
    "KL between event shapes": lambda X: X.distributions.kl_divergence(
        X.distributions.MultivariateNormal(X.zeros(2), X.eye(2)),
        X.distributions.MultivariateNormal(X.zeros(3), X.eye(3)),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", MVN_ERRORS, ids=list(MVN_ERRORS))
def test_multivariate_normal_errors_match_pytorch(case: str) -> None:
    fn = MVN_ERRORS[case]
    (e_type, e_msg), (t_type, t_msg) = _outcome(lambda: fn(ember)), _outcome(lambda: fn(torch))
    # PyTorch's KL message carries a source line's indentation: compare words
    assert (e_type, e_msg.split()) == (t_type, t_msg.split())
