"""``ember.special`` and the top-level special functions against PyTorch: values over grids
that cross the functions' poles and branch points, the ``Tensor`` methods and in-place forms,
gradients (PyTorch's and finite differences), what ``__torch_dispatch__`` sees for the
aliases, errors, and a log-softmax program."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from .conftest import dispatched_ops, raises_as_torch, requires_torch, torch

pytestmark = requires_torch

GRID = np.concatenate([np.linspace(-6.3, 6.3, 41), [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 30.0]])
UNIT = np.linspace(-0.995, 0.995, 31)
PROB = np.linspace(0.005, 0.995, 31)

#: name -> input grid; each is ember.special.<name> against torch.special.<name>
UNARY = {
    "erf": GRID, "erfc": GRID, "erfcx": GRID, "erfinv": UNIT, "expit": GRID, "expm1": GRID,
    "exp2": GRID, "gammaln": GRID, "digamma": GRID, "psi": GRID, "i0": GRID, "i0e": GRID,
    "i1": GRID, "i1e": GRID, "log1p": GRID[GRID > -1], "log_ndtr": GRID, "ndtr": GRID,
    "ndtri": PROB, "entr": GRID, "sinc": GRID, "logit": PROB,
}  # fmt: skip


def close(e: Any, t: Any, rtol: float = 1e-7, atol: float = 1e-10) -> None:
    assert e.dtype.name == str(t.dtype).removeprefix("torch.")
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)  # fmt: skip


def test_namespace_is_a_subset_of_torch_special() -> None:
    for name in ember.special.__all__:
        assert hasattr(torch.special, name), name
        assert getattr(ember.special, name).__name__ == getattr(torch.special, name).__name__
    # the Bessel, Chebyshev, Hermite, Laguerre, Legendre families, airy_ai and gammainc are
    # not in ember yet
    assert "gammainc" not in ember.special.__all__


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_over_grids(name: str, dtype: str) -> None:
    x = UNARY[name].astype(dtype)
    e = getattr(ember.special, name)(ember.from_numpy(x))
    t = getattr(torch.special, name)(torch.from_numpy(x))
    close(
        e, t, rtol=2e-6 if dtype == "float32" else 1e-9, atol=1e-6 if dtype == "float32" else 1e-12
    )


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_polygamma_values(n: int) -> None:
    x = GRID[(GRID > 0) | (GRID != np.round(GRID))]  # off the poles
    e, t = ember.from_numpy(x), torch.from_numpy(x)
    close(ember.special.polygamma(n, e), torch.special.polygamma(n, t), rtol=1e-8)
    close(ember.from_numpy(x).polygamma(n), torch.from_numpy(x).polygamma(n), rtol=1e-8)


def test_binary_functions_and_scalars() -> None:
    x = np.array([0.0, 0.0, 0.0, 1.0, 2.5, -1.0, 0.0, 3.0])
    y = np.array([0.0, -1.0, np.nan, -1.0, 0.5, 2.0, 1.0, -0.5])
    ex, ey, tx, ty = (
        ember.from_numpy(x),
        ember.from_numpy(y),
        torch.from_numpy(x),
        torch.from_numpy(y),
    )
    for name in ("xlogy", "xlog1py"):
        ef, tf = getattr(ember.special, name), getattr(torch.special, name)
        close(ef(ex, ey), tf(tx, ty))
        close(ef(ex, 2.5), tf(tx, 2.5))
        close(ef(2.5, ey), tf(2.5, ty))
        close(ef(ex, -1), tf(tx, -1))
    close(ember.xlogy(ex, ey), torch.xlogy(tx, ty))
    close(ember.special.multigammaln(ex + 4, 3), torch.special.multigammaln(tx + 4, 3))
    close(ember.special.logit(ex / 4, eps=0.2), torch.special.logit(tx / 4, eps=0.2))
    close(ember.special.round(ex * 1.37, decimals=1), torch.special.round(tx * 1.37, decimals=1))


def test_integer_inputs_become_floats() -> None:
    i = np.arange(1, 7)
    for name in ("erf", "gammaln", "digamma", "expit", "i0e", "entr", "log_ndtr"):
        close(getattr(ember.special, name)(ember.from_numpy(i)),
              getattr(torch.special, name)(torch.from_numpy(i)), rtol=2e-6)  # fmt: skip


METHODS = ["erfinv", "lgamma", "digamma", "erfc", "exp2", "sinc", "i0", "logit"]


@pytest.mark.parametrize("name", METHODS)
def test_top_level_methods_and_in_place(name: str) -> None:
    x = (PROB if name in ("erfinv", "logit") else GRID[GRID > 0]).copy()
    e, t = ember.from_numpy(x.copy()), torch.from_numpy(x.copy())
    close(getattr(ember, name)(e), getattr(torch, name)(t))
    close(getattr(e, name)(), getattr(t, name)())
    getattr(e, name + "_")()
    getattr(t, name + "_")()
    close(e, t)
    e2, t2 = ember.from_numpy(x.copy()), torch.from_numpy(x.copy())
    if name == "lgamma":
        close(e2.mvlgamma(2), t2.mvlgamma(2))
    else:
        close(e2.xlogy(e2), t2.xlogy(t2))


GRADS = {
    "erf": GRID, "erfc": GRID, "erfcx": GRID, "erfinv": UNIT, "expit": GRID, "exp2": GRID,
    "gammaln": GRID[GRID > 0], "digamma": GRID[GRID > 0], "i0": GRID, "i0e": GRID, "i1": GRID,
    "i1e": GRID, "log_ndtr": GRID, "ndtr": GRID, "ndtri": PROB, "entr": GRID[GRID > 0],
    "sinc": GRID, "logit": PROB,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_torch(name: str) -> None:
    x = GRADS[name]
    rng = np.random.default_rng(1)
    g = rng.standard_normal(x.shape)
    e = ember.from_numpy(x.copy()).requires_grad_()
    t = torch.from_numpy(x.copy()).requires_grad_()
    (eg,) = ember.autograd.grad(getattr(ember.special, name)(e), [e], ember.from_numpy(g))
    (tg,) = torch.autograd.grad(getattr(torch.special, name)(t), [t], torch.from_numpy(g))
    close(eg, tg, rtol=1e-8, atol=1e-12)


def test_gradients_at_the_edges_match_torch() -> None:
    """xlogy at x = 0 (0 where y <= 0), logit outside [eps, 1 - eps] and at 0 and 1, sinc
    and i1 at 0, polygamma's order climbing."""
    x = np.array([0.0, 0.0, 0.0, 1.0, 2.0])
    y = np.array([0.0, -1.0, 2.0, 0.5, 3.0])
    cases = [
        (lambda m, a, b: m.special.xlogy(a, b), (x, y)),
        (lambda m, a, b: m.special.xlog1py(a, b - 1), (x, y)),
        (lambda m, a, b: m.special.xlogy(a, -1.0) + m.special.xlog1py(a, -2.0), (x, y)),
        (lambda m, a, b: m.special.logit(b / 3, eps=0.2) + m.special.logit(a), (x, y)),
        (lambda m, a, b: m.special.sinc(a - b) + m.special.i1(a) + m.special.i1e(b - 2), (x, y)),
        (lambda m, a, b: m.special.polygamma(2, b + 1) + m.special.multigammaln(b + 2, 2), (x, y)),
    ]
    for fn, arrays in cases:
        e = [ember.from_numpy(a.copy()).requires_grad_() for a in arrays]
        t = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
        eg = ember.autograd.grad(fn(ember, *e).sum(), e, allow_unused=True)
        tg = torch.autograd.grad(fn(torch, *t).sum(), t, allow_unused=True)
        for a, b in zip(eg, tg, strict=True):
            if b is None:
                assert a is None
            else:
                close(a, b, rtol=1e-8)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: ember.special.erfinv(x * 0.3),
        lambda x: ember.special.gammaln(x + 3),
        lambda x: ember.special.polygamma(1, x + 3),
        lambda x: ember.special.multigammaln(x + 4, 3),
        lambda x: ember.special.logit(x * 0.1 + 0.5),
        lambda x: ember.special.xlogy(x, x + 3),
        lambda x: ember.special.erfcx(x) + ember.special.log_ndtr(x),
        lambda x: ember.special.ndtri(x * 0.1 + 0.5),
        lambda x: ember.special.i0e(x) + ember.special.i1(x) + ember.special.i1e(x),
    ],
)  # fmt: skip
def test_gradcheck_and_gradgradcheck(fn: Any) -> None:
    x = ember.from_numpy(np.array([-0.7, 0.3, 1.2])).requires_grad_()
    assert gradcheck(fn, [x])
    assert gradgradcheck(fn, [x], atol=1e-4)


ALIASES = [
    ("expit", lambda m, x: m.special.expit(x)),
    ("gammaln", lambda m, x: m.special.gammaln(x)),
    ("psi", lambda m, x: m.special.psi(x)),
    ("ndtr", lambda m, x: m.special.ndtr(x)),
    ("round", lambda m, x: m.special.round(x)),
    ("softmax", lambda m, x: m.special.softmax(x, 0)),
    ("log_softmax", lambda m, x: m.special.log_softmax(x, 0)),
    ("logsumexp", lambda m, x: m.special.logsumexp(x, 0)),
    ("xlogy scalar", lambda m, x: m.special.xlogy(2.0, x)),
    ("multigammaln", lambda m, x: m.special.multigammaln(x, 1)),
    ("entr", lambda m, x: m.special.entr(x)),
    ("polygamma", lambda m, x: m.special.polygamma(2, x)),
]


@pytest.mark.parametrize(("name", "call"), ALIASES, ids=[a[0] for a in ALIASES])
def test_torch_dispatch_sees_torchs_ops(name: str, call: Any) -> None:
    x = np.linspace(0.5, 2.0, 6)
    tx, ex = torch.from_numpy(x), ember.from_numpy(x)
    seen = dispatched_ops(torch, lambda: call(torch, tx))
    assert dispatched_ops(ember, lambda: call(ember, ex)) == seen


ERRORS = [
    ("erfinv complex", lambda m: m.special.erfinv(m.ones(2, dtype=m.complex64))),
    ("gammaln complex", lambda m: m.special.gammaln(m.ones(2, dtype=m.complex64))),
    ("xlogy complex", lambda m: m.xlogy(m.ones(2, dtype=m.complex64), m.ones(2))),
    ("ndtri float16", lambda m: m.special.ndtri(m.ones(2, dtype=m.float16))),
    ("polygamma negative", lambda m: m.special.polygamma(-1, m.ones(2))),
    ("multigammaln bool", lambda m: m.special.multigammaln(m.ones(2, dtype=m.bool), 1)),
    ("logit complex", lambda m: m.logit(m.ones(2, dtype=m.complex128))),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name: str, call: Any) -> None:
    raises_as_torch(call)


def test_program_logsumexp_of_log_softmax() -> None:
    """``logsumexp(log_softmax(x))`` is 0 along the dim; a loss mixing the special functions
    has PyTorch's value and gradient."""
    x = np.random.default_rng(3).standard_normal((4, 7))

    def program(m: Any, a: Any) -> Any:
        ls = m.special.log_softmax(a, 1)
        zero = m.special.logsumexp(ls, 1)
        p = m.special.softmax(a, 1)
        ent = m.special.entr(p).sum(1)
        return zero, (ent * m.special.expit(a[:, 0]) + m.special.xlogy(p, p).sum(1)).sum()

    e = ember.from_numpy(x.copy()).requires_grad_()
    t = torch.from_numpy(x.copy()).requires_grad_()
    (ez, el), (tz, tl) = program(ember, e), program(torch, t)
    np.testing.assert_allclose(ez.detach().numpy(), 0.0, atol=1e-12)
    close(ez, tz)
    close(el, tl)
    close(ember.autograd.grad(el, [e])[0], torch.autograd.grad(tl, [t])[0], rtol=1e-9)
    assert math.isfinite(float(el))
