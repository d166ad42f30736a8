"""Training-shaped runs of the nn modules against PyTorch eager, one thread each: an LSTM's
forward and backward, and a training step of a small transformer encoder, from the same
weights and data in both libraries (registered in ``benchmarks/run.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, Thunk, torch


def _copy_weights(e: Any, t: Any) -> None:
    state = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()}
    e.load_state_dict(state)


def _lstm_pair(batch: int, steps: int, size: int) -> tuple[Thunk, Thunk | None]:
    """LSTM(size, size) on (steps, batch, size): forward, sum, backward into input and weights."""
    x = np.random.default_rng(0).standard_normal((steps, batch, size)).astype(np.float32)
    ember.manual_seed(0)
    em = ember.nn.LSTM(size, size)
    ex = ember.from_numpy(x.copy()).requires_grad_()

    def e_step() -> None:
        em.zero_grad()
        ex.grad = None
        em(ex)[0].sum().backward()

    if torch is None:
        return e_step, None
    tm = torch.nn.LSTM(size, size)
    _copy_weights(em, tm)
    tx = torch.from_numpy(x.copy()).requires_grad_()

    def t_step() -> None:
        tm.zero_grad()
        tx.grad = None
        tm(tx)[0].sum().backward()

    return e_step, t_step


def _encoder_pair(
    batch: int, seq: int, d_model: int, heads: int, ff: int
) -> tuple[Thunk, Thunk | None]:
    """One SGD step of a 2-layer TransformerEncoder with a linear head and cross entropy."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, seq, d_model)).astype(np.float32)
    y = rng.integers(0, 10, batch)

    def build(lib: Any) -> Any:
        layer = lib.nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True)
        return lib.nn.Sequential(lib.nn.TransformerEncoder(layer, 2), lib.nn.Flatten(0, 0),
                                 lib.nn.Linear(d_model, 10))  # fmt: skip

    def stepper(lib: Any, model: Any) -> Thunk:
        opt = lib.optim.SGD(model.parameters(), lr=0.01)
        xs, ys = lib.from_numpy(x.copy()), lib.from_numpy(y.copy())
        loss_fn = lib.nn.CrossEntropyLoss()

        def step() -> None:
            opt.zero_grad()
            out = model[0](xs).mean(1)
            loss_fn(model[2](out), ys).backward()
            opt.step()

        return step

    ember.manual_seed(0)
    em = build(ember)
    if torch is None:
        return stepper(ember, em), None
    tm = build(torch)
    _copy_weights(em, tm)
    return stepper(ember, em), stepper(torch, tm)


def cases(quick: bool) -> list[Case]:
    """The nn model cases: goals relative to PyTorch eager."""
    lstm = _lstm_pair(32, 10 if quick else 50, 128)
    enc = _encoder_pair(16, 16 if quick else 64, 128, 4, 512)
    return [
        Case("nn", "lstm b32 fwd+bwd", lstm[0], None, lstm[1], ("torch", 1.5)),
        Case("nn", "encoder2 step", enc[0], None, enc[1], ("torch", 1.5)),
    ]
