"""Optimizers and LR schedulers against PyTorch: same start, same gradients, same path."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

import ember
from ember import nn, optim
from tests.conftest import requires_torch, torch

pytestmark = requires_torch

_RNG = np.random.default_rng(0)
_W0 = [_RNG.standard_normal((3, 4)).astype(np.float32), _RNG.standard_normal(4).astype(np.float32)]
_CURV = [np.abs(_RNG.standard_normal(s.shape)).astype(np.float32) + 0.5 for s in _W0]
_SHIFT = [_RNG.standard_normal(s.shape).astype(np.float32) for s in _W0]


def _quadratic_grad(i: int, w: np.ndarray) -> np.ndarray:
    """Gradient of 0.5 * curv * w**2 + shift * w: a fixed, well-conditioned problem."""
    return (_CURV[i] * w + _SHIFT[i]).astype(np.float32)


def _run(make_opt, lib, steps: int = 20) -> list[np.ndarray]:
    params = [lib.nn.Parameter(lib.tensor(w.copy())) for w in _W0]
    opt = make_opt(lib, params)
    for _ in range(steps):
        for i, p in enumerate(params):
            p.grad = lib.tensor(_quadratic_grad(i, p.detach().numpy()))
        opt.step()
    return [p.detach().numpy().copy() for p in params]


CONFIGS = {
    "sgd": lambda lib, ps: lib.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda lib, ps: lib.optim.SGD(ps, lr=0.05, momentum=0.9, dampening=0.1),
    "sgd_nesterov_wd": lambda lib, ps: lib.optim.SGD(
        ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01
    ),
    "sgd_maximize": lambda lib, ps: lib.optim.SGD(ps, lr=0.01, momentum=0.5, maximize=True),
    "adam": lambda lib, ps: lib.optim.Adam(ps, lr=0.05),
    "adam_wd_amsgrad": lambda lib, ps: lib.optim.Adam(
        ps, lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True
    ),
    "adam_maximize": lambda lib, ps: lib.optim.Adam(ps, lr=0.01, maximize=True),
    "adamw": lambda lib, ps: lib.optim.AdamW(ps, lr=0.05, weight_decay=0.1),
    "adamw_amsgrad": lambda lib, ps: lib.optim.AdamW(ps, lr=0.05, amsgrad=True, eps=1e-6),
    "rmsprop": lambda lib, ps: lib.optim.RMSprop(ps, lr=0.01),
    "rmsprop_centered_momentum": lambda lib, ps: lib.optim.RMSprop(
        ps, lr=0.01, alpha=0.9, momentum=0.8, centered=True, eps=1e-6
    ),
    "rmsprop_wd_maximize": lambda lib, ps: lib.optim.RMSprop(
        ps, lr=0.005, weight_decay=0.1, momentum=0.5, maximize=True
    ),
    "rmsprop_centered": lambda lib, ps: lib.optim.RMSprop(ps, lr=0.01, centered=True),
    "adagrad": lambda lib, ps: lib.optim.Adagrad(ps, lr=0.1),
    "adagrad_decay_init": lambda lib, ps: lib.optim.Adagrad(
        ps, lr=0.2, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6
    ),
    "adagrad_maximize": lambda lib, ps: lib.optim.Adagrad(ps, lr=0.05, maximize=True),
    "adadelta": lambda lib, ps: lib.optim.Adadelta(ps),
    "adadelta_rho_wd": lambda lib, ps: lib.optim.Adadelta(
        ps, lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1
    ),
    "adadelta_maximize": lambda lib, ps: lib.optim.Adadelta(ps, lr=2.0, maximize=True),
    "adamax": lambda lib, ps: lib.optim.Adamax(ps, lr=0.05),
    "adamax_wd_betas": lambda lib, ps: lib.optim.Adamax(
        ps, lr=0.02, betas=(0.8, 0.9), eps=1e-4, weight_decay=0.1
    ),
    "adamax_maximize": lambda lib, ps: lib.optim.Adamax(ps, lr=0.01, maximize=True),
    "nadam": lambda lib, ps: lib.optim.NAdam(ps, lr=0.05),
    "nadam_wd_momentum_decay": lambda lib, ps: lib.optim.NAdam(
        ps, lr=0.02, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.05
    ),
    "nadam_decoupled_maximize": lambda lib, ps: lib.optim.NAdam(
        ps, lr=0.01, weight_decay=0.2, decoupled_weight_decay=True, maximize=True
    ),
    "radam": lambda lib, ps: lib.optim.RAdam(ps, lr=0.05),
    "radam_wd_betas": lambda lib, ps: lib.optim.RAdam(
        ps, lr=0.05, betas=(0.5, 0.7), weight_decay=0.1, eps=1e-6
    ),
    "radam_decoupled_maximize": lambda lib, ps: lib.optim.RAdam(
        ps,
        lr=0.01,
        betas=(0.9, 0.9),
        weight_decay=0.2,
        decoupled_weight_decay=True,
        maximize=True,
    ),
    "adafactor": lambda lib, ps: lib.optim.Adafactor(ps),
    "adafactor_wd_maximize": lambda lib, ps: lib.optim.Adafactor(
        ps, lr=0.05, weight_decay=0.1, maximize=True
    ),
    "adafactor_eps_d_decay": lambda lib, ps: lib.optim.Adafactor(
        ps, lr=0.1, beta2_decay=-0.5, eps=(1e-4, 1e-2), d=1.5
    ),
}


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_trajectory_matches_torch(name: str, foreach: bool) -> None:
    """Both update forms (NOTE [foreach updates]) follow PyTorch's; ember's two forms agree
    bit for bit."""

    def make(lib, ps):
        opt = CONFIGS[name](lib, ps)
        for group in opt.param_groups:
            group["foreach"] = foreach
        return opt

    mine = _run(make, ember)
    theirs = _run(make, torch)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    if foreach:
        for a, b in zip(mine, _run(CONFIGS[name], ember), strict=True):
            np.testing.assert_array_equal(a, b)


def test_param_groups_with_own_options_match_torch() -> None:
    def make(lib, ps):
        return lib.optim.SGD(
            [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.01, "momentum": 0.5}], lr=0.1
        )

    for a, b in zip(_run(make, ember), _run(make, torch), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_params_without_grad_are_skipped() -> None:
    w = nn.Parameter(ember.ones(2))
    opt = optim.Adam([w], lr=0.1)
    opt.step()
    assert w.tolist() == [1.0, 1.0] and len(opt.state) == 0


def _torch_keys(obj):
    return {k: _torch_keys(v) for k, v in obj.items()} if isinstance(obj, dict) else None


@pytest.mark.parametrize("name", ["sgd_momentum", "adam_wd_amsgrad", "adamw"])
def test_state_dict_layout_matches_torch(name: str) -> None:
    def two_steps(lib):
        params = [lib.nn.Parameter(lib.tensor(w.copy())) for w in _W0]
        opt = CONFIGS[name](lib, params)
        for _ in range(2):
            for i, p in enumerate(params):
                p.grad = lib.tensor(_quadratic_grad(i, p.detach().numpy()))
            opt.step()
        return opt.state_dict()

    mine, theirs = two_steps(ember), two_steps(torch)
    assert list(mine) == list(theirs) == ["state", "param_groups"]
    assert list(mine["state"]) == list(theirs["state"]) == [0, 1]
    for i in (0, 1):
        assert list(mine["state"][i]) == list(theirs["state"][i])
        for key, value in theirs["state"][i].items():
            np.testing.assert_allclose(mine["state"][i][key].numpy(), value.numpy(), rtol=1e-5)
            assert mine["state"][i][key].dtype.name == str(value.dtype).removeprefix("torch.")
    assert mine["param_groups"] == theirs["param_groups"]
    assert list(mine["param_groups"][0]) == list(theirs["param_groups"][0])


def test_load_state_dict_resumes_the_same_path() -> None:
    def fresh():
        params = [nn.Parameter(ember.tensor(w.copy())) for w in _W0]
        return params, optim.Adam(params, lr=0.05, amsgrad=True)

    def steps(params, opt, n):
        for _ in range(n):
            for i, p in enumerate(params):
                p.grad = ember.tensor(_quadratic_grad(i, p.detach().numpy()))
            opt.step()

    params, opt = fresh()
    steps(params, opt, 10)
    saved_state = copy.deepcopy(opt.state_dict())  # state_dict() holds live tensors
    saved_values = [p.detach().clone() for p in params]
    steps(params, opt, 5)
    expected = [p.detach().numpy().copy() for p in params]

    params2, opt2 = fresh()
    with ember.no_grad():
        for p, v in zip(params2, saved_values, strict=True):
            p.copy_(v)
    opt2.load_state_dict(saved_state)
    assert opt2.state[params2[0]]["exp_avg"] is not saved_state["state"][0]["exp_avg"]
    steps(params2, opt2, 5)
    for a, b in zip([p.detach().numpy() for p in params2], expected, strict=True):
        np.testing.assert_array_equal(a, b)


def test_load_state_dict_casts_state_to_param_dtype() -> None:
    w = nn.Parameter(ember.ones(2))
    w.grad = ember.ones(2)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    opt.step()
    sd = opt.state_dict()
    w64 = nn.Parameter(ember.ones(2, dtype=ember.float64))
    opt64 = optim.SGD([w64], lr=0.1, momentum=0.9)
    opt64.load_state_dict(sd)
    assert opt64.state[w64]["momentum_buffer"].dtype == ember.float64


def test_load_state_dict_mismatch_errors() -> None:
    a, b = nn.Parameter(ember.ones(1)), nn.Parameter(ember.ones(1))
    sd = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)


def test_zero_grad() -> None:
    w = nn.Parameter(ember.ones(2))
    w.grad = ember.ones(2)
    opt = optim.SGD([w], lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_closure_is_called_and_its_loss_returned() -> None:
    w = nn.Parameter(ember.ones(2))
    calls = []

    def closure():
        calls.append(1)
        w.grad = ember.ones(2)
        return 3.0

    assert optim.SGD([w], lr=0.5).step(closure) == 3.0
    assert calls == [1] and w.tolist() == [0.5, 0.5]


def test_training_a_linear_model_with_backward_matches_torch() -> None:
    x = _RNG.standard_normal((8, 4)).astype(np.float32)
    y = _RNG.standard_normal((8, 3)).astype(np.float32)

    def train(lib):
        w = lib.nn.Parameter(lib.tensor(_W0[0].T.copy()))  # (4, 3)
        b = lib.nn.Parameter(lib.tensor(_W0[1][:3].copy()))
        opt = lib.optim.AdamW([w, b], lr=0.05)
        xt, yt = lib.tensor(x), lib.tensor(y)
        for _ in range(20):
            opt.zero_grad()
            loss = ((xt @ w + b - yt) ** 2).mean()
            loss.backward()
            opt.step()
        return w.detach().numpy().copy(), b.detach().numpy().copy(), loss.item()

    for a, b in zip(train(ember), train(torch), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lr": -1.0}, "Invalid learning rate: -1.0"),
        ({"lr": 0.1, "momentum": -0.5}, "Invalid momentum value: -0.5"),
        ({"lr": 0.1, "weight_decay": -1}, "Invalid weight_decay value: -1"),
        ({"lr": 0.1, "nesterov": True}, "Nesterov momentum requires a momentum and zero dampening"),
    ],
)
def test_sgd_argument_errors_match_torch(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], **kwargs)
    with pytest.raises(ValueError, match=message):
        optim.SGD([nn.Parameter(ember.ones(1))], **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"eps": -1.0}, "Invalid epsilon value"),
        ({"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0"),
        ({"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1"),
    ],
)
def test_adam_argument_errors_match_torch(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], **kwargs)
    with pytest.raises(ValueError, match=message):
        optim.Adam([nn.Parameter(ember.ones(1))], **kwargs)


def test_param_argument_errors() -> None:
    w = nn.Parameter(ember.ones(1))
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    opt = optim.SGD([w], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {nn.Parameter(ember.ones(1))}})
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [w]})


def test_repr_matches_torch() -> None:
    mine = repr(optim.AdamW([nn.Parameter(ember.ones(1))], lr=0.01))
    theirs = repr(torch.optim.AdamW([torch.nn.Parameter(torch.ones(1))], lr=0.01))
    assert mine == theirs


NEW_OPTIMIZERS = ["rmsprop", "adagrad", "adadelta", "adamax", "nadam", "radam"]


def _steps_with_gaps(make_opt, lib, foreach: bool, steps: int = 20) -> list[np.ndarray]:
    """Like ``_run``, but the second parameter has a gradient only every third step, so the
    parameters' step counts differ (per-parameter scalars in the foreach form)."""
    params = [lib.nn.Parameter(lib.tensor(w.copy())) for w in _W0]
    opt = make_opt(lib, params)
    for group in opt.param_groups:
        group["foreach"] = foreach
    for k in range(steps):
        for i, p in enumerate(params):
            has_grad = i == 0 or k % 3 == 0
            p.grad = lib.tensor(_quadratic_grad(i, p.detach().numpy())) if has_grad else None
        opt.step()
    return [p.detach().numpy().copy() for p in params]


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(
    "name", ["rmsprop_centered_momentum", "adagrad_decay_init", "adadelta_rho_wd",
             "adamax_wd_betas", "nadam_wd_momentum_decay", "radam", "radam_wd_betas"],
)  # fmt: skip
def test_parameters_at_different_steps_match_torch(name: str, foreach: bool) -> None:
    mine = _steps_with_gaps(CONFIGS[name], ember, foreach)
    theirs = _steps_with_gaps(CONFIGS[name], torch, foreach)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "name", ["sgd_nesterov_wd", "adam_wd_amsgrad", "adamw", "rmsprop_centered_momentum",
             "adagrad_decay_init", "adadelta_rho_wd", "adamax_wd_betas",
             "nadam_wd_momentum_decay", "radam_wd_betas", "radam_decoupled_maximize"],
)  # fmt: skip
def test_complex_parameters_match_torch(name: str) -> None:
    """A complex parameter is updated as pairs of reals, in both forms, as PyTorch does."""
    z0 = (_W0[0] + 1j * _W0[0][::-1]).astype(np.complex64)

    def run(lib, foreach):
        z = lib.nn.Parameter(lib.tensor(z0.copy()))
        opt = CONFIGS[name](lib, [z])
        opt.param_groups[0]["foreach"] = foreach
        for _ in range(10):
            z.grad = lib.tensor((z.detach().numpy() * (0.5 - 0.25j) + 0.1).astype(np.complex64))
            opt.step()
        return z.detach().numpy().copy()

    for foreach in (False, True):
        np.testing.assert_allclose(run(ember, foreach), run(torch, foreach), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "name", ["sgd_momentum", "adam_wd_amsgrad", "rmsprop_centered_momentum",
             "adagrad_decay_init", "adadelta_rho_wd", "adamax_wd_betas",
             "nadam_wd_momentum_decay", "radam_wd_betas"],
)  # fmt: skip
@pytest.mark.parametrize("foreach", [False, True])
def test_state_dict_round_trip_continues_torch_path(name: str, foreach: bool) -> None:
    """Saved after 10 steps and loaded into a fresh optimizer over fresh parameters, the
    next 10 steps are those of an uninterrupted run (bit for bit) and of PyTorch's."""

    def steps(lib, params, opt, n):
        for _ in range(n):
            for i, p in enumerate(params):
                p.grad = lib.tensor(_quadratic_grad(i, p.detach().numpy()))
            opt.step()

    def fresh():
        params = [nn.Parameter(ember.tensor(w.copy())) for w in _W0]
        opt = CONFIGS[name](ember, params)
        for group in opt.param_groups:
            group["foreach"] = foreach
        return params, opt

    params, opt = fresh()
    steps(ember, params, opt, 10)
    saved = copy.deepcopy(opt.state_dict())
    saved_values = [p.detach().clone() for p in params]
    steps(ember, params, opt, 10)
    params2, opt2 = fresh()
    with ember.no_grad():
        for p, v in zip(params2, saved_values, strict=True):
            p.copy_(v)
    opt2.load_state_dict(saved)
    steps(ember, params2, opt2, 10)
    theirs = _run(CONFIGS[name], torch, steps=20)
    for a, b, c in zip(params2, params, theirs, strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        np.testing.assert_allclose(a.detach().numpy(), c, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "name", ["rmsprop_centered_momentum", "adagrad_decay_init", "adadelta_rho_wd",
             "adamax_wd_betas", "nadam_wd_momentum_decay", "radam_wd_betas"],
)  # fmt: skip
def test_new_optimizers_state_dict_layout_matches_torch(name: str) -> None:
    test_state_dict_layout_matches_torch(name)


def test_adagrad_state_exists_before_the_first_step_as_in_torch() -> None:
    def state(lib):
        params = [lib.nn.Parameter(lib.tensor(w.copy())) for w in _W0]
        return lib.optim.Adagrad(params, initial_accumulator_value=0.25).state_dict()["state"]

    mine, theirs = state(ember), state(torch)
    assert list(mine) == list(theirs) == [0, 1]
    for i in (0, 1):
        assert list(mine[i]) == list(theirs[i]) == ["step", "sum"]
        np.testing.assert_array_equal(mine[i]["sum"].numpy(), theirs[i]["sum"].numpy())


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_lazy_parameters_follow_the_cpu_path(name: str) -> None:
    """Parameters moved to the lazy device take the cpu device's steps, in both forms."""

    def run(device, foreach):
        params = [nn.Parameter(ember.tensor(w.copy()).to(device)) for w in _W0]
        opt = CONFIGS[name](ember, params)
        for group in opt.param_groups:
            group["foreach"] = foreach
        for _ in range(4):
            for i, p in enumerate(params):
                p.grad = ember.tensor(_quadratic_grad(i, p.detach().numpy())).to(device)
            opt.step()
        return [p.detach().to("cpu").numpy() for p in params]

    for foreach in (False, True):
        for a, b in zip(run("lazy", foreach), run("cpu", foreach), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


# --------------------------------------------------------------------------- LBFGS

_A = _RNG.standard_normal((12, 4))
_B = _RNG.standard_normal(12)
_X0 = _RNG.standard_normal(4)


def _lbfgs_run(lib, dtype, device="cpu", calls=4, **kwargs):
    """``calls`` LBFGS steps on a least-squares problem; per call: the loss it returned,
    the parameters, and the closure evaluations and iterations so far."""
    w = lib.nn.Parameter(lib.tensor(_X0.astype(dtype)).to(device))
    c = lib.nn.Parameter(lib.zeros(1, dtype=getattr(lib, dtype)).to(device))
    a, b = lib.tensor(_A.astype(dtype)).to(device), lib.tensor(_B.astype(dtype)).to(device)
    opt = lib.optim.LBFGS([w, c], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((a @ w + c - b) ** 2).mean()
        loss.backward()
        return loss

    out = []
    for _ in range(calls):
        loss = opt.step(closure)
        st = opt.state[w]
        values = np.concatenate([w.detach().to("cpu").numpy(), c.detach().to("cpu").numpy()])
        out.append((loss.item(), values, st["func_evals"], st["n_iter"]))
    return out


LBFGS_CONFIGS = [
    {"max_iter": 3, "lr": 0.5},
    {},
    {"line_search_fn": "strong_wolfe", "max_iter": 5},
    {"line_search_fn": "strong_wolfe", "history_size": 2, "max_iter": 4},
    {"line_search_fn": "strong_wolfe", "max_iter": 10, "max_eval": 6},
]


@pytest.mark.parametrize("kwargs", LBFGS_CONFIGS, ids=str)
def test_lbfgs_matches_torch_in_float64(kwargs: dict) -> None:
    """Same losses, iterates and counts of evaluations and iterations as PyTorch: in
    float64 the two take the same decisions all the way to convergence."""
    for mine, theirs in zip(
        _lbfgs_run(ember, "float64", **kwargs), _lbfgs_run(torch, "float64", **kwargs), strict=True
    ):
        assert math.isclose(mine[0], theirs[0], rel_tol=1e-12)
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-10, atol=1e-12)
        assert mine[2:] == theirs[2:]


@pytest.mark.parametrize("kwargs", LBFGS_CONFIGS, ids=str)
def test_lbfgs_float32_reaches_torch_solution(kwargs: dict) -> None:
    """In float32 the first call follows PyTorch's iterates; near the minimum, rounding
    noise decides when to stop (how many evaluations), so later calls are compared at the
    solution."""
    mine, theirs = _lbfgs_run(ember, "float32", **kwargs), _lbfgs_run(torch, "float32", **kwargs)
    np.testing.assert_allclose(mine[0][1], theirs[0][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mine[-1][1], theirs[-1][1], rtol=1e-3, atol=1e-4)
    assert math.isclose(mine[-1][0], theirs[-1][0], rel_tol=1e-5)


@pytest.mark.parametrize("kwargs", [{}, {"line_search_fn": "strong_wolfe"}], ids=str)
def test_lbfgs_on_the_lazy_device_follows_the_cpu_path(kwargs: dict) -> None:
    for mine, cpu in zip(
        _lbfgs_run(ember, "float64", "lazy", calls=2, **kwargs),
        _lbfgs_run(ember, "float64", "cpu", calls=2, **kwargs),
        strict=True,
    ):
        np.testing.assert_allclose(mine[1], cpu[1], rtol=1e-12)
        assert mine[2:] == cpu[2:]


def test_lbfgs_state_dict_round_trip() -> None:
    """Its state (history lists, last direction and step) saved after one call and loaded
    into a fresh LBFGS continues the same path, which is PyTorch's."""

    def fresh(lib):
        w = lib.nn.Parameter(lib.tensor(_X0.copy()))
        return w, lib.optim.LBFGS([w], lr=0.5, max_iter=3, max_eval=10, history_size=2)

    def call(lib, w, opt, n):
        a, b = lib.tensor(_A), lib.tensor(_B)

        def closure():
            opt.zero_grad()
            loss = ((a @ w - b) ** 2).mean()
            loss.backward()
            return loss

        for _ in range(n):
            opt.step(closure)

    w, opt = fresh(ember)
    call(ember, w, opt, 1)
    saved, saved_w = copy.deepcopy(opt.state_dict()), w.detach().clone()
    call(ember, w, opt, 3)
    w2, opt2 = fresh(ember)
    with ember.no_grad():
        w2.copy_(saved_w)
    opt2.load_state_dict(saved)
    call(ember, w2, opt2, 3)
    tw, topt = fresh(torch)
    call(torch, tw, topt, 4)
    np.testing.assert_array_equal(w2.detach().numpy(), w.detach().numpy())
    np.testing.assert_allclose(w2.detach().numpy(), tw.detach().numpy(), rtol=1e-10)
    assert opt2.state[w2]["n_iter"] == opt.state[w]["n_iter"] == topt.state[tw]["n_iter"] == 12
    assert len(opt2.state[w2]["old_dirs"]) == 2


def test_lbfgs_complex_parameter_matches_torch() -> None:
    """A complex parameter enters the flat vector as real pairs, as in PyTorch."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 3)) + 1j * rng.standard_normal((6, 3))
    b = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    z0 = rng.standard_normal(3) + 0j

    def run(lib):
        z = lib.nn.Parameter(lib.tensor(z0.copy()))
        at, bt = lib.tensor(a), lib.tensor(b)
        opt = lib.optim.LBFGS([z], line_search_fn="strong_wolfe", max_iter=6)

        def closure():
            opt.zero_grad()
            r = at @ z - bt
            loss = (r.real**2 + r.imag**2).sum()
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        return z.detach().numpy().copy(), opt.state[z]["func_evals"]

    (mine, evals), (theirs, their_evals) = run(ember), run(torch)
    np.testing.assert_allclose(mine, theirs, rtol=1e-10)
    assert evals == their_evals


def test_lbfgs_errors_match_torch() -> None:
    for lib in (torch, ember):
        ps = [lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))]
        with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options"):
            lib.optim.LBFGS([{"params": [ps[0]]}, {"params": [ps[1]]}])
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.LBFGS([w], line_search_fn="backtracking")

        def closure(w=w, opt=opt):
            opt.zero_grad()
            loss = (w**2).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match=r"^only 'strong_wolfe' is supported$"):
            opt.step(closure)


# --------------------------------------------------------------------------- argument errors

OPTIMIZER_ERRORS = [
    ("RMSprop", {"lr": -0.1}), ("RMSprop", {"eps": -1.0}), ("RMSprop", {"momentum": -0.5}),
    ("RMSprop", {"weight_decay": -1.0}), ("RMSprop", {"alpha": -0.1}),
    ("Adagrad", {"lr": -0.1}), ("Adagrad", {"lr_decay": -1.0}),
    ("Adagrad", {"weight_decay": -0.5}), ("Adagrad", {"initial_accumulator_value": -1.0}),
    ("Adagrad", {"eps": -1e-3}),
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"eps": -1.0}),
    ("Adadelta", {"weight_decay": -1.0}),
    ("Adamax", {"lr": -1.0}), ("Adamax", {"eps": -1.0}), ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, 1.0)}), ("Adamax", {"weight_decay": -1.0}),
    ("NAdam", {"lr": -1.0}), ("NAdam", {"eps": -1.0}), ("NAdam", {"betas": (-0.1, 0.9)}),
    ("NAdam", {"betas": (0.9, 1.5)}), ("NAdam", {"weight_decay": -1.0}),
    ("NAdam", {"momentum_decay": -1.0}),
    ("RAdam", {"lr": -1.0}), ("RAdam", {"eps": -1.0}), ("RAdam", {"betas": (1.0, 0.9)}),
    ("RAdam", {"betas": (0.9, -0.1)}), ("RAdam", {"weight_decay": -1.0}),
    ("LBFGS", {"lr": -1.0}),
]  # fmt: skip


@pytest.mark.parametrize(("name", "kwargs"), OPTIMIZER_ERRORS, ids=str)
def test_optimizer_argument_errors_match_torch(name: str, kwargs: dict) -> None:
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **kwargs)
    with pytest.raises(ValueError) as mine:
        getattr(optim, name)([nn.Parameter(ember.ones(1))], **kwargs)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("RMSprop", {"capturable": True}), ("Adagrad", {"fused": True}),
     ("Adadelta", {"differentiable": True}), ("Adamax", {"capturable": True}),
     ("NAdam", {"capturable": True}), ("RAdam", {"differentiable": True})],
)  # fmt: skip
def test_cuda_only_options_are_refused(name: str, kwargs: dict) -> None:
    with pytest.raises(NotImplementedError, match=f"{name}: {next(iter(kwargs))}=True"):
        getattr(optim, name)([nn.Parameter(ember.ones(1))], **kwargs)


# --------------------------------------------------------------------------- schedulers


def _lrs(lib, make, epochs: int = 35) -> list[list[float]]:
    w = lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SGD([{"params": [w]}, {"params": [], "lr": 0.3}], lr=1.0)
    sched = make(lib, opt)
    out = [sched.get_last_lr()]
    for _ in range(epochs):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
    return out


class _Halving:
    """A callable object as ``lr_lambda`` (its attributes are saved in ``state_dict``)."""

    def __init__(self, every: int) -> None:
        self.every = every

    def __call__(self, epoch: int) -> float:
        return 0.5 ** (epoch // self.every)


def _sched(name: str, *args, **kwargs):
    """A schedule of either library by name, for the tables below."""
    return lambda lib, opt: getattr(lib.optim.lr_scheduler, name)(opt, *args, **kwargs)


def _composed(kind: str, parts, *args):
    """``SequentialLR``/``ChainedScheduler`` over ``parts`` (schedule makers)."""

    def make(lib, opt):
        inner = [part(lib, opt) for part in parts]
        if kind == "ChainedScheduler":
            return lib.optim.lr_scheduler.ChainedScheduler(inner, *args)
        return lib.optim.lr_scheduler.SequentialLR(opt, inner, *args)

    return make


SCHEDULES = {
    "step": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
    "cosine": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10),
    "cosine_eta_min": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(
        opt, T_max=7, eta_min=0.01
    ),
    "lambda": _sched("LambdaLR", lambda e: 0.9**e),
    "lambda_per_group": _sched("LambdaLR", [lambda e: 1 / (e + 1), _Halving(4)]),
    "multiplicative": _sched("MultiplicativeLR", lambda e: 0.95 if e % 2 else 0.9),
    "multistep": _sched("MultiStepLR", milestones=[3, 7, 7, 20], gamma=0.5),
    "exponential": _sched("ExponentialLR", gamma=0.9),
    "constant": _sched("ConstantLR", factor=0.25, total_iters=4),
    "linear_up": _sched("LinearLR", start_factor=0.2, end_factor=0.9, total_iters=10),
    "linear_down": _sched("LinearLR", start_factor=1.0, end_factor=0.1, total_iters=30),
    "polynomial": _sched("PolynomialLR", total_iters=20, power=2.0),
    "polynomial_sqrt": _sched("PolynomialLR", total_iters=33, power=0.5),
    "one_cycle": _sched("OneCycleLR", max_lr=[1.0, 0.5], epochs=5, steps_per_epoch=7),
    "one_cycle_linear_three_phase": _sched(
        "OneCycleLR",
        max_lr=2.0,
        total_steps=40,
        anneal_strategy="linear",
        three_phase=True,
        pct_start=0.25,
        div_factor=10.0,
        final_div_factor=100.0,
    ),  # fmt: skip
    "one_cycle_no_momentum": _sched(
        "OneCycleLR", max_lr=0.8, total_steps=36, pct_start=0.5, cycle_momentum=False
    ),
    "warm_restarts": _sched("CosineAnnealingWarmRestarts", T_0=5, T_mult=2, eta_min=0.01),
    "warm_restarts_fixed": _sched("CosineAnnealingWarmRestarts", T_0=7),
    "sequential": _composed(
        "SequentialLR",
        [_sched("LinearLR", start_factor=0.1, total_iters=5), _sched("CosineAnnealingLR", 20)],
        [5],
    ),
    "sequential_three": _composed(
        "SequentialLR",
        [
            _sched("ConstantLR", factor=0.5, total_iters=3),
            _sched("ExponentialLR", 0.9),
            _sched("StepLR", 4, 0.5),
        ],
        [4, 12],
    ),  # fmt: skip
    "chained": _composed(
        "ChainedScheduler", [_sched("ConstantLR", 0.5, 6), _sched("ExponentialLR", 0.95)]
    ),
    "chained_multistep_linear": _composed(
        "ChainedScheduler",
        [_sched("MultiStepLR", [5, 15]), _sched("LinearLR", 0.5, total_iters=8)],
    ),
    "sequential_of_chained": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt,
        [
            _composed(
                "ChainedScheduler",
                [_sched("LinearLR", 0.25, total_iters=4), _sched("ExponentialLR", 0.97)],
            )(lib, opt),
            _sched("StepLR", 5, 0.5)(lib, opt),
        ],
        [8],
    ),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_matches_torch(name: str) -> None:
    """35 steps of each schedule, over two groups, give PyTorch's rates to the last bit."""
    assert _lrs(ember, SCHEDULES[name]) == _lrs(torch, SCHEDULES[name])


def test_scheduler_state_dict_round_trip_and_closed_form() -> None:
    w = nn.Parameter(ember.ones(1))
    opt = optim.SGD([w], lr=1.0)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    for _ in range(3):
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3
    opt2 = optim.SGD([w], lr=1.0)
    sched2 = optim.lr_scheduler.StepLR(opt2, step_size=5)
    sched2.load_state_dict(sd)
    assert sched2.step_size == 2 and sched2.last_epoch == 3
    cos = optim.lr_scheduler.CosineAnnealingLR(optim.SGD([w], lr=1.0), T_max=4)
    cos.step(2)
    assert math.isclose(cos.get_last_lr()[0], 0.5)


def test_scheduler_needs_an_optimizer_and_initial_lr() -> None:
    with pytest.raises(TypeError, match="is not an Optimizer"):
        optim.lr_scheduler.StepLR(object(), 1)
    opt = optim.SGD([nn.Parameter(ember.ones(1))], lr=1.0)
    with pytest.raises(KeyError, match="initial_lr"):
        optim.lr_scheduler.StepLR(opt, 1, last_epoch=3)


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle_cycles_momentum_like_torch(opt_name: str, three_phase: bool) -> None:
    """SGD's ``momentum`` or Adam's ``beta1`` moves inversely to the rate, as PyTorch's."""

    def run(lib):
        w = lib.nn.Parameter(lib.ones(2))
        extra = {"momentum": 0.5} if opt_name == "SGD" else {"betas": (0.7, 0.95)}
        opt = getattr(lib.optim, opt_name)([{"params": [w]}, {"params": []}], lr=0.1, **extra)
        sched = lib.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=[0.4, 0.2], total_steps=31, base_momentum=[0.8, 0.7],
            max_momentum=0.9, three_phase=three_phase, anneal_strategy="cos",
        )  # fmt: skip
        out = []
        for _ in range(31):
            w.grad = lib.ones(2)
            opt.step()
            sched.step()
            momenta = [g["momentum"] if opt_name == "SGD" else g["betas"] for g in opt.param_groups]
            out.append((sched.get_last_lr(), momenta))
        return out, w.detach().numpy()

    (mine, w_mine), (theirs, w_theirs) = run(ember), run(torch)
    assert mine == theirs
    np.testing.assert_allclose(w_mine, w_theirs, rtol=1e-5)


REDUCE_ON_PLATEAU = {
    "min_rel": ({"patience": 2, "factor": 0.5}, None),
    "min_abs_cooldown": (
        {"patience": 1, "factor": 0.3, "threshold": 0.05, "threshold_mode": "abs", "cooldown": 2},
        None,
    ),  # fmt: skip
    "max_rel_min_lr": ({"mode": "max", "patience": 0, "factor": 0.5, "min_lr": [0.05, 0.1]}, -1),
    "max_abs_eps": (
        {
            "mode": "max",
            "threshold_mode": "abs",
            "threshold": 0.01,
            "patience": 1,
            "min_lr": 0.02,
            "eps": 0.05,
        },
        -1,
    ),  # fmt: skip
}
_METRICS = [1.0, 0.9, 0.95, 0.9, 0.89, 0.8999, 0.9, 0.7, 0.71, 0.72, 0.72, 0.69, 0.7, 0.71,
            0.5, 0.5, 0.5, 0.5, 0.6, 0.4, 0.41, 0.41, 0.42, 0.3, 0.31, 0.3, 0.3, 0.29, 0.29,
            0.2, 0.2, 0.21, 0.2, 0.19, 0.2]  # fmt: skip


@pytest.mark.parametrize("name", sorted(REDUCE_ON_PLATEAU))
def test_reduce_on_plateau_matches_torch(name: str) -> None:
    kwargs, sign = REDUCE_ON_PLATEAU[name]

    def run(lib, metric_of=float):
        opt = lib.optim.SGD(
            [{"params": [lib.nn.Parameter(lib.ones(1))]}, {"params": [], "lr": 0.3}], lr=1.0
        )
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        out = []
        for m in _METRICS:
            sched.step(metric_of((sign or 1) * m))
            out.append((sched.get_last_lr(), sched.best, sched.num_bad_epochs,
                        sched.cooldown_counter, sched.last_epoch))  # fmt: skip
        return out

    theirs = run(torch)
    assert run(ember) == theirs
    # a metric may be a 0-dim tensor, of any device
    assert run(ember, lambda m: ember.tensor(m, dtype=ember.float64).to("lazy")) == theirs


def test_warm_restarts_with_fractional_epochs_match_torch() -> None:
    """``step(epoch + i / iters)`` once per batch, mixed with plain ``step()``."""

    def run(lib, T_mult):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.5)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
            opt, T_0=3, T_mult=T_mult, eta_min=0.001
        )
        out = []
        for epoch in range(12):
            for i in range(4):
                sched.step(epoch + i / 4)
                out.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        for _ in range(10):
            sched.step()
            out.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        return out

    for T_mult in (1, 2, 3):
        assert run(ember, T_mult) == run(torch, T_mult)


@pytest.mark.parametrize(
    "name", ["step", "cosine", "multistep", "exponential", "constant", "linear_up",
             "polynomial", "warm_restarts"],
)  # fmt: skip
def test_step_to_an_epoch_uses_the_closed_form_like_torch(name: str) -> None:
    def run(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1.0)
        sched = SCHEDULES[name](lib, opt)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch deprecates step(epoch) for most
            for epoch in [3, 1, 10, 7, 7, 25, 2, 0, 19]:
                sched.step(epoch)
                out.append(sched.get_last_lr())
        return out

    assert run(ember) == run(torch)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_scheduler_state_dict_round_trip_matches_torch(name: str) -> None:
    """Saved after 12 steps (with the optimizer) and loaded into a scheduler made afresh,
    the next 23 rates are those of an uninterrupted run; the saved keys are PyTorch's."""

    def setup(lib):
        w = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([{"params": [w]}, {"params": [], "lr": 0.3}], lr=1.0, momentum=0.9)
        return opt, SCHEDULES[name](lib, opt)

    def advance(opt, sched, n):
        out = []
        for _ in range(n):
            opt.step()
            sched.step()
            out.append((sched.get_last_lr(), [g.get("momentum") for g in opt.param_groups]))
        return out

    opt, sched = setup(ember)
    advance(opt, sched, 12)
    saved_opt, saved = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
    expected = advance(opt, sched, 23)
    opt2, sched2 = setup(ember)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    assert advance(opt2, sched2, 23) == expected
    topt, tsched = setup(torch)
    assert advance(topt, tsched, 35)[12:] == expected

    def keys(sd):
        inner = [keys(s) for s in sd.get("_schedulers", [])]
        return sorted(set(sd) - {"_get_lr_called_within_step"}), inner

    assert keys(saved) == keys(tsched.state_dict())


def test_lambda_state_dict_saves_callable_objects_only() -> None:
    opt = optim.SGD([{"params": [nn.Parameter(ember.ones(1))]}, {"params": []}], lr=1.0)
    halving = _Halving(4)
    sched = optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0, halving])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [None, {"every": 4}]
    halving.every = 1
    sched.load_state_dict(sd)
    assert halving.every == 4 and sd["lr_lambdas"] == [None, {"every": 4}]


def test_reduce_on_plateau_state_dict_round_trip() -> None:
    def setup():
        opt = optim.SGD([nn.Parameter(ember.ones(1))], lr=1.0)
        return opt, optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, cooldown=1)

    opt, sched = setup()
    for m in _METRICS[:10]:
        sched.step(m)
    saved_opt, saved = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
    for m in _METRICS[10:]:
        sched.step(m)
    opt2, sched2 = setup()
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    for m in _METRICS[10:]:
        sched2.step(m)
    assert sched2.get_last_lr() == sched.get_last_lr() and sched2.best == sched.best
    tsched = torch.optim.lr_scheduler.ReduceLROnPlateau(
        torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=1.0), patience=1, cooldown=1
    )
    for m in _METRICS:
        tsched.step(m)
    assert sched.get_last_lr() == tsched.get_last_lr()
    assert sorted(saved) == sorted(tsched.state_dict())


def test_schedulers_drive_an_optimizer_on_the_lazy_device() -> None:
    """A schedule sets Python numbers in the groups; the lazy device reads them as graph
    parameters, so the path is the cpu one."""

    def run(device):
        w = nn.Parameter(ember.tensor(_W0[0].copy()).to(device))
        opt = optim.Adam([w], lr=0.1)
        warm = optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
        one = optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=12)
        sched = optim.lr_scheduler.ChainedScheduler([warm, one])
        for _ in range(10):
            w.grad = ember.tensor(_quadratic_grad(0, w.detach().numpy())).to(device)
            opt.step()
            sched.step()
        return w.detach().to("cpu").numpy()

    np.testing.assert_allclose(run("lazy"), run("cpu"), rtol=1e-6, atol=1e-7)


def _scheduler_error(lib, make) -> Exception:
    opt = lib.optim.SGD([{"params": [lib.nn.Parameter(lib.ones(1))]}, {"params": []}], lr=1.0)
    try:
        make(lib, opt)
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return e
    raise AssertionError("no exception")


SCHEDULER_ERRORS = {
    "constant_factor": _sched("ConstantLR", factor=1.5),
    "linear_start": _sched("LinearLR", start_factor=0.0),
    "linear_end": _sched("LinearLR", end_factor=2.0),
    "lambda_count": _sched("LambdaLR", [lambda e: 1.0]),
    "multiplicative_not_callable": _sched("MultiplicativeLR", 0.5),
    "warm_restarts_T_0": _sched("CosineAnnealingWarmRestarts", T_0=0),
    "warm_restarts_T_mult": _sched("CosineAnnealingWarmRestarts", T_0=2, T_mult=1.5),
    "warm_restarts_eta_min": _sched("CosineAnnealingWarmRestarts", T_0=2, eta_min="0"),
    "one_cycle_no_steps": _sched("OneCycleLR", max_lr=1.0),
    "one_cycle_total_steps": _sched("OneCycleLR", max_lr=1.0, total_steps=0),
    "one_cycle_epochs": _sched("OneCycleLR", max_lr=1.0, epochs=-1, steps_per_epoch=2),
    "one_cycle_steps_per_epoch": _sched("OneCycleLR", max_lr=1.0, epochs=1, steps_per_epoch=0),
    "one_cycle_pct_start": _sched("OneCycleLR", max_lr=1.0, total_steps=5, pct_start=1.5),
    "one_cycle_anneal": _sched("OneCycleLR", max_lr=1.0, total_steps=5, anneal_strategy="x"),
    "one_cycle_max_lr_count": _sched("OneCycleLR", max_lr=[1.0], total_steps=5),
    "plateau_factor": _sched("ReduceLROnPlateau", factor=1.0),
    "plateau_mode": _sched("ReduceLROnPlateau", mode="lowest"),
    "plateau_threshold_mode": _sched("ReduceLROnPlateau", threshold_mode="relative"),
    "plateau_min_lrs": _sched("ReduceLROnPlateau", min_lr=[0.1]),
    "sequential_milestones": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)], milestones=[3]
    ),
    "sequential_empty": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(opt, [], []),
    "sequential_plateau": lambda lib, opt: lib.optim.lr_scheduler.SequentialLR(
        opt, [lib.optim.lr_scheduler.ReduceLROnPlateau(opt)], milestones=[]
    ),
    "chained_empty": lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler([]),
    "chained_not_a_scheduler": lambda lib, opt: lib.optim.lr_scheduler.ChainedScheduler(
        [lib.optim.lr_scheduler.ExponentialLR(opt, 0.9), object()]
    ),
    "not_an_optimizer": lambda lib, opt: lib.optim.lr_scheduler.ExponentialLR(object(), 0.9),
    "one_cycle_not_an_optimizer": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(
        object(), 1.0, total_steps=3
    ),
}


@pytest.mark.parametrize("name", sorted(SCHEDULER_ERRORS))
def test_scheduler_argument_errors_match_torch(name: str) -> None:
    mine = _scheduler_error(ember, SCHEDULER_ERRORS[name])
    theirs = _scheduler_error(torch, SCHEDULER_ERRORS[name])
    assert type(mine) is type(theirs) and str(mine) == str(theirs)


def test_scheduler_errors_while_stepping_match_torch() -> None:
    def one_cycle_past_the_end(lib, opt):
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(4):
            sched.step()

    def no_momentum(lib, opt):
        opt = lib.optim.Adagrad([lib.nn.Parameter(lib.ones(1))])
        lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)

    def negative_epoch(lib, opt):
        lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3).step(-1)

    def other_optimizer(lib, opt):
        other = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1.0)
        lib.optim.lr_scheduler.ChainedScheduler(
            [lib.optim.lr_scheduler.ExponentialLR(other, 0.9)], opt
        )

    for make in (one_cycle_past_the_end, no_momentum, negative_epoch):
        mine, theirs = _scheduler_error(ember, make), _scheduler_error(torch, make)
        assert type(mine) is type(theirs) is ValueError and str(mine) == str(theirs)
    mine, theirs = (
        _scheduler_error(ember, other_optimizer),
        _scheduler_error(torch, other_optimizer),
    )
    assert type(mine) is type(theirs) is ValueError
    assert str(mine).split(" has ")[0] == str(theirs).split(" has ")[0]
