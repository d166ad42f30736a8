"""Rprop, ASGD, SparseAdam and CyclicLR against PyTorch: trajectories on the quadratic
problem of test_optim.py, state dicts, errors, and schedules step by step."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch
from tests.test_optim import _run, _steps_with_gaps

pytestmark = requires_torch

CONFIGS = {
    "rprop": lambda lib, ps: lib.optim.Rprop(ps, lr=0.05),
    "rprop_etas_sizes_maximize": lambda lib, ps: lib.optim.Rprop(
        ps, lr=0.1, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True
    ),
    "asgd": lambda lib, ps: lib.optim.ASGD(ps, lr=0.05),
    "asgd_t0_wd": lambda lib, ps: lib.optim.ASGD(
        ps, lr=0.1, lambd=1e-2, alpha=0.6, t0=5, weight_decay=0.1
    ),
    "asgd_maximize": lambda lib, ps: lib.optim.ASGD(ps, lr=0.01, t0=0, maximize=True),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_trajectory_matches_torch(name: str) -> None:
    for a, b in zip(_run(CONFIGS[name], ember, 30), _run(CONFIGS[name], torch, 30), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["rprop_etas_sizes_maximize", "asgd_t0_wd"])
def test_parameters_at_different_steps_match_torch(name: str) -> None:
    mine = _steps_with_gaps(CONFIGS[name], ember, False)
    theirs = _steps_with_gaps(CONFIGS[name], torch, False)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["rprop", "asgd_t0_wd"])
def test_state_and_averages_match_torch(name: str) -> None:
    def run(lib: Any) -> Any:
        w = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
        opt = CONFIGS[name](lib, [w])
        for k in range(12):
            w.grad = lib.tensor([0.5, -1.0, 0.25]) * (1 if k % 4 else -1) + w.detach()
            opt.step()
        sd = opt.state_dict()
        return {k: np.asarray(v.numpy() if hasattr(v, "numpy") else v, dtype=np.float64)
                for k, v in sd["state"][0].items()}, sorted(sd["param_groups"][0])  # fmt: skip

    (mine, mine_keys), (ref, ref_keys) = run(ember), run(torch)
    assert sorted(mine) == sorted(ref) and mine_keys == ref_keys
    for key in ref:
        np.testing.assert_allclose(mine[key], ref[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_complex_parameters_match_torch() -> None:
    def run(lib: Any, name: str) -> Any:
        z = lib.nn.Parameter(lib.tensor(np.array([1 + 2j, -0.5 + 1j], dtype=np.complex64)))
        opt = CONFIGS[name](lib, [z])
        for _ in range(8):
            z.grad = lib.tensor((z.detach().numpy() * (0.5 - 0.25j) + 0.1).astype(np.complex64))
            opt.step()
        return z.detach().numpy().copy()

    for name in ("rprop", "asgd_t0_wd"):
        np.testing.assert_allclose(run(ember, name), run(torch, name), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("cls", "kwargs", "message"),
    [("Rprop", {"lr": -1.0}, "Invalid learning rate"),
     ("Rprop", {"etas": (1.5, 1.2)}, "Invalid eta values"),
     ("ASGD", {"weight_decay": -1.0}, "Invalid weight_decay"),
     ("ASGD", {"lr": -1.0}, "Invalid learning rate: -1.0"),
     ("LBFGS", {"lr": -1.0}, "Invalid learning rate: -1.0"),
     ("SparseAdam", {"lr": 0.0}, "Invalid learning rate"),
     ("SparseAdam", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0")],
)  # fmt: skip
def test_argument_errors_match_torch(cls: str, kwargs: dict, message: str) -> None:
    for lib in (ember, torch):
        with pytest.raises(ValueError, match=message):
            getattr(lib.optim, cls)([lib.nn.Parameter(lib.ones(1))], **kwargs)


def test_sparse_adam_refuses_dense_gradients_and_complex_params_as_torch() -> None:
    for lib in (ember, torch):
        w = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SparseAdam([w])
        opt.step()  # no gradient yet: nothing happens
        w.grad = lib.ones(3)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            opt.step()
        with pytest.raises(ValueError, match="Complex params at indices"):
            lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))])


def test_sparse_adam_embedding_trajectory_matches_torch() -> None:
    def run(lib: Any) -> Any:
        emb = lib.nn.Embedding(6, 3, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(np.arange(18.0, dtype=np.float32).reshape(6, 3) / 10))
        opt = lib.optim.SparseAdam(emb.parameters(), lr=0.1)
        for idx in ([0, 2], [2, 5, 5], [1]):
            opt.zero_grad()
            emb(lib.tensor(idx)).pow(2).sum().backward()
            opt.step()
        return emb.weight.detach().numpy().copy()

    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [{"step_size_up": 3},
     {"step_size_up": 2, "step_size_down": 5, "mode": "triangular2"},
     {"step_size_up": 4, "mode": "exp_range", "gamma": 0.9},
     {"step_size_up": 3, "scale_fn": lambda x: 0.5 ** x, "scale_mode": "iterations"},
     {"step_size_up": 3, "cycle_momentum": False}],
    ids=["triangular", "triangular2", "exp_range", "scale_fn", "no_momentum"],
)  # fmt: skip
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_cyclic_lr_matches_torch(kwargs: dict, optimizer: str) -> None:
    def run(lib: Any) -> list[Any]:
        groups = [{"params": [lib.nn.Parameter(lib.ones(1))]},
                  {"params": [lib.nn.Parameter(lib.ones(1))]}]  # fmt: skip
        opt_kw = {"momentum": 0.9} if optimizer == "SGD" else {}
        opt = getattr(lib.optim, optimizer)(groups, lr=0.5, **opt_kw)
        sched = lib.optim.lr_scheduler.CyclicLR(opt, [0.01, 0.02], [0.1, 0.3], **kwargs)
        out = []
        for _ in range(20):
            opt.step()
            sched.step()
            key = "momentum" if optimizer == "SGD" else "betas"
            out.append((sched.get_last_lr(), [g[key] for g in opt.param_groups]))
        return out

    mine, ref = run(ember), run(torch)
    for (lr_e, m_e), (lr_t, m_t) in zip(mine, ref, strict=True):
        np.testing.assert_allclose(lr_e, lr_t, rtol=1e-12)
        np.testing.assert_allclose(np.array(m_e, dtype=float), np.array(m_t, dtype=float))


def test_cyclic_lr_errors_and_state_dict() -> None:
    for lib in (ember, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1, momentum=0.9)
        with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
            lib.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, mode="nope")
        plain = lib.optim.Rprop([lib.nn.Parameter(lib.ones(1))])
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            lib.optim.lr_scheduler.CyclicLR(plain, 0.1, 1.0)
    opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1, momentum=0.9)
    s = ember.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=2)
    s.step()
    state = s.state_dict()
    s2 = ember.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=2)
    s2.load_state_dict(state)
    s.step()
    s2.step()
    assert s.get_last_lr() == s2.get_last_lr()
