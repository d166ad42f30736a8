"""``stft`` and ``istft`` (issue 18) against PyTorch: values and input gradients of the round
trip under each option, the spellings, and the errors PyTorch raises (the op samples check
each op alone: ``tests/test_ops.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

CASES = [
    {},
    {"hop_length": 3, "win_length": 6},
    {"normalized": True},
    {"length": 35},
    {"length": 45},
    {"onesided": False, "return_complex": True},
    {"window": None},
    {"pad_mode": "constant"},
    {"pad_mode": "replicate", "hop_length": 5},
]


def _round_trip(mod, x: np.ndarray, case: dict) -> tuple[np.ndarray, np.ndarray]:
    k = dict(case)
    win = k.get("win_length", 16)
    w = mod.hann_window(win, dtype=mod.float64) + 0.1 if "window" not in k else k.pop("window")
    pad_mode = k.pop("pad_mode", "reflect")
    xt = mod.tensor(x, requires_grad=True)
    signal = xt.to(mod.complex128) if k.get("return_complex") else xt
    spec = mod.stft(signal, 16, k.get("hop_length"), k.get("win_length"), w, True, pad_mode,
                    k.get("normalized", False), k.get("onesided"), return_complex=True)  # fmt: skip
    y = mod.istft(spec, 16, window=w, **k)
    (y.abs() ** 2 * mod.arange(y.shape[-1])).sum().backward()
    return y.detach().numpy(), xt.grad.numpy()


@requires_torch
@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(c) or "defaults")
def test_round_trip_values_and_gradients_match_torch(case: dict) -> None:
    x = np.random.default_rng(0).standard_normal((2, 40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn once about a missing window
        e, t = _round_trip(ember, x, case), _round_trip(torch, x, case)
    for a, b in zip(e, t, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
    if "length" not in case:
        n = e[0].shape[-1]  # (a hop that does not divide the length drops the last samples)
        np.testing.assert_allclose(e[0], x[:, :n], atol=1e-9)  # the signal is recovered


def test_spellings_and_errors() -> None:
    x = ember.arange(20.0)
    w = ember.hann_window(8)
    a = x.stft(8, window=w, return_complex=True)
    b = ember.stft(x, 8, window=w, center=True, return_complex=True)
    assert a.shape == (5, 11) and ember.equal(a, b)
    assert x.stft(8, window=w, return_complex=False).shape == (5, 11, 2)
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        ember.stft(x, 8, window=w)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        ember.istft(a, 8, window=w * 0)
    with pytest.raises(RuntimeError, match="complex-valued input"):
        ember.istft(a.real, 8, window=w)
    with pytest.raises(RuntimeError, match="onesided output"):
        ember.stft(x.to(ember.complex64), 8, window=w, onesided=True, return_complex=True)
