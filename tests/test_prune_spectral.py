"""``nn.utils.prune`` and ``parametrizations.spectral_norm`` against PyTorch: the same masks,
state-dict keys, forward values and gradients from the same weights."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch
from tests.nn_compare import compare_module, load_from_torch

pytestmark = requires_torch
if torch is not None:  # PyTorch does not import its prune module with torch.nn.utils
    import torch.nn.utils.prune  # noqa: F401

_RNG = np.random.default_rng(0)
_SIGNS = _RNG.choice([-1, 1], 24)
_W = ((_RNG.permutation(24) + 1) * _SIGNS).reshape(4, 6).astype(np.float32) / 4  # distinct |w|


def _linear(lib: Any) -> Any:
    m = lib.nn.Linear(6, 4)
    with lib.no_grad():
        m.weight.copy_(lib.from_numpy(_W.copy()))
        m.bias.copy_(lib.arange(4.0))
    return m


def _both(prune_calls: Any) -> tuple[Any, Any]:
    e, t = _linear(ember), _linear(torch)
    prune_calls(ember, e)
    prune_calls(torch, t)
    return e, t


@pytest.mark.parametrize(
    "calls",
    [lambda lib, m: lib.nn.utils.prune.l1_unstructured(m, "weight", amount=0.3),
     lambda lib, m: lib.nn.utils.prune.l1_unstructured(m, "weight", amount=5),
     lambda lib, m: lib.nn.utils.prune.ln_structured(m, "weight", amount=2, n=2, dim=0),
     lambda lib, m: lib.nn.utils.prune.ln_structured(m, "weight", amount=0.5, n=1, dim=1),
     lambda lib, m: (lib.nn.utils.prune.l1_unstructured(m, "weight", amount=4),
                     lib.nn.utils.prune.l1_unstructured(m, "weight", amount=4)),
     lambda lib, m: (lib.nn.utils.prune.ln_structured(m, "weight", amount=1, n=2, dim=0),
                     lib.nn.utils.prune.l1_unstructured(m, "weight", amount=3),
                     lib.nn.utils.prune.ln_structured(m, "weight", amount=1, n=1, dim=0)),
     lambda lib, m: lib.nn.utils.prune.custom_from_mask(
         m, "bias", mask=lib.tensor([1.0, 0.0, 1.0, 0.0])),
     lambda lib, m: lib.nn.utils.prune.identity(m, "weight")],
    ids=["l1 fraction", "l1 count", "ln rows", "ln columns", "l1 twice", "mixed three",
         "custom mask", "identity"],
)  # fmt: skip
def test_masks_state_and_forward_match_torch(calls: Any) -> None:
    e, t = _both(calls)
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    for name, buf in t.named_buffers():
        np.testing.assert_array_equal(dict(e.named_buffers())[name].numpy(), buf.numpy())
    x = np.random.default_rng(1).standard_normal((3, 6)).astype(np.float32)
    compare_module(e, t, x)  # forward, and gradients reach weight_orig through the mask
    assert ember.nn.utils.prune.is_pruned(e) and torch.nn.utils.prune.is_pruned(t)


def test_remove_makes_pruning_permanent_as_torch() -> None:
    e, t = _both(lambda lib, m: lib.nn.utils.prune.l1_unstructured(m, "weight", amount=10))
    ember.nn.utils.prune.remove(e, "weight")
    torch.nn.utils.prune.remove(t, "weight")
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert isinstance(e.weight, ember.nn.Parameter)
    np.testing.assert_array_equal(e.weight.detach().numpy(), t.weight.detach().numpy())
    assert not ember.nn.utils.prune.is_pruned(e)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        ember.nn.utils.prune.remove(e, "weight")


def test_global_unstructured_matches_torch() -> None:
    def run(lib: Any) -> list[Any]:
        a, b = _linear(lib), lib.nn.Linear(4, 3)
        with lib.no_grad():
            b.weight.copy_(
                lib.from_numpy(np.linspace(-3.3, 2.9, 12, dtype=np.float32).reshape(3, 4))
            )  # noqa: E501
        lib.nn.utils.prune.global_unstructured(
            [(a, "weight"), (b, "weight")], lib.nn.utils.prune.L1Unstructured, amount=0.4
        )
        return [a.weight_mask.numpy().copy(), b.weight_mask.numpy().copy()]

    for x, y in zip(run(ember), run(torch), strict=True):
        np.testing.assert_array_equal(x, y)


def test_random_pruning_counts() -> None:
    ember.manual_seed(0)
    m = ember.nn.utils.prune.random_unstructured(_linear(ember), "weight", amount=0.25)
    assert int((m.weight_mask == 0).sum()) == 6
    m = ember.nn.utils.prune.random_structured(_linear(ember), "weight", amount=2, dim=1)
    zero_cols = (m.weight_mask.sum(0) == 0).sum()
    assert int(zero_cols) == 2 and set(np.unique(m.weight_mask.numpy())) == {0.0, 1.0}


def test_amount_errors_match_torch() -> None:
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="Invalid type for amount"):
            lib.nn.utils.prune.l1_unstructured(_linear(lib), "weight", amount="x")
        with pytest.raises(ValueError, match="should either be a float in the range"):
            lib.nn.utils.prune.l1_unstructured(_linear(lib), "weight", amount=1.5)
        with pytest.raises(ValueError, match="should be smaller than the number of parameters"):
            lib.nn.utils.prune.l1_unstructured(_linear(lib), "weight", amount=100)


@pytest.mark.parametrize(
    "make", [lambda lib: lib.nn.Linear(5, 4), lambda lib: lib.nn.Conv2d(3, 4, 2),
             lambda lib: lib.nn.ConvTranspose2d(3, 4, 2)],
    ids=["linear", "conv", "conv_transpose"],
)  # fmt: skip
def test_spectral_norm_matches_torch(make: Any) -> None:
    t = torch.nn.utils.parametrizations.spectral_norm(make(torch))
    e = ember.nn.utils.parametrizations.spectral_norm(make(ember))
    assert list(e.state_dict()) == list(t.state_dict())
    load_from_torch(e, t)  # the same weight and power-iteration vectors u, v
    shape = (2, 5) if isinstance(t, torch.nn.Linear) else (2, 3, 5, 5)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    for mode in ("train", "eval"):  # training runs one power iteration per forward
        getattr(e, mode)()
        getattr(t, mode)()
        compare_module(e, t, x, atol=1e-5, rtol=1e-4)
        u_e = e.parametrizations.weight[0]._u.numpy()
        np.testing.assert_allclose(u_e, t.parametrizations.weight[0]._u.numpy(), atol=1e-5)


def test_spectral_norm_bounds_the_largest_singular_value() -> None:
    ember.manual_seed(0)
    m = ember.nn.utils.parametrizations.spectral_norm(ember.nn.Linear(8, 6), n_power_iterations=3)
    for _ in range(20):
        m(ember.ones(1, 8))
    top = np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0]
    assert abs(top - 1.0) < 1e-3


@pytest.mark.parametrize(
    ("shape", "orthogonal_map"),
    [((3, 3), None), ((5, 3), None), ((3, 5), None), ((4, 4), "cayley"), ((5, 3), "cayley"),
     ((3, 5), "matrix_exp"), ((4, 4), "householder")],
)  # fmt: skip
def test_orthogonal_matches_torch(shape: tuple[int, int], orthogonal_map: str | None) -> None:
    t = torch.nn.utils.parametrizations.orthogonal(
        torch.nn.Linear(shape[1], shape[0]), orthogonal_map=orthogonal_map
    )
    e = ember.nn.utils.parametrizations.orthogonal(
        ember.nn.Linear(shape[1], shape[0]), orthogonal_map=orthogonal_map
    )
    assert list(e.state_dict()) == list(t.state_dict())
    w = e.weight.detach().numpy()  # orthogonal from the start (the original weight's Q)
    small = min(shape)
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    with torch.no_grad():  # move off the starting point, the same way in both
        step = np.random.default_rng(3).standard_normal(shape).astype(np.float32) * 0.3
        t.parametrizations.weight.original.add_(torch.from_numpy(step))
    load_from_torch(e, t)
    x = np.random.default_rng(4).standard_normal((2, shape[1])).astype(np.float32)
    compare_module(e, t, x, atol=1e-5, rtol=1e-4)


def test_orthogonal_errors_match_torch() -> None:
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr")
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "bias")
