"""Activation and loss modules and functions of ember.nn against torch.nn, from the same
weights and inputs: outputs, input and parameter gradients, reprs, in-place forms, errors,
and a few training steps of small models built from them.

(Each op's own values, edges, dtypes and gradients are checked by tests/test_ops.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from .conftest import requires_torch, torch
from .nn_compare import compare_call, compare_module, to_pair, train_both

pytestmark = requires_torch
RNG = np.random.default_rng(0)


def _x(*shape: int, low: float = -4.0, high: float = 4.0) -> np.ndarray:
    return RNG.uniform(low, high, shape)


# --------------------------------------------------------------------------- activations

ACTIVATIONS = [
    ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2,), {"inplace": True}),
    ("ELU", (), {}),
    ("ELU", (0.5,), {"inplace": True}),
    ("SELU", (), {}),
    ("SELU", (), {"inplace": True}),
    ("CELU", (1.5,), {}),
    ("CELU", (), {"inplace": True}),
    ("Softplus", (), {}),
    ("Softplus", (2.0, 3.0), {}),
    ("Hardtanh", (), {}),
    ("Hardtanh", (-2.0, 0.5), {"inplace": True}),
    ("ReLU6", (), {}),
    ("ReLU6", (), {"inplace": True}),
    ("Hardswish", (), {}),
    ("Hardswish", (), {"inplace": True}),
    ("Hardsigmoid", (), {}),
    ("Hardsigmoid", (), {"inplace": True}),
    ("Mish", (), {}),
    ("Mish", (), {"inplace": True}),
    ("LogSigmoid", (), {}),
    ("LogSoftmax", (), {"dim": 1}),
    ("Softmin", (), {"dim": -1}),
    ("Softsign", (), {}),
    ("Tanhshrink", (), {}),
    ("Softshrink", (), {}),
    ("Softshrink", (1.0,), {}),
    ("Hardshrink", (), {}),
    ("Hardshrink", (1.5,), {}),
    ("Threshold", (0.5, -2.0), {}),
    ("Threshold", (0.5, -2.0), {"inplace": True}),
    ("GLU", (), {}),
    ("GLU", (0,), {}),
    ("PReLU", (), {}),
    ("PReLU", (3,), {"init": 0.1}),
]


@pytest.mark.parametrize("name, args, kwargs", ACTIVATIONS, ids=lambda v: str(v))
def test_activation_module_matches_torch(name: str, args: tuple[Any, ...], kwargs: Any) -> None:
    e, t = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(e) == repr(t)
    x = _x(4, 3, 2)
    if kwargs.get("inplace"):  # an in-place module writes its input: give it a non-leaf
        ex, tx = to_pair(x)
        compare_call(lambda a: e(a * 1.0), lambda a: t(a * 1.0), (ex,), (tx,))
        ey, ty = ember.from_numpy(x.copy()), torch.from_numpy(x.copy())
        assert e(ey) is ey and t(ty) is ty
        np.testing.assert_allclose(ey.numpy(), ty.numpy(), rtol=1e-6, atol=1e-7)
    else:
        compare_module(e.double(), t.double(), x)
        e.float()
        t.float()
        compare_module(e, t, x.astype(np.float32))


@pytest.mark.parametrize(
    "name, args",
    [
        ("leaky_relu", (0.3,)),
        ("elu", (0.7,)),
        ("selu", ()),
        ("celu", (0.5,)),
        ("softplus", (1.5, 4.0)),
        ("hardtanh", (-0.5, 2.0)),
        ("relu6", ()),
        ("hardswish", ()),
        ("hardsigmoid", ()),
        ("mish", ()),
        ("logsigmoid", ()),
        ("softshrink", (0.7,)),
        ("hardshrink", (0.7,)),
        ("threshold", (1.0, 5.0)),
        ("glu", (-1,)),
        ("softsign", ()),
        ("tanhshrink", ()),
        ("softmin", (0,)),
    ],
)
def test_functional_activation_matches_torch(name: str, args: tuple[Any, ...]) -> None:
    ex, tx = to_pair(_x(3, 4))
    compare_call(
        lambda a: getattr(F, name)(a, *args),
        lambda a: getattr(torch.nn.functional, name)(a, *args),
        (ex,),
        (tx,),
    )


@pytest.mark.parametrize(
    "name", ["elu_", "leaky_relu_", "hardtanh_", "celu_", "selu_", "threshold_"]
)
def test_functional_in_place_names(name: str) -> None:
    x = _x(3, 4)
    args = (0.5, 2.0) if name == "threshold_" else ()
    ex, tx = ember.from_numpy(x.copy()), torch.from_numpy(x.copy())
    assert getattr(F, name)(ex, *args) is ex
    getattr(torch.nn.functional, name)(tx, *args)
    np.testing.assert_allclose(ex.numpy(), tx.numpy(), rtol=1e-6, atol=1e-7)


def test_prelu_per_channel_gradient_reaches_the_weight() -> None:
    e, t = ember.nn.PReLU(3).double(), torch.nn.PReLU(3).double()
    compare_module(e, t, _x(2, 3, 5, 4))
    compare_module(e, t, _x(4, 3))


def test_activation_errors_match_torch() -> None:
    for lib in (ember, torch):
        with pytest.raises(ValueError):
            lib.nn.functional.hardtanh(lib.ones(3), 2.0, 1.0)
        with pytest.raises(AssertionError):
            lib.nn.Hardtanh(1.0, 0.0)
        with pytest.raises(RuntimeError):
            lib.nn.functional.glu(lib.ones(()))
        with pytest.raises(RuntimeError):
            lib.nn.functional.glu(lib.ones(3))
        with pytest.raises(RuntimeError):
            lib.nn.PReLU(3)(lib.ones(2, 4))
        with pytest.raises(NotImplementedError):
            lib.nn.functional.leaky_relu(lib.ones(3, dtype=lib.int64))


def test_in_place_activation_on_a_leaf_that_requires_grad_raises() -> None:
    for lib in (ember, torch):
        with pytest.raises(RuntimeError):
            lib.nn.functional.elu(lib.ones(3, requires_grad=True), inplace=True)


def test_double_backward_through_activations() -> None:
    for name in ("elu", "softplus", "logsigmoid", "glu", "mish", "hardswish", "celu"):
        ex, tx = to_pair(_x(3, 4))
        eg = ember.autograd.grad(getattr(F, name)(ex).sum(), ex, create_graph=True)[0]
        tg = torch.autograd.grad(
            getattr(torch.nn.functional, name)(tx).sum(), tx, create_graph=True
        )[0]
        e2 = ember.autograd.grad((eg * eg).sum(), ex)[0]
        t2 = torch.autograd.grad((tg * tg).sum(), tx)[0]
        np.testing.assert_allclose(e2.numpy(), t2.numpy(), rtol=1e-6, atol=1e-8, err_msg=name)


def test_training_an_mlp_of_activations_matches_torch() -> None:
    def build(lib: Any) -> Any:
        nn = lib.nn
        lib.manual_seed(0)
        return nn.Sequential(
            nn.Linear(6, 8), nn.PReLU(8), nn.Linear(8, 8), nn.ELU(), nn.Linear(8, 8),
            nn.Mish(), nn.Linear(8, 8), nn.Hardswish(), nn.Linear(8, 8), nn.LeakyReLU(0.1),
            nn.Linear(8, 8), nn.Softplus(), nn.Linear(8, 6), nn.GLU(), nn.LogSoftmax(1),
        )  # fmt: skip

    e, t = build(ember).double(), build(torch).double()
    batches = [(_x(5, 6), RNG.integers(0, 3, 5)) for _ in range(4)]
    train_both(e, t, batches, lambda lib, m, b: lib.nn.functional.nll_loss(m(b[0]), b[1]))
