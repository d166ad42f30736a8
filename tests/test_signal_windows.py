"""``ember.signal.windows`` against ``torch.signal.windows``: every window, lengths 0 to 9,
symmetric and periodic, float32 and float64, the options, ``requires_grad``, and the
refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch

pytestmark = requires_torch

WINDOWS: list[tuple[str, dict[str, Any]]] = [
    ("hann", {}), ("hamming", {}), ("blackman", {}), ("nuttall", {}), ("bartlett", {}),
    ("cosine", {}), ("gaussian", {"std": 1.5}), ("exponential", {"tau": 2.0}),
    ("kaiser", {"beta": 8.0}), ("kaiser", {}), ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
    ("general_hamming", {"alpha": 0.6}),
]  # fmt: skip


@pytest.mark.parametrize(("name", "kw"), WINDOWS, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_match_torch(name: str, kw: dict[str, Any], dtype: str) -> None:
    for m in range(10):
        for sym in (True, False):
            got = getattr(ember.signal.windows, name)(m, sym=sym, dtype=getattr(ember, dtype), **kw)
            want = getattr(torch.signal.windows, name)(
                m, sym=sym, dtype=getattr(torch, dtype), **kw
            )
            assert got.dtype.name == dtype and tuple(got.shape) == tuple(want.shape)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_exponential_center_requires_grad_and_default_dtype() -> None:
    got = ember.signal.windows.exponential(6, center=1.0, sym=False)
    want = torch.signal.windows.exponential(6, center=1.0, sym=False)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    w = ember.signal.windows.hann(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.dtype is ember.float32


@pytest.mark.parametrize(
    "call",
    [
        lambda w, lib: w.hann(-1),
        lambda w, lib: w.gaussian(3, std=0.0),
        lambda w, lib: w.exponential(3, center=1.0),
        lambda w, lib: w.kaiser(3, beta=-1.0),
        lambda w, lib: w.hann(3, dtype=lib.int64),
    ],
)
def test_refusals_as_torch(call: Any) -> None:
    for lib in (ember, torch):
        with pytest.raises(ValueError):
            call(lib.signal.windows, lib)
