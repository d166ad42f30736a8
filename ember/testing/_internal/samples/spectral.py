"""Sample inputs for ``stft`` and ``istft`` (NOTE [stft] in ``ember/ops/native/spectral.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import SampleInput, samples

S = SampleInput
_DT = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)
_TOL = {"atol": 1e-4, "rtol": 1e-4}


def _window(n: int, dtype: Any) -> Any:
    real = dtype.to_real() if dtype.is_complex else dtype
    return ember.hann_window(n, dtype=real) + 0.1  # (no zeros: istft can invert it)


@samples("stft.default", dtypes=_DT, **_TOL)
def stft_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    w = _window(8, dtype)
    yield S(make((20,)), 8, window=w, return_complex=True)
    yield S(make((2, 20)), 8, 3, 6, _window(6, dtype), return_complex=True, name="hop, win")
    yield S(make((20,), noncontiguous=True), 8, window=w, normalized=True, return_complex=True)
    yield S(make((20,)), 8, window=w, onesided=False, return_complex=True, name="two-sided")
    yield S(make((2, 20)), 8, window=w, return_complex=False, name="real view")
    yield S(make((8,)), 8, window=w, return_complex=True, name="one frame")
    yield S(make((2, 2, 20)), 8, window=w, return_complex=True, name="3-D raises")
    yield S(make((6,)), 8, window=w, return_complex=True, name="n_fft past the end raises")
    yield S(make((20,)), 8, window=_window(6, dtype), return_complex=True, name="window raises")
    yield S(make((20,)), 8, 0, window=w, return_complex=True, name="hop 0 raises")


@samples("stft.center", dtypes=_DT, **_TOL)
def stft_center_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    w = _window(8, dtype)
    yield S(make((20,)), 8, window=w, return_complex=True)
    yield S(make((2, 20)), 8, 2, window=w, pad_mode="constant", return_complex=True)
    yield S(make((2, 20)), 8, window=w, center=False, return_complex=True)
    yield S(make((20,)), 8, window=w, pad_mode="replicate", normalized=True, return_complex=True)


@samples("istft.default", dtypes=(dtypes.complex64, dtypes.complex128), meta_errors=False, **_TOL)
def istft_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    w = _window(8, dtype)
    yield S(make((5, 6)), 8, window=w, name="one-sided")
    yield S(make((2, 5, 6)), 8, 2, window=w, normalized=True, name="batched")
    yield S(make((5, 6), noncontiguous=True), 8, window=w, length=18, name="length")
    yield S(make((5, 6)), 8, window=w, length=30, name="length past the end")
    yield S(make((8, 6)), 8, window=w, return_complex=True, name="two-sided complex")
    yield S(make((8, 6)), 8, window=w, center=False, name="two-sided, not centred")
    yield S(make((5, 6)), 8, 4, 6, _window(6, dtype), name="short window")
    yield S(make((6, 6)), 8, window=w, name="frequencies raise")
    yield S(make((5, 6)), 8, window=w * 0, name="zero window raises")
