"""The same model, data and optimizer in ember and in PyTorch train along the same curve.

Each model is built twice from one recipe (ember's and PyTorch's ``nn`` share names), ember's
initial parameters and buffers are copied into PyTorch's through NumPy, and both train for 20
steps on the same fixed batch of the UCI digits (shipped as ``ember/data/digits.npz``). The
losses at every step, the final parameters and the running statistics must agree: to ~1e-10
relative in float64 and ~1e-5 in float32. This checks modules, functional ops, losses, their
gradients and the optimizers together, where one wrong term compounds over the steps.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

pytestmark = requires_torch

STEPS = 20
#: (rtol, atol) per dtype for losses and parameters after STEPS steps
TOLERANCE = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6)}


def _digits(n: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` digits, scaled to [0, 1], with their labels."""
    with (resources.files("ember") / "data" / "digits.npz").open("rb") as f, np.load(f) as npz:
        images, labels = npz["images"][:n], npz["labels"][:n]
    return (images / 16.0).astype(dtype), labels.astype(np.int64)


# --------------------------------------------------------------------------- models


def _mlp(nn: Any) -> Any:
    return nn.Sequential(
        nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 10)
    )


def _cnn(nn: Any) -> Any:
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 10),
    )


def _normed(nn: Any) -> Any:
    # BatchNorm1d first: a parameter feeding a BatchNorm through a per-feature affine path
    # (a bias, or anything behind an always-active ReLU) has a gradient that is zero in exact
    # arithmetic, so rounding noise, which Adam scales up to lr-sized steps in directions
    # that differ between the two libraries
    return nn.Sequential(
        nn.Flatten(),
        nn.BatchNorm1d(64),
        nn.Linear(64, 32),
        nn.LayerNorm(32),
        nn.ReLU(),
        nn.Dropout(p=0.0),
        nn.Linear(32, 10),
    )


def _twins(build: Callable[[Any], Any], dtype: str) -> tuple[Any, Any]:
    """The model in ember (default init) and in PyTorch with ember's initial state."""
    ember.manual_seed(0)
    ours = build(ember.nn).to(getattr(ember, dtype))
    theirs = build(torch.nn).to(getattr(torch, dtype))
    state = ours.state_dict()
    assert state.keys() == theirs.state_dict().keys()
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in state.items()})
    return ours, theirs


def _optimizer(lib: Any, name: str, params: Any) -> Any:
    if name == "sgd":
        return lib.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
    if name == "adam":
        return lib.optim.Adam(params, lr=1e-2, betas=(0.9, 0.99), weight_decay=1e-3)
    if name == "adamw":
        return lib.optim.AdamW(params, lr=1e-2, weight_decay=0.05, amsgrad=True)
    raise ValueError(name)


def _tensor(lib: Any, arr: np.ndarray) -> Any:
    return lib.from_numpy(arr.copy())


def _train(lib: Any, model: Any, opt_name: str, x: np.ndarray, y: np.ndarray) -> list[float]:
    """STEPS full-batch steps of cross-entropy training; the loss before each step."""
    opt = _optimizer(lib, opt_name, model.parameters())
    loss_fn = lib.nn.CrossEntropyLoss()
    xs, ys = _tensor(lib, x), _tensor(lib, y)
    model.train()
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _assert_same_state(ours: Any, theirs: Any, dtype: str) -> None:
    rtol, atol = TOLERANCE[dtype]
    expected = theirs.state_dict()
    for name, value in ours.state_dict().items():
        np.testing.assert_allclose(
            value.numpy(), expected[name].detach().numpy(), rtol=rtol, atol=atol, err_msg=name
        )


CASES = [
    ("mlp", _mlp, "sgd", "float64"),
    ("mlp", _mlp, "adam", "float64"),
    ("mlp", _mlp, "adamw", "float64"),
    ("mlp", _mlp, "sgd", "float32"),
    ("mlp", _mlp, "adam", "float32"),
    ("cnn", _cnn, "sgd", "float64"),
    ("cnn", _cnn, "sgd", "float32"),
    ("normed", _normed, "sgd", "float64"),
    ("normed", _normed, "adam", "float64"),
    ("normed", _normed, "adam", "float32"),
]


@pytest.mark.parametrize(
    ("build", "opt_name", "dtype"),
    [c[1:] for c in CASES],
    ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in CASES],
)
def test_training_matches_torch(build: Callable[[Any], Any], opt_name: str, dtype: str) -> None:
    """Twenty steps give PyTorch's loss curve and final parameters (and BatchNorm stats)."""
    x, y = _digits(48, dtype)
    if build is _cnn:
        x = x[:, None]  # (N, 1, 8, 8)
    ours, theirs = _twins(build, dtype)
    our_losses = _train(ember, ours, opt_name, x, y)
    their_losses = _train(torch, theirs, opt_name, x, y)
    rtol, atol = TOLERANCE[dtype]
    np.testing.assert_allclose(our_losses, their_losses, rtol=rtol, atol=atol)
    assert their_losses[-1] < their_losses[0]  # it did train
    _assert_same_state(ours, theirs, dtype)
    ours.eval()  # BatchNorm now normalizes with the running statistics
    theirs.eval()
    with ember.no_grad():
        our_out = ours(_tensor(ember, x)).numpy()
    with torch.no_grad():
        their_out = theirs(_tensor(torch, x)).numpy()
    np.testing.assert_allclose(our_out, their_out, rtol=rtol, atol=10 * atol)


def test_dataloader_epoch_matches_torch() -> None:
    """An epoch of mini-batches from a DataLoader (no shuffle, ragged last batch) trains the
    same as PyTorch's: batching composes with training."""
    x, y = _digits(100, "float64")
    ours, theirs = _twins(_mlp, "float64")
    curves = []
    for lib, model in ((ember, ours), (torch, theirs)):
        data = lib.utils.data.TensorDataset(_tensor(lib, x), _tensor(lib, y))
        loader = lib.utils.data.DataLoader(data, batch_size=16, shuffle=False)
        opt = _optimizer(lib, "sgd", model.parameters())
        loss_fn = lib.nn.CrossEntropyLoss()
        losses, sizes = [], []
        for _ in range(2):  # two epochs
            for xb, yb in loader:
                opt.zero_grad()
                loss = loss_fn(model(xb), yb)
                loss.backward()
                opt.step()
                losses.append(loss.item())
                sizes.append(len(yb))
        curves.append((losses, sizes))
    (our_losses, our_sizes), (their_losses, their_sizes) = curves
    assert our_sizes == their_sizes == [16] * 6 + [4] + [16] * 6 + [4]
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-10, atol=1e-12)
    _assert_same_state(ours, theirs, "float64")
