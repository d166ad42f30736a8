"""Sample inputs for the spatial nn ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import ember
from ember import dtypes
from ember.ops.native.spatial import INTERPOLATING_KINDS, UPSAMPLE
from ember.testing._internal.opinfo import SampleInput, samples

F32_64 = (dtypes.float32, dtypes.float64)
aten = ember.ops.aten


def _with(gen: Callable[..., Iterator[SampleInput]], *args: Any) -> Callable[..., Any]:
    """A sample generator ``fn(make, dtype)`` yielding ``gen(make, *args)`` (one per rank)."""
    return lambda make, dtype: gen(make, *args)


# --------------------------------------------------------------------------- convolution


@samples("conv1d.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)
def conv1d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, w = make((2, 4, 9)), make((6, 4, 3))
    yield SampleInput(x, w)
    yield SampleInput(x, w, make(6), [2], [1], [2])
    yield SampleInput(x, make((6, 2, 2)), make(6), [3], [2], [1], 2, name="groups")
    yield SampleInput(make((4, 9)), w, None, padding=[1], name="unbatched")
    yield SampleInput(make((2, 4, 9), noncontiguous=True), w, make(6), [1], [1])
    yield SampleInput(make(9), w, name="1-d input raises")
    yield SampleInput(make((2, 3, 9)), w, name="channels raise")
    yield SampleInput(x, w, make(6, dtype=dtypes.float16), name="bias dtype raises")


@samples("conv3d.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)
def conv3d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, w = make((2, 4, 5, 6, 4)), make((3, 4, 3, 2, 2))
    yield SampleInput(x, w)
    yield SampleInput(x, w, make(3), [2, 1, 2], [1, 0, 1], [1, 2, 1])
    yield SampleInput(
        x, make((4, 2, 2, 2, 2)), make(4), [1] * 3, [1] * 3, [1] * 3, 2, name="groups"
    )
    yield SampleInput(make((4, 5, 6, 4)), w, None, name="unbatched")
    yield SampleInput(make((2, 4, 5, 6, 4), noncontiguous=True), w, make(3))
    yield SampleInput(make((1, 4, 2, 2, 2)), w, name="too small")


def _padding_samples(make: Any, n: int) -> Iterator[SampleInput]:
    x = make((2, 4, *(7, 6, 5)[:n]))
    w = make((3, 4, *(3, 2, 3)[:n]))
    yield SampleInput(x, w, make(3), padding="same")
    yield SampleInput(x, w, None, [1] * n, "same", [2] * n, name="same, dilated")
    yield SampleInput(x, make((3, 4, *(4, 2, 2)[:n])), None, padding="same", name="even kernel")
    yield SampleInput(x, w, make(3), [1] * n, "valid", [1] * n)
    yield SampleInput(make((4, *(7, 6, 5)[:n])), w, padding="same", name="unbatched")
    yield SampleInput(x, w, padding="same", stride=2, name="strided same raises")
    yield SampleInput(x, w, padding="full", name="unknown string raises")


samples("conv1d.padding", dtypes=F32_64, atol=1e-4, rtol=1e-4)(_with(_padding_samples, 1))
samples("conv2d.padding", dtypes=F32_64, atol=1e-4, rtol=1e-4)(_with(_padding_samples, 2))
samples("conv3d.padding", dtypes=F32_64, atol=1e-4, rtol=1e-4)(_with(_padding_samples, 3))


@samples("_convolution_mode.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)
def convolution_mode_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, w = make((2, 4, 7, 6)), make((3, 4, 3, 2))
    yield SampleInput(x, w, make(3), [1, 1], "same", [1, 1], 1)
    yield SampleInput(x, w, None, [2, 1], "valid", [1, 2], 1)
    yield SampleInput(make((2, 4, 9)), make((4, 2, 4)), None, [1], "same", [1], 2)


def _transpose_samples(make: Any, n: int) -> Iterator[SampleInput]:
    x = make((2, 4, *(5, 4, 3)[:n]))
    w = make((4, 3, *(3, 2, 2)[:n]))
    yield SampleInput(x, w)
    yield SampleInput(x, w, make(3), [2] * n, [1] * n, [1] * n, name="output_padding")
    yield SampleInput(x, w, make(3), [2] * n, [0] * n, [0] * n, 1, [2] * n, name="dilated")
    yield SampleInput(x, make((4, 2, *(2, 3, 2)[:n])), make(4), [1] * n, [1] * n, [0] * n, 2,
                      name="groups")  # fmt: skip
    yield SampleInput(make((4, *(5, 4, 3)[:n])), w, None, name="unbatched")
    yield SampleInput(
        make((2, 4, *(5, 4, 3)[:n]), noncontiguous=True), w, make(3), [3] * n, [2] * n
    )
    yield SampleInput(x, w, None, [1] * n, [0] * n, [1] * n, name="output_padding too big")
    yield SampleInput(make((2, 3, *(5, 4, 3)[:n])), w, name="channels raise")


samples("conv_transpose1d.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)(
    _with(_transpose_samples, 1)
)
samples("conv_transpose2d.input", dtypes=F32_64, atol=1e-4, rtol=1e-4)(_with(_transpose_samples, 2))
samples("conv_transpose3d.input", dtypes=F32_64, atol=1e-4, rtol=1e-4)(_with(_transpose_samples, 3))


# --------------------------------------------------------------------------- pooling


@samples("max_pool1d_with_indices.default", dtypes=(*F32_64, dtypes.int64))
def max_pool1d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 9))
    yield SampleInput(x, [2])
    yield SampleInput(x, [3], [2], [1], [1], True, name="ceil_mode")
    yield SampleInput(x, 3, 1, 1, 2, name="dilated")
    yield SampleInput(make((3, 9)), [2], name="unbatched")
    yield SampleInput(make((2, 3, 8), noncontiguous=True), [2])
    yield SampleInput(make(9), [2], name="1-d raises")
    yield SampleInput(x, [2], [], [2], name="pad too big")
    yield SampleInput(x, [2, 2], name="two kernel sizes raise")


@samples("max_pool1d.default", dtypes=F32_64)
def max_pool1d_front_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 9))
    yield SampleInput(x, [3])
    yield SampleInput(x, [3], [2], [1], [2], True)


@samples("max_pool3d_with_indices.default", dtypes=(*F32_64, dtypes.int64))
def max_pool3d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 5, 6, 4))
    yield SampleInput(x, [2, 2, 2])
    yield SampleInput(x, [3], [2], [1])
    yield SampleInput(x, [3, 2, 2], [2, 1, 2], [1, 1, 0], [1, 2, 1], True, name="ceil_mode")
    yield SampleInput(make((3, 4, 4, 4)), [2], name="unbatched")
    yield SampleInput(make((2, 3, 4, 4, 4), noncontiguous=True), [2])
    yield SampleInput(make((3, 4, 4)), [2], name="3-d raises")
    yield SampleInput(x, [2], [2], [2], name="pad too big")


@samples("max_pool3d.default", dtypes=F32_64)
def max_pool3d_front_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3, 5, 6, 4)), 2)
    yield SampleInput(make((2, 3, 5, 6, 4)), [3, 3, 2], stride=2, padding=1, ceil_mode=True)


@samples("max_pool3d_with_indices_backward.default", dtypes=F32_64)
def max_pool3d_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for args in (
        ([2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False),
        ([3, 3, 2], [2, 1, 2], [1, 1, 0], [1, 1, 1], True),
    ):
        x = make((2, 3, 5, 6, 4))
        _, idx = aten.max_pool3d_with_indices(x, *args)
        yield SampleInput(make(tuple(idx.shape)), x, *args, idx)


@samples("avg_pool1d.default", dtypes=F32_64)
def avg_pool1d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 9))
    yield SampleInput(x, [2])
    yield SampleInput(x, [3], [2], [1], True, False, name="ceil_mode, exclude pad")
    yield SampleInput(x, 3, 2, 1)
    yield SampleInput(make((3, 9)), [2], name="unbatched")
    yield SampleInput(make((2, 3, 8), noncontiguous=True), [2])
    yield SampleInput(make((2, 3, 4, 9)), [2], name="4-d raises")
    yield SampleInput(x, [2], [], [2], name="pad too big")


@samples("avg_pool3d.default", dtypes=(*F32_64, dtypes.int64))
def avg_pool3d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 5, 6, 4))
    yield SampleInput(x, [2, 2, 2])
    yield SampleInput(x, [3], [2], [1])
    yield SampleInput(x, [3], [2], [1], count_include_pad=False)
    yield SampleInput(x, [3, 2, 2], [2, 1, 2], [1, 1, 0], True, False, name="ceil_mode")
    yield SampleInput(x, [2], divisor_override=3)
    yield SampleInput(make((3, 4, 4, 4)), [2], name="unbatched")
    yield SampleInput(make((2, 3, 4, 4, 4), noncontiguous=True), [2])
    yield SampleInput(x, [2], [2], [2], name="pad too big")
    yield SampleInput(x, [2], divisor_override=0, name="zero divisor")


@samples("avg_pool3d_backward.default", dtypes=F32_64)
def avg_pool3d_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 5, 6, 4))
    for args in (
        ([2, 2, 2], [2, 2, 2], [0, 0, 0], False, True, None),
        ([3, 3, 2], [2, 1, 2], [1, 1, 0], True, False, None),
        ([2, 2, 2], [1, 1, 1], [1, 1, 1], False, True, 3),
    ):
        out = aten.avg_pool3d(x, *args)
        yield SampleInput(make(tuple(out.shape)), x, *args)


@samples("adaptive_avg_pool1d.default", dtypes=F32_64)
def adaptive_avg_pool1d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 9))
    for size in ([4], [1], [9], [12], 5):
        yield SampleInput(x, size)
    yield SampleInput(make((3, 7)), [3], name="unbatched")
    yield SampleInput(make(7), [3], name="1-d raises")
    yield SampleInput(x, [2, 2], name="two sizes raise")


def _adaptive_samples(make: Any, n: int, avg: bool) -> Iterator[SampleInput]:
    x = make((2, 3, *(7, 6, 5)[:n]))
    for size in ([3, 4, 2], [1, 1, 1], [7, 6, 5], [2, 3, 4], [9, 11, 6]):
        yield SampleInput(x, size[:n])
    yield SampleInput(make((3, *(7, 6, 5)[:n])), [2] * n, name="unbatched")
    yield SampleInput(make((2, 3, *(7, 6, 5)[:n]), noncontiguous=True), [3] * n)
    yield SampleInput(make((0, 3, *(4, 4, 4)[:n])), [2] * n, name="empty batch")
    yield SampleInput(x, [0, 2, 2][:n], name="zero size")
    yield SampleInput(make((2, 3, 0, 4, 4)[: n + 2]), [2] * n, name="empty spatial raises")
    yield SampleInput(make((7, 6, 5)[:n]), [2] * n, name="too few dims raise")
    yield SampleInput(x, [2] * (n + 1), name="wrong output_size raises")


@samples("adaptive_avg_pool2d.default", "_adaptive_avg_pool2d.default", dtypes=F32_64)
def adaptive_avg_pool2d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _adaptive_samples(make, 2, True)
    yield SampleInput(make((2, 3, 4, 4), dtype=dtypes.int64), [2, 2], name="int raises")


samples("adaptive_avg_pool3d.default", "_adaptive_avg_pool3d.default", dtypes=F32_64)(
    _with(_adaptive_samples, 3, True)
)
samples("adaptive_max_pool2d.default", dtypes=F32_64)(_with(_adaptive_samples, 2, False))
samples("adaptive_max_pool3d.default", dtypes=F32_64)(_with(_adaptive_samples, 3, False))


@samples("adaptive_max_pool1d.default", dtypes=F32_64)
def adaptive_max_pool1d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 9))
    for size in ([4], [1], [9], [12]):
        yield SampleInput(x, size)
    yield SampleInput(make((3, 7)), [3], name="unbatched")
    yield SampleInput(make((2, 0, 7)), [3], name="no channels raise")


def _adaptive_backward(make: Any, n: int, avg: bool) -> Iterator[SampleInput]:
    x = make((2, 3, *(7, 6, 5)[:n]))
    for size in ([3, 4, 2], [7, 6, 5], [9, 11, 6]):
        if avg:
            out = getattr(aten, f"_adaptive_avg_pool{n}d")(x, size[:n])
            yield SampleInput(make(tuple(out.shape)), x)
        else:
            out, idx = getattr(aten, f"adaptive_max_pool{n}d")(x, size[:n])
            yield SampleInput(make(tuple(out.shape)), x, idx)


samples("_adaptive_avg_pool2d_backward.default", dtypes=F32_64)(_with(_adaptive_backward, 2, True))
samples("_adaptive_avg_pool3d_backward.default", dtypes=F32_64)(_with(_adaptive_backward, 3, True))
samples("adaptive_max_pool2d_backward.default", dtypes=F32_64)(_with(_adaptive_backward, 2, False))
samples("adaptive_max_pool3d_backward.default", dtypes=F32_64)(_with(_adaptive_backward, 3, False))


# --------------------------------------------------------------------------- normalization


@samples("native_group_norm.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def native_group_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 6, 4, 5))
    yield SampleInput(x, make(6), make(6), 2, 6, 20, 3, 1e-5)
    yield SampleInput(x, None, None, 2, 6, 20, 2, 1e-5)
    yield SampleInput(x, make(6), None, 2, 6, 20, 6, 1e-3, name="a group per channel")
    yield SampleInput(make((3, 4)), make(4), make(4), 3, 4, 1, 2, 1e-5, name="no spatial dims")
    yield SampleInput(x, make(6), make(6), 2, 6, 20, 4, 1e-5, name="groups don't divide")
    yield SampleInput(x, make(5), None, 2, 6, 20, 3, 1e-5, name="weight size raises")


@samples("native_group_norm_backward.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def native_group_norm_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, w = make((2, 6, 4, 5)), make(6)
    for group, weight, mask in ((3, w, [True, True, True]), (2, None, [True, False, False])):
        _, mean, rstd = aten.native_group_norm(x, weight, None, 2, 6, 20, group, 1e-5)
        yield SampleInput(make((2, 6, 4, 5)), x, mean, rstd, weight, 2, 6, 20, group, mask)


@samples("group_norm.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def group_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 6, 4, 5))
    yield SampleInput(x, 3, make(6), make(6))
    yield SampleInput(x, 2)
    yield SampleInput(make((2, 6, 7)), 6, make(6), None, 1e-3)
    yield SampleInput(make((4, 6)), 3, name="2-d")
    yield SampleInput(x, 4, name="groups don't divide")
    yield SampleInput(make(6), 3, name="1-d raises")


@samples("instance_norm.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def instance_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4, 5))
    yield SampleInput(x, make(3), make(3), None, None, True, 0.1, 1e-5, False)
    yield SampleInput(make((2, 3, 7)), None, None, None, None, True, 0.1, 1e-5, False)
    if dtype is dtypes.float32:  # PyTorch refuses running stats that require grad (float64)
        rm, rv = make(3, low=-1, high=1), make(3, low=0.5, high=2)
        yield SampleInput(x, make(3), make(3), rm, rv, True, 0.2, 1e-5, False, name="running")
        yield SampleInput(x, None, None, rm, rv, False, 0.2, 1e-5, False, name="eval")
    yield SampleInput(x, None, None, None, None, False, 0.1, 1e-5, False, name="eval raises")


# --------------------------------------------------------------------------- channel dropout


@samples("feature_dropout.default", "feature_dropout_.default", dtypes=F32_64)
def feature_dropout_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4))
    yield SampleInput(x, 0.5, False)
    yield SampleInput(x, 0.0, True)
    yield SampleInput(x, 1.0, True)
    yield SampleInput(x, 1.5, True, name="p raises")


# --------------------------------------------------------------------------- padding


def _pad_samples(make: Any, n: int, reflect: bool) -> Iterator[SampleInput]:
    x = make((2, 3, *(5, 6, 4)[:n]))
    yield SampleInput(x, [2, 1, 0, 3, 1, 1][: 2 * n])
    yield SampleInput(x, [1] * (2 * n))
    yield SampleInput(x, [-1, 2, 3, -2, 0, 1][: 2 * n], name="negative crops")
    yield SampleInput(make((3, *(5, 6, 4)[:n])), [1, 2, 2, 1, 0, 1][: 2 * n], name="unbatched")
    yield SampleInput(make((2, 3, *(5, 6, 4)[:n]), noncontiguous=True), [1] * (2 * n))
    yield SampleInput(make((0, 3, *(5, 6, 4)[:n])), [1] * (2 * n), name="empty batch")
    if reflect:
        yield SampleInput(x, [4, 0, 6, 1, 4, 0][: 2 * n], name="pad >= size raises")
    else:
        yield SampleInput(x, [7, 0, 8, 1, 5, 0][: 2 * n], name="pad > size")
    yield SampleInput(x, [-3, -3, -4, -3, -3, -3][: 2 * n], name="empty result raises")
    yield SampleInput(make((2, 0, *(5, 6, 4)[:n])), [1] * (2 * n), name="no channels raise")
    yield SampleInput(x, [1] * (2 * n + 2), name="wrong length raises")


def _register_pad_samples(n: int, reflect: bool) -> None:
    name = f"{'reflection' if reflect else 'replication'}_pad{n}d"

    def forward(make: Any, dtype: Any) -> Iterator[SampleInput]:
        yield from _pad_samples(make, n, reflect)
        if dtype is dtypes.float64:
            yield SampleInput(
                make((2, 3, *(5, 6, 4)[:n]), dtype=dtypes.int64), [1] * (2 * n), name="int64"
            )
            yield SampleInput(
                make((2, 3, *(5, 6, 4)[:n]), dtype=dtypes.bool_), [1] * (2 * n), name="bool"
            )

    def backward(make: Any, dtype: Any) -> Iterator[SampleInput]:
        x = make((2, 3, *(5, 6, 4)[:n]))
        for pad in ([2, 1, 0, 3, 1, 1], [-1, 2, 3, -2, 0, 1], [4, 4, 5, 5, 3, 3]):
            pad = pad[: 2 * n]
            if reflect and any(p >= s for p, s in zip(pad, (4, 4, 6, 6, 5, 5), strict=False)):
                continue
            out = getattr(aten, name)(x, pad)
            yield SampleInput(make(tuple(out.shape)), x, pad)
        yield SampleInput(make((2, 3, *(5, 6, 4)[:n])), x, [1] * (2 * n), name="shape raises")

    samples(f"{name}.default", dtypes=F32_64)(forward)
    samples(f"{name}_backward.default", dtypes=F32_64)(backward)


for _n in (1, 2, 3):
    for _reflect in (True, False):
        _register_pad_samples(_n, _reflect)


@samples("_pad_circular.default", dtypes=(*F32_64, dtypes.int64))
def pad_circular_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 5, 6, 4))
    yield SampleInput(x, [2, 1])
    yield SampleInput(x, [2, 1, 0, 3])
    yield SampleInput(x, [1, 2, 3, 1, 0, 1])
    yield SampleInput(x, [-1, 2, 3, -2], name="negative crops")
    yield SampleInput(make((3, 5, 6)), [1, 1, 2, 2], name="unbatched")
    yield SampleInput(x, [4, 4], name="pad == size")
    yield SampleInput(x, [5, 0], name="wraps twice raises")
    yield SampleInput(x, [-3, -2], name="empty result raises")
    yield SampleInput(make(5), [1, 1], name="1-d raises")


@samples("_pad_enum.default", dtypes=F32_64)
def pad_enum_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 5, 6))
    for mode in (0, 1, 2, 3):  # reflect, replicate, circular, constant
        yield SampleInput(x, [1, 2], mode)
        yield SampleInput(x, [1, 2, 2, 0], mode)
    yield SampleInput(make((2, 3, 4, 5, 6)), [1, 1, 1, 1, 1, 1], 1)
    yield SampleInput(make((2, 3, 5)), [1, 2], 0, name="1-d reflect")
    yield SampleInput(x, [1, 1], 3, 2.5, name="constant value")
    yield SampleInput(x, [1, 1, 1, 1], 0, 0.0, name="zero value")
    yield SampleInput(x, [1, 1, 1, 1], 1, 2.5, name="value raises")
    yield SampleInput(make((2, 3, 4, 5, 6, 2)), [1, 1], 0, name="6-d raises")
    yield SampleInput(x, [1, 1, 1], 0, name="odd length raises")


# --------------------------------------------------------------------------- upsampling


def _upsample_sizes(n: int) -> list[list[int]]:
    return [s[:n] for s in ([7, 13, 9], [3, 2, 3], [10, 12, 8], [5, 6, 4], [1, 1, 1])]


def _register_upsample_samples(name: str, n: int, kind: str) -> None:
    corners = kind in INTERPOLATING_KINDS
    nearest = not corners

    def forward(make: Any, dtype: Any) -> Iterator[SampleInput]:
        x = make((2, 3, *(5, 6, 4)[:n]))
        flags = [[False], [True]] if corners else [[]]
        for size in _upsample_sizes(n):
            for flag in flags:
                yield SampleInput(x, size, *flag)
        yield SampleInput(x, [10, 12, 8][:n], *flags[0], *[2.0, 2.0, 2.0][:n], name="scales")
        yield SampleInput(x, [8, 4, 7][:n], *flags[-1], *[1.7, 0.8, 1.9][:n], name="own scales")
        yield SampleInput(
            make((2, 3, *(5, 6, 4)[:n]), noncontiguous=True), [7, 4, 5][:n], *flags[0]
        )
        yield SampleInput(make((0, 3, *(5, 6, 4)[:n])), [7, 4, 5][:n], *flags[0], name="empty")
        yield SampleInput(make((3, *(5, 6, 4)[:n])), [7, 4, 5][:n], *flags[0], name="unbatched")
        yield SampleInput(x, [0, 4, 5][:n], *flags[0], name="zero size raises")
        yield SampleInput(x, [7, 4, 5, 2][: n + 1], *flags[0], name="sizes raise")
        if nearest and n == 2 and dtype is dtypes.float32:
            yield SampleInput(make((2, 3, 4, 5), dtype=dtypes.uint8), [7, 9], name="uint8")
        if dtype is dtypes.float64:
            yield SampleInput(make((2, 3, *(5, 6, 4)[:n]), dtype=dtypes.int64), [7, 4, 5][:n],
                              *flags[0], name="int64 raises")  # fmt: skip

    def vec(make: Any, dtype: Any) -> Iterator[SampleInput]:
        x = make((2, 3, *(5, 6, 4)[:n]))
        flag = [True] if corners else []
        yield SampleInput(x, [7, 4, 5][:n], *flag, None)
        yield SampleInput(x, None, *flag, [1.7, 2.5, 0.6][:n])
        yield SampleInput(x, None, *([False] if corners else []), [2.0, 0.5, 1.0][:n])
        yield SampleInput(x, [7, 4, 5][:n], *flag, [2.0, 2.0, 2.0][:n], name="both raise")
        yield SampleInput(x, None, *flag, None, name="neither raises")
        yield SampleInput(x, None, *flag, [2.0] * (n + 1), name="scales raise")

    def backward(make: Any, dtype: Any) -> Iterator[SampleInput]:
        shape = [2, 3, *(5, 6, 4)[:n]]
        flags = [[False], [True]] if corners else [[]]
        for size in _upsample_sizes(n)[:4]:
            for flag in flags:
                yield SampleInput(make((2, 3, *size)), size, shape, *flag)
        scales = [1.7, 2.5, 0.6][:n]
        size = [int(shape[2 + i] * scales[i]) for i in range(n)]
        yield SampleInput(make((2, 3, *size)), size, shape, *flags[0], *scales, name="scales")
        yield SampleInput(make((2, 3, *size)), [s + 1 for s in size], shape, *flags[0],
                          name="shape raises")  # fmt: skip

    atol = 1e-4 if kind == "cubic" else 1e-5
    samples(f"{name}.default", dtypes=F32_64, atol=atol, rtol=1e-4)(forward)
    samples(f"{name}.vec", dtypes=F32_64, atol=atol, rtol=1e-4)(vec)
    samples(f"{name}_backward.default", dtypes=F32_64, atol=atol, rtol=1e-4)(backward)


for _name, _n, _kind in UPSAMPLE:
    _register_upsample_samples(_name, _n, _kind)


# --------------------------------------------------------------------------- grid sampling


def _grid(make: Any, shape: tuple[int, ...]) -> Any:
    """A sampling grid mostly inside [-1, 1], some points outside; in float32 also points on
    the edges and on pixel centres. Those are kinks of the sampling (one-sided derivatives),
    where finite differences (tests/test_gradcheck.py, float64 samples) mean nothing: the
    float64 samples keep to random points, and tests/test_nn_spatial.py compares gradients
    at exact edges with PyTorch's."""
    g = make(shape, low=-1.3, high=1.3)
    if g.dtype is dtypes.float32:
        flat = g._edata.reshape(-1)
        flat[:6] = np.asarray([1.0, -1.0, 0.0, 1.0, -1.0, 0.5], flat.dtype)
    return g


def _grid_sampler_samples(make: Any, n: int) -> Iterator[SampleInput]:
    x = make((2, 3, *(5, 6, 4)[:n]))
    g = _grid(make, (2, *(4, 3, 2)[:n], n))
    for mode in (0, 1, 2) if n == 2 else (0, 1):  # bicubic is 2-d only
        for padding in (0, 1, 2):
            for corners in (False, True):
                yield SampleInput(x, g, mode, padding, corners)
    yield SampleInput(make((2, 3, *(5, 6, 4)[:n]), noncontiguous=True), g, 0, 0, False)
    yield SampleInput(make((2, 3, *(1, 1, 1)[:n])), g, 0, 2, True, name="size-1 input")
    yield SampleInput(x, _grid(make, (3, *(4, 3, 2)[:n], n)), 0, 0, False, name="batch raises")
    yield SampleInput(x, _grid(make, (2, *(4, 3, 2)[:n], n + 1)), 0, 0, False, name="raises")
    if n == 3:
        yield SampleInput(x, g, 2, 0, False, name="3-d bicubic raises")


samples("grid_sampler_2d.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)(
    _with(_grid_sampler_samples, 2)
)
samples("grid_sampler_3d.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)(
    _with(_grid_sampler_samples, 3)
)


@samples("grid_sampler.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)
def grid_sampler_front_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3, 5, 6)), _grid(make, (2, 4, 3, 2)), 0, 1, False)
    yield SampleInput(make((2, 3, 5, 6)), _grid(make, (2, 4, 3, 2)), 2, 2, True, name="bicubic")
    yield SampleInput(make((2, 3, 5, 6, 4)), _grid(make, (2, 4, 3, 2, 3)), 1, 0, True)
    yield SampleInput(make((2, 3, 5)), _grid(make, (2, 4, 1)), 0, 0, False, name="3-d raises")


def _grid_backward_samples(make: Any, n: int) -> Iterator[SampleInput]:
    x = make((2, 3, *(5, 6, 4)[:n]))
    g = _grid(make, (2, *(4, 3, 2)[:n], n))
    go = make((2, 3, *(4, 3, 2)[:n]))
    for mode in (0, 1, 2) if n == 2 else (0, 1):
        for padding in (0, 1, 2):
            for corners in (False, True):
                yield SampleInput(go, x, g, mode, padding, corners, [True, True])
    yield SampleInput(go, x, g, 0, 0, False, [False, True])


samples("grid_sampler_2d_backward.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)(
    _with(_grid_backward_samples, 2)
)
samples("grid_sampler_3d_backward.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)(
    _with(_grid_backward_samples, 3)
)


@samples("affine_grid_generator.default", dtypes=F32_64)
def affine_grid_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for corners in (False, True):
        yield SampleInput(make((2, 2, 3)), [2, 3, 4, 5], corners)
        yield SampleInput(make((2, 3, 4)), [2, 3, 4, 5, 3], corners)
    yield SampleInput(make((2, 2, 3)), [2, 3, 1, 5], False, name="size-1 dim")
    yield SampleInput(make((2, 2, 3)), [2, 3, 5], False, name="3-d size raises")


@samples("affine_grid_generator_backward.default", dtypes=F32_64)
def affine_grid_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for corners in (False, True):
        yield SampleInput(make((2, 4, 5, 2)), [2, 3, 4, 5], corners)
        yield SampleInput(make((2, 4, 5, 3, 3)), [2, 3, 4, 5, 3], corners)


# --------------------------------------------------------------------------- shuffles, folds


@samples("channel_shuffle.default", dtypes=(*F32_64, dtypes.int64))
def channel_shuffle_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 6, 3)), 3)
    yield SampleInput(make((1, 8, 2, 2)), 2)
    yield SampleInput(make((2, 4, 3, 2, 2), noncontiguous=True), 4, name="3-d spatial")
    yield SampleInput(make((2, 6, 3)), 1, name="one group")
    yield SampleInput(make((2, 6, 3)), 4, name="channels raise")
    yield SampleInput(make((2, 6, 3)), 0, name="zero groups raise")
    yield SampleInput(make((4, 6)), 2, name="2-d raises")


@samples("pixel_shuffle.default", dtypes=(*F32_64, dtypes.int64))
def pixel_shuffle_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 8, 3, 4)), 2)
    yield SampleInput(make((5, 2, 18, 3, 4)), 3)
    yield SampleInput(make((9, 2, 2)), 3, name="unbatched")
    yield SampleInput(make((2, 8, 3, 4), noncontiguous=True), 2)
    yield SampleInput(make((2, 8, 3, 4)), 1)
    yield SampleInput(make((2, 6, 3, 4)), 2, name="channels raise")
    yield SampleInput(make((8, 4)), 2, name="2-d raises")
    yield SampleInput(make((2, 8, 3, 4)), 0, name="zero factor raises")


@samples("pixel_unshuffle.default", dtypes=(*F32_64, dtypes.int64))
def pixel_unshuffle_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 2, 6, 4)), 2)
    yield SampleInput(make((5, 2, 2, 6, 9)), 3)
    yield SampleInput(make((2, 6, 4)), 2, name="unbatched")
    yield SampleInput(make((2, 2, 6, 4), noncontiguous=True), 2)
    yield SampleInput(make((2, 2, 5, 4)), 2, name="height raises")


@samples("im2col.default", dtypes=F32_64)
def im2col_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 7, 6))
    yield SampleInput(x, [2, 3], [1, 1], [0, 0], [1, 1])
    yield SampleInput(x, [2, 3], [1, 2], [1, 0], [2, 1])
    yield SampleInput(make((3, 7, 6)), [3, 3], [1, 1], [1, 1], [2, 2], name="unbatched")
    yield SampleInput(make((2, 3, 7, 6), noncontiguous=True), [2, 2], [1, 1], [0, 0], [1, 1])
    yield SampleInput(x, [8, 2], [1, 1], [0, 0], [1, 1], name="kernel too big")
    yield SampleInput(x, [2, 2], [1, 1], [-1, 0], [1, 1], name="negative padding")
    yield SampleInput(make((7, 6)), [2, 2], [1, 1], [0, 0], [1, 1], name="2-d raises")


@samples("col2im.default", dtypes=F32_64)
def col2im_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 18, 20)), [7, 6], [2, 3], [1, 1], [0, 0], [1, 1])
    yield SampleInput(make((2, 18, 8)), [7, 6], [2, 3], [1, 2], [1, 0], [2, 1])
    yield SampleInput(make((27, 16)), [7, 6], [3, 3], [1, 1], [1, 1], [2, 2], name="unbatched")
    yield SampleInput(make((2, 18, 20), noncontiguous=True), [7, 6], [2, 3], [1, 1], [0, 0], [1, 1])
    yield SampleInput(make((2, 17, 20)), [7, 6], [2, 3], [1, 1], [0, 0], [1, 1], name="raises")
    yield SampleInput(make((2, 18, 19)), [7, 6], [2, 3], [1, 1], [0, 0], [1, 1], name="blocks")


# --------------------------------------------------------------------------- fractional pooling
def _fractional_samples(make: Any, dtype: Any, n: int) -> Iterator[SampleInput]:
    """Batched and unbatched, overlapping and disjoint windows, a single window, every
    kernel + output fitting exactly (3-d needs one to spare), and PyTorch's refusals."""
    spatial = (9, 8, 7)[:n]
    u = make((2, 3, n), low=0, high=1)
    yield SampleInput(make((2, 3, *spatial)), [2] * n, [4] * n, u)
    yield SampleInput(make((2, 3, *spatial)), [3, 1, 2][:n], [5, 6, 4][:n], u, name="uneven")
    yield SampleInput(make((3, *spatial)), [2] * n, [3] * n, u, name="unbatched")
    yield SampleInput(make((2, 3, *spatial)), [2] * n, [1] * n, u, name="one window")
    fit = [s - 2 + (n == 2) for s in spatial]
    yield SampleInput(make((2, 3, *spatial), noncontiguous=True), [2] * n, fit, u, name="fit")
    yield SampleInput(make((2, 3, *spatial)), [2] * n, [0] * n, u, name="empty output")
    yield SampleInput(make((2, 3, *spatial)), [3] * n, [8] * n, u, name="too large raises")
    yield SampleInput(make((3, 3, *spatial)), [2] * n, [3] * n, u, name="few samples raise")
    yield SampleInput(make((2, 4, *spatial)), [2] * n, [3] * n, u, name="channels raise")
    yield SampleInput(make(spatial), [2] * n, [3] * n, u, name="rank raises")
    other = dtypes.float64 if dtype == dtypes.float32 else dtypes.float32
    yield SampleInput(make((2, 3, *spatial)), [2] * n, [3] * n, u.to(other), name="dtype raises")


def _fractional_backward(make: Any, dtype: Any, n: int) -> Iterator[SampleInput]:
    spatial = (9, 8, 7)[:n]
    u = make((2, 3, n), low=0, high=1)
    for k, o in (([2] * n, [4] * n), ([3, 1, 2][:n], [5, 6, 4][:n]), ([4] * n, [3] * n)):
        x = make((2, 3, *spatial))
        out, idx = getattr(aten, f"fractional_max_pool{n}d")(x, k, o, u)
        yield SampleInput(make(tuple(out.shape)), x, k, o, idx)
    x = make((3, *spatial))
    out, idx = getattr(aten, f"fractional_max_pool{n}d")(x, [2] * n, [3] * n, u)
    yield SampleInput(make(tuple(out.shape)), x, [2] * n, [3] * n, idx, name="unbatched")


for _n in (2, 3):
    samples(f"fractional_max_pool{_n}d.default", dtypes=F32_64)(
        lambda make, dtype, n=_n: _fractional_samples(make, dtype, n)
    )
    samples(f"fractional_max_pool{_n}d_backward.default", dtypes=F32_64)(
        lambda make, dtype, n=_n: _fractional_backward(make, dtype, n)
    )
