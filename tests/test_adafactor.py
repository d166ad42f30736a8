"""``optim.Adafactor`` against PyTorch 2.13 (NOTE [Adafactor]): several steps of a small model
(matrices, a 3-d weight, vectors, a scalar) in both update forms, every option, the state's
layout, ``state_dict`` round trips, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")

SHAPES = [(4, 3), (2, 3, 5), (3,), ()]


def _train(lib, steps: int = 8, foreach: bool = False, **kw):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((6, 3)).astype("float32"))
    y = lib.tensor(rng.standard_normal((6, 4)).astype("float32"))
    model = [lib.tensor(rng.standard_normal(s).astype("float32"), requires_grad=True)
             for s in SHAPES]  # fmt: skip
    opt = lib.optim.Adafactor(model, foreach=foreach, **kw)
    for _ in range(steps):
        w, w3, b, s = model
        out = x @ w.T + b.sum() * s  # (6, 4)
        loss = ((out - y) ** 2).mean() + (w3**2).sum() * 0.1 + (b**3).sum() * 0.01
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().numpy() for p in model], opt


OPTIONS = [
    {},
    {"lr": 0.05, "weight_decay": 0.1},
    {"maximize": True},
    {"lr": 0.2, "beta2_decay": -0.3, "eps": (1e-6, 1e-2), "d": 2.0},
    {"eps": (0.0, 0.0)},
]


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("kw", OPTIONS, ids=str)
def test_steps_match_torch(kw, foreach: bool) -> None:  # type: ignore[no-untyped-def]
    mine, opt = _train(ember, foreach=foreach, **kw)
    theirs, topt = _train(torch, **kw)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for p, tp in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"], strict=True):
        st, tst = opt.state[p], topt.state[tp]
        assert list(st) == list(tst)
        for k in st:
            np.testing.assert_allclose(st[k].numpy(), tst[k].numpy(), rtol=1e-5, atol=1e-7)
            assert tuple(st[k].shape) == tuple(tst[k].shape)


def test_defaults_and_state_dict() -> None:
    _, opt = _train(ember, steps=3)
    _, topt = _train(torch, steps=3)
    g, tg = opt.param_groups[0], topt.param_groups[0]
    for key in ("lr", "beta2_decay", "eps", "d", "weight_decay", "foreach", "maximize"):
        assert g[key] == tg[key], key
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for i, st in sd["state"].items():
        assert list(st) == list(tsd["state"][i])
        for k, v in st.items():
            np.testing.assert_allclose(v.numpy(), tsd["state"][i][k].numpy(), rtol=1e-5)
    # a fresh optimizer loaded with the state continues as the original does
    fresh = ember.optim.Adafactor(opt.param_groups[0]["params"])
    fresh.load_state_dict(sd)
    before = [p.detach().clone() for p in fresh.param_groups[0]["params"]]
    for p in fresh.param_groups[0]["params"]:
        p.grad = ember.ones_like(p)
    fresh.step()
    twin = ember.optim.Adafactor([p.clone().requires_grad_() for p in before])
    twin.load_state_dict(sd)
    for p in twin.param_groups[0]["params"]:
        p.grad = ember.ones_like(p)
    twin.step()
    for a, b in zip(fresh.param_groups[0]["params"], twin.param_groups[0]["params"], strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert float(fresh.state[fresh.param_groups[0]["params"][0]]["step"]) == 4.0


def test_refusals() -> None:
    w = [ember.nn.Parameter(ember.ones(2))]
    for kw, match in (
        ({"lr": -1.0}, "Learning rate should be >= 0"),
        ({"beta2_decay": 0.5}, "beta2_decay should be <= 0"),
        ({"eps": (-1.0, 1e-3)}, "epsilon1 should be >= 0"),
        ({"eps": (None, -1.0)}, "epsilon2 should be >= 0"),
        ({"d": 0.5}, "Clipping threshold d should be >= 1"),
        ({"weight_decay": -0.1}, "weight_decay should be >= 0"),
    ):
        with pytest.raises(ValueError, match=match):
            ember.optim.Adafactor(w, **kw)
    z = ember.nn.Parameter(ember.ones(2, dtype=ember.complex64))
    z.grad = ember.ones(2, dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="does not support complex parameters"):
        ember.optim.Adafactor([z]).step()
