"""Sample inputs for the fft ops (see ember/testing/_internal/opinfo.py): every norm, ``n`` and
``s`` that cut and pad, odd and even lengths, batches, non-contiguous inputs, real, complex
and integer inputs, and the errors PyTorch raises."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import EDGE_DIFFERENCES, SampleInput, samples

FFT_DTYPES = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)
REAL = (dtypes.float32, dtypes.float64)
TOL = {"atol": 1e-4, "rtol": 1e-4}
NORMS = (None, "backward", "ortho", "forward")

_NONFINITE = (
    frozenset({"special"}),
    "an inf or NaN input spreads to outputs through the transform's butterflies: which come out "
    "inf and which NaN is MKL's order of operations in PyTorch, pocketfft's here",
)
EDGE_DIFFERENCES.update({
    name: _NONFINITE
    for name in ("_fft_c2c", "_fft_c2r", "fft_fft", "fft_ifft", "fft_rfft", "fft_irfft",
                 "fft_hfft", "fft_ihfft", "fft_fft2", "fft_ifft2", "fft_rfft2", "fft_irfft2",
                 "fft_fftn", "fft_ifftn", "fft_rfftn", "fft_irfftn")
})  # fmt: skip
EDGE_DIFFERENCES["_fft_r2c"] = (
    frozenset({"special", "1-D dim"}),
    _NONFINITE[1] + "; and PyTorch's kernel asserts on a negative dim, which its callers never "
    "pass (they wrap dims first)",
)


@samples("_fft_c2c.default", dtypes=(dtypes.complex64, dtypes.complex128), **TOL)
def c2c_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for norm in (0, 1, 2):
        yield SampleInput(make((3, 8)), [1], norm, True)
        yield SampleInput(make((3, 7)), [0, 1], norm, False)
    yield SampleInput(make((2, 3, 5), noncontiguous=True), [2, 0], 0, True)
    yield SampleInput(make((4,)), [], 0, True, name="no dims")
    yield SampleInput(make((4,), dtype=dtypes.float32), [0], 0, True, name="real raises")


@samples("_fft_r2c.default", dtypes=REAL, **TOL)
def r2c_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for norm in (0, 1, 2):
        for onesided in (True, False):
            yield SampleInput(make((3, 8)), [1], norm, onesided)
            yield SampleInput(make((3, 7)), [0, 1], norm, onesided)
    yield SampleInput(make((2, 5, 3), noncontiguous=True), [0, 2], 0, True)
    yield SampleInput(make((4,), dtype=dtypes.complex64), [0], 0, True, name="complex raises")
    yield SampleInput(make((4,), dtype=dtypes.float16), [0], 0, True, name="float16 raises")


@samples("_fft_c2r.default", dtypes=(dtypes.complex64, dtypes.complex128), **TOL)
def c2r_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for norm in (0, 1, 2):
        yield SampleInput(make((3, 5)), [1], norm, 8)
        yield SampleInput(make((3, 5)), [1], norm, 9)
        yield SampleInput(make((4, 3)), [0, 1], norm, 4)
    yield SampleInput(make((2, 4, 3), noncontiguous=True), [0, 1], 0, 6)
    yield SampleInput(make((3,)), [0], 0, 0, name="no points raises")


def _one_dim(make: Any, dtype: Any, real_only: bool = False) -> Iterator[SampleInput]:
    for norm in NORMS:
        yield SampleInput(make((8,)), norm=norm)
    yield SampleInput(make((3, 7)), name="odd length")
    yield SampleInput(make((3, 8)), 12, name="n pads")
    yield SampleInput(make((3, 8)), 5, 0, "ortho", name="n cuts, dim 0")
    yield SampleInput(make((4, 6), noncontiguous=True), dim=0)
    yield SampleInput(make((2, 3, 4)), n=6, dim=1, norm="forward")
    yield SampleInput(make((6,), dtype=dtypes.int64), name="integers become floats")
    yield SampleInput(make((6,)), 0, name="n=0 raises")
    yield SampleInput(make((6,)), norm="bad", name="bad norm raises")
    yield SampleInput(make(()), name="0-dim raises")
    yield SampleInput(make((4,), dtype=dtypes.float16), name="float16 raises")


@samples("fft_fft.default", "fft_ifft.default", dtypes=FFT_DTYPES, **TOL)
def fft_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _one_dim(make, dtype)


@samples("fft_rfft.default", "fft_ihfft.default", dtypes=(*REAL, dtypes.complex64), **TOL)
def rfft_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _one_dim(make, dtype)  # (complex inputs raise)


@samples("fft_irfft.default", "fft_hfft.default", dtypes=FFT_DTYPES, **TOL)
def irfft_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _one_dim(make, dtype)
    yield SampleInput(make((3, 5)), 9, name="odd output length")
    yield SampleInput(make((1,)), name="one point raises")


def _n_dim(make: Any, dtype: Any, default_dims: bool) -> Iterator[SampleInput]:
    for norm in NORMS:
        yield SampleInput(make((4, 6)), norm=norm)
    yield SampleInput(make((3, 5, 7)), name="odd sizes")
    yield SampleInput(make((4, 6)), (3, 8), name="s cuts and pads")
    yield SampleInput(make((2, 4, 6)), (5, 4), (0, 2), "ortho")
    yield SampleInput(make((2, 4, 6)), None, (2, 0))
    yield SampleInput(make((2, 4, 6)), (5, -1), name="s of -1 keeps the size")
    yield SampleInput(make((4, 6), noncontiguous=True), norm="forward")
    yield SampleInput(make((4, 6), dtype=dtypes.int64), name="integers become floats")
    yield SampleInput(make((4, 6)), (2,), (0, 1), name="s and dim lengths raise")
    yield SampleInput(make((4, 6)), None, (1, 1), name="repeated dims raise")
    if default_dims:
        yield SampleInput(make((2, 3, 4)), (3,), name="s picks the last dims")
        yield SampleInput(make((3, 4)), dim=0)
    else:
        yield SampleInput(make((4,)), name="1-D raises")


@samples("fft_fft2.default", "fft_ifft2.default", dtypes=FFT_DTYPES, **TOL)
def fft2_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _n_dim(make, dtype, False)


@samples("fft_fftn.default", "fft_ifftn.default", dtypes=FFT_DTYPES, **TOL)
def fftn_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _n_dim(make, dtype, True)


@samples("fft_rfft2.default", "fft_irfft2.default", dtypes=(*REAL, dtypes.complex64), **TOL)
def rfft2_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _n_dim(make, dtype, False)


@samples("fft_rfftn.default", "fft_irfftn.default", dtypes=(*REAL, dtypes.complex64), **TOL)
def rfftn_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _n_dim(make, dtype, True)


@samples("fft_fftfreq.default", "fft_rfftfreq.default", dtypes=(dtypes.float32,))
def fftfreq_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(5)
    yield SampleInput(8, 0.25)
    yield SampleInput(7, d=2.0, dtype=dtypes.float64)
    yield SampleInput(4, dtype=dtypes.complex64)
    yield SampleInput(1)
    yield SampleInput(0)
    yield SampleInput(4, dtype=dtypes.int64, name="integer dtype raises")


@samples("fft_fftshift.default", "fft_ifftshift.default", dtypes=(dtypes.float32, dtypes.int64,
         dtypes.complex64))  # fmt: skip
def fftshift_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((5,)))
    yield SampleInput(make((4, 5)))
    yield SampleInput(make((4, 5)), 1)
    yield SampleInput(make((2, 3, 4)), (0, 2))
    yield SampleInput(make((4, 5), noncontiguous=True), dim=-1)
    yield SampleInput(ember.ones(()), name="0-dim raises")
