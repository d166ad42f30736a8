"""ember.nn layers against torch.nn layers with copied weights: outputs, input and parameter
gradients, running statistics, repr strings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.autograd
from ember import nn

from .conftest import requires_torch, torch

pytestmark = [
    requires_torch,
    pytest.mark.skipif(not hasattr(ember, "no_grad"), reason="autograd not wired into ember yet"),
]
RNG = np.random.default_rng(0)


def _copy_params(e: Any, t: Any) -> None:
    tp = dict(t.named_parameters())
    for name, p in e.named_parameters():
        p._edata[...] = tp[name].detach().double().numpy()


def check_layer(e: Any, t: Any, *inputs: np.ndarray, atol: float = 1e-7) -> None:
    t = t.double()
    e = e.double() if hasattr(e, "double") else e
    _copy_params(e, t)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert repr(e) == repr(t)
    ei = [
        ember.from_numpy(a.copy()).requires_grad_() if a.dtype.kind == "f" else ember.from_numpy(a)
        for a in inputs
    ]
    ti = [
        torch.from_numpy(a.copy()).requires_grad_() if a.dtype.kind == "f" else torch.from_numpy(a)
        for a in inputs
    ]
    eo, to = e(*ei), t(*ti)
    eo, to = (eo[0], to[0]) if isinstance(eo, tuple) else (eo, to)
    np.testing.assert_allclose(np.asarray(eo._edata), to.detach().numpy(), atol=atol, rtol=1e-6)
    cot = RNG.standard_normal(tuple(to.shape))
    e_leaves = [x for x in ei if x.requires_grad] + list(e.parameters())
    t_leaves = [x for x in ti if x.requires_grad] + list(t.parameters())
    eg = ember.autograd.grad([eo], e_leaves, [ember.from_numpy(cot)], allow_unused=True)
    tg = torch.autograd.grad([to], t_leaves, [torch.from_numpy(cot)], allow_unused=True)
    for i, (a, b) in enumerate(zip(eg, tg, strict=True)):
        if b is not None:
            np.testing.assert_allclose(
                a.numpy(), b.numpy(), atol=atol, rtol=1e-6, err_msg=f"grad {i}"
            )


def _x(*shape: int) -> np.ndarray:
    return RNG.uniform(-2, 2, shape)


@pytest.mark.parametrize(
    "name, args, kwargs, shape",
    [
        ("Linear", (4, 3), {}, (5, 4)),
        ("Linear", (4, 3), {"bias": False}, (2, 5, 4)),
        ("Conv2d", (3, 4, 3), {"padding": 1, "stride": 2}, (2, 3, 7, 6)),
        ("Conv2d", (4, 6, (3, 2)), {"groups": 2, "bias": False, "dilation": 2}, (2, 4, 8, 7)),
        ("MaxPool2d", (2,), {}, (2, 3, 6, 6)),
        ("AvgPool2d", (3,), {"stride": 2, "padding": 1}, (2, 3, 7, 6)),
        ("ReLU", (), {}, (3, 4)),
        ("GELU", (), {}, (3, 4)),
        ("SiLU", (), {}, (3, 4)),
        ("Tanh", (), {}, (3, 4)),
        ("Sigmoid", (), {}, (3, 4)),
        ("Softmax", (), {"dim": 1}, (3, 4)),
        ("LayerNorm", ((3, 4),), {}, (2, 3, 4)),
        ("BatchNorm1d", (3,), {}, (5, 3)),
        ("BatchNorm2d", (3,), {"momentum": 0.3}, (4, 3, 2, 2)),
        ("Flatten", (), {}, (2, 3, 4)),
        ("Identity", (), {}, (2, 3)),
        ("Dropout", (0.5,), {}, (2, 3)),
    ],
)
def test_layer_matches_torch(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], shape: tuple[int, ...]
) -> None:
    e, t = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    if name == "Dropout":
        e.eval()
        t.eval()
    check_layer(e, t, _x(*shape))


def test_embedding() -> None:
    e, t = nn.Embedding(6, 3, padding_idx=1), torch.nn.Embedding(6, 3, padding_idx=1)
    check_layer(e, t, np.array([[0, 1, 5], [1, 2, 2]], np.int64))


def test_init_distributions() -> None:
    lin = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives the same bound as the bias
    w = np.asarray(lin.weight._edata)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(np.asarray(lin.bias._edata)).max() <= bound


def test_batchnorm_running_stats_and_eval() -> None:
    e, t = nn.BatchNorm2d(3, momentum=0.2).double(), torch.nn.BatchNorm2d(3, momentum=0.2).double()
    for _ in range(3):
        x = _x(4, 3, 2, 2)
        e(ember.from_numpy(x))
        t(torch.from_numpy(x))
    np.testing.assert_allclose(e.running_mean.numpy(), t.running_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(e.running_var.numpy(), t.running_var.numpy(), rtol=1e-6)
    assert int(e.num_batches_tracked.item()) == 3
    e.eval()
    t.eval()
    x = _x(4, 3, 2, 2)
    np.testing.assert_allclose(
        np.asarray(e(ember.from_numpy(x))._edata),
        t(torch.from_numpy(x)).detach().numpy(),
        rtol=1e-6,
    )


@pytest.mark.parametrize(
    "kwargs", [{}, {"ignore_index": 1}, {"label_smoothing": 0.2}, {"reduction": "sum"}]
)
def test_cross_entropy_loss(kwargs: dict[str, Any]) -> None:
    x, y = _x(5, 4), np.array([0, 3, 1, 1, 2], np.int64)
    e = nn.CrossEntropyLoss(**kwargs)(ember.from_numpy(x), ember.from_numpy(y))
    t = torch.nn.CrossEntropyLoss(**kwargs)(torch.from_numpy(x), torch.from_numpy(y))
    np.testing.assert_allclose(np.asarray(e._edata), t.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention(batch_first: bool) -> None:
    e = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    t = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    shape = (3, 4, 8) if batch_first else (4, 3, 8)
    check_layer(e, t, _x(*shape), _x(*shape), _x(*shape), atol=1e-6)
