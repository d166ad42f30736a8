"""Sample inputs for the neural-network ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import ember
from ember import dtypes
from ember.testing._internal.opinfo import SampleInput, samples

F32_64 = (dtypes.float32, dtypes.float64)
F64 = (dtypes.float64,)


def _long(values: Any) -> Any:
    return ember.from_numpy(np.asarray(values, np.int64))


def _bools(shape: tuple[int, ...], seed: int = 0, diagonal: bool = False) -> Any:
    mask = np.random.default_rng(seed).integers(0, 2, shape).astype(np.bool_)
    return ember.from_numpy(mask | np.eye(*shape, dtype=np.bool_) if diagonal else mask)


# --------------------------------------------------------------------------- convolution


@samples("convolution.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)
def convolution_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, w, b = make((2, 4, 7, 6)), make((6, 4, 3, 3)), make(6)
    yield SampleInput(x, w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    yield SampleInput(x, w, None, [2, 1], [1, 2], [1, 1], False, [0, 0], 1, name="stride, padding")
    yield SampleInput(x, w, b, [1, 1], [1, 1], [2, 2], False, [0, 0], 1, name="dilation")
    yield SampleInput(
        x, make((6, 2, 3, 2)), b, [1, 2], [1, 0], [1, 1], False, [0, 0], 2, name="groups"
    )
    yield SampleInput(make((2, 4, 7, 6), noncontiguous=True), w, b, [1], [1], [1], False, [0], 1)
    yield SampleInput(
        make((2, 3, 9)), make((5, 3, 4)), make(5), [2], [1], [1], False, [0], 1, name="1d"
    )
    yield SampleInput(
        make((4, 7, 6)), w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, name="3-d raises"
    )
    yield SampleInput(
        x, make((6, 3, 3, 3)), b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, name="channels raise"
    )
    yield SampleInput(
        make((1, 4, 2, 2)), w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, name="too small"
    )
    wt = make((4, 3, 3, 2))  # transposed: (C_in, C_out / groups, *k)
    yield SampleInput(x, wt, make(3), [1, 1], [0, 0], [1, 1], True, [0, 0], 1, name="transposed")
    yield SampleInput(
        x, wt, make(6), [2, 3], [1, 0], [1, 2], True, [1, 2], 2, name="transposed, groups"
    )
    yield SampleInput(
        make((2, 4, 3, 4, 5)), make((4, 3, 2, 2, 3)), None, [2], [1], [1], True, [1], 1,
        name="transposed 3d",
    )  # fmt: skip
    yield SampleInput(
        make((2, 4, 5, 4, 3)), make((6, 2, 3, 2, 2)), make(6), [2, 1, 1], [1, 0, 1], [1, 2, 1],
        False, [0, 0, 0], 2, name="3d",
    )  # fmt: skip
    yield SampleInput(
        x, wt, None, [1, 1], [0, 0], [1, 1], True, [1, 1], 1, name="output_padding too big"
    )
    yield SampleInput(
        x, make((3, 3, 3, 2)), None, [1, 1], [0, 0], [1, 1], True, [0, 0], 1,
        name="transposed channels raise",
    )  # fmt: skip


@samples("conv2d.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)
def conv2d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, w = make((2, 3, 6, 5)), make((4, 3, 3, 3))
    yield SampleInput(x, w)
    yield SampleInput(x, w, make(4), [2, 2], [1, 1])
    yield SampleInput(x, w, make(4), [1, 2], [2, 1], [2, 1])
    yield SampleInput(make((3, 6, 5)), w, None, padding=[1, 1], name="unbatched")
    yield SampleInput(make((2, 4, 6, 5)), make((4, 2, 3, 3)), groups=2)


@samples("convolution_backward.default", dtypes=F32_64, atol=1e-4, rtol=1e-4)
def convolution_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, w = make((2, 4, 7, 6)), make((6, 4, 3, 3))
    yield SampleInput(
        make((2, 6, 5, 4)), x, w, [6], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True]
    )
    yield SampleInput(
        make((2, 6, 4, 3)),
        x,
        w,
        None,
        [2, 2],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        [True, True, False],
    )
    yield SampleInput(
        make((2, 6, 5, 6)), x, w, [6], [1, 1], [1, 2], [2, 2], False, [0, 0], 1, [True, True, True]
    )
    yield SampleInput(
        make((2, 6, 5, 2)),
        x,
        make((6, 2, 3, 3)),
        [6],
        [1, 2],
        [0, 0],
        [1, 1],
        False,
        [0, 0],
        2,
        [True, True, True],
        name="groups",
    )
    wt = make((4, 3, 3, 2))
    yield SampleInput(
        make((2, 6, 14, 7)), x, wt, [6], [2, 1], [1, 0], [1, 1], True, [1, 0], 2,
        [True, True, True], name="transposed",
    )  # fmt: skip
    yield SampleInput(
        make((2, 6, 12, 7)), x, wt, [6], [2, 1], [1, 0], [1, 1], True, [1, 0], 2,
        [True, True, True], name="grad_output shape raises",
    )  # fmt: skip
    yield SampleInput(
        make((2, 3, 9, 10)), x, wt, None, [1, 1], [0, 0], [2, 2], True, [1, 1], 1,
        [True, True, False], name="transposed, output_padding < dilation",
    )  # fmt: skip
    yield SampleInput(
        make((2, 6, 2, 4, 2)), make((2, 4, 5, 4, 3)), make((6, 2, 3, 2, 2)), [6], [2, 1, 1],
        [1, 0, 1], [1, 2, 1], False, [0, 0, 0], 2, [True, True, True], name="3d",
    )  # fmt: skip


# --------------------------------------------------------------------------- pooling


@samples("max_pool2d_with_indices.default", dtypes=(*F32_64, dtypes.int64))
def max_pool_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 7, 6))
    yield SampleInput(x, [2, 2])
    yield SampleInput(x, [3], [2], [1])
    yield SampleInput(x, [3, 2], [2, 1], [1, 0], [1, 2])
    yield SampleInput(x, [2], [2], 0, 1, True, name="ceil_mode")
    yield SampleInput(x, [3], [2], 1, 1, True, name="ceil_mode padded")
    yield SampleInput(make((3, 5, 5)), [2], name="unbatched")
    yield SampleInput(make((2, 3, 6, 6), noncontiguous=True), [2])
    yield SampleInput(x, [2], [2], [2], name="pad too big")


@samples("max_pool2d.default", dtypes=F32_64)
def max_pool2d_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 7, 6))
    yield SampleInput(x, 2)
    yield SampleInput(x, [3, 3], stride=2, padding=1, ceil_mode=True)


@samples("max_pool2d_with_indices_backward.default", dtypes=F32_64)
def max_pool_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for args in (([2, 2], [2, 2], [0, 0], [1, 1], False), ([3, 3], [2, 1], [1, 1], [1, 1], True)):
        x = make((2, 3, 7, 6))
        _, idx = ember.ops.aten.max_pool2d_with_indices(x, *args)
        yield SampleInput(make(tuple(idx.shape)), x, *args, idx)


@samples("avg_pool2d.default", dtypes=(*F32_64, dtypes.int64))
def avg_pool_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 7, 6))
    yield SampleInput(x, [2, 2])
    yield SampleInput(x, [3], [2], [1])
    yield SampleInput(x, [3], [2], [1], count_include_pad=False)
    yield SampleInput(x, [3, 2], [2, 1], [1, 0], True, False, name="ceil_mode")
    yield SampleInput(x, [3], [2], [1], True, True, name="ceil_mode include pad")
    yield SampleInput(x, [2], divisor_override=3)
    yield SampleInput(make((3, 5, 5)), [2], name="unbatched")
    yield SampleInput(make((2, 3, 6, 6), noncontiguous=True), [2])
    yield SampleInput(x, [2], [2], [2], name="pad too big")


@samples("avg_pool2d_backward.default", dtypes=F32_64)
def avg_pool_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 7, 6))
    for args in (
        ([2, 2], [2, 2], [0, 0], False, True, None),
        ([3, 3], [2, 1], [1, 1], True, False, None),
        ([3, 3], [2, 2], [1, 1], True, True, None),
        ([2, 2], [1, 1], [1, 1], False, True, 3),
    ):
        out = ember.ops.aten.avg_pool2d(x, *args)
        yield SampleInput(make(tuple(out.shape)), x, *args)


# --------------------------------------------------------------------------- normalization


@samples("native_layer_norm.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def layer_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4))
    yield SampleInput(x, [4], make(4), make(4), 1e-5)
    yield SampleInput(x, [3, 4], make((3, 4)), None, 1e-3)
    yield SampleInput(x, [4], None, None, 1e-5)
    yield SampleInput(make((2, 3, 4), noncontiguous=True), [4], make(4), make(4), 1e-5)
    yield SampleInput(x, [3], make(3), make(3), 1e-5, name="wrong shape")


@samples("layer_norm.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def layer_norm_front_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4))
    yield SampleInput(x, [4])
    yield SampleInput(x, [3, 4], make((3, 4)), make((3, 4)), eps=1e-3)


@samples("native_layer_norm_backward.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def layer_norm_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, w, b = make((2, 3, 4)), make(4), make(4)
    _, mean, rstd = ember.ops.aten.native_layer_norm(x, [4], w, b, 1e-5)
    yield SampleInput(make((2, 3, 4)), x, [4], mean, rstd, w, b, [True, True, True])
    yield SampleInput(make((2, 3, 4)), x, [4], mean, rstd, None, None, [True, False, False])


def _running(make: Any, c: int) -> tuple[Any, Any]:
    return make(c, low=-1, high=1), make(c, low=0.5, high=2)


@samples("native_batch_norm.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def batch_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((4, 3, 5))
    yield SampleInput(x, make(3), make(3), None, None, True, 0.1, 1e-5)
    yield SampleInput(x, None, None, None, None, True, 0.1, 1e-5)
    yield SampleInput(make((6, 3)), None, make(3), None, None, True, 0.1, 1e-5)
    if dtype is dtypes.float32:  # PyTorch refuses running stats that require grad (float64 samples)
        yield SampleInput(x, make(3), make(3), *_running(make, 3), True, 0.1, 1e-5)
        yield SampleInput(x, make(3), make(3), *_running(make, 3), False, 0.1, 1e-5, name="eval")
        yield SampleInput(make((4, 3, 2, 3)), make(3), None, *_running(make, 3), True, 0.3, 1e-3)


@samples(
    "_native_batch_norm_legit_functional.default", dtypes=(dtypes.float32,), atol=1e-5, rtol=1e-4
)
def batch_norm_functional_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((4, 3, 5))  # float32 only: PyTorch refuses running stats that require grad
    yield SampleInput(x, make(3), make(3), *_running(make, 3), True, 0.1, 1e-5)
    yield SampleInput(x, None, None, *_running(make, 3), True, 0.3, 1e-3)
    yield SampleInput(x, make(3), None, *_running(make, 3), False, 0.1, 1e-5, name="eval")


@samples("batch_norm.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def batch_norm_front_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((4, 3, 5))
    yield SampleInput(x, make(3), make(3), *_running(make, 3), True, 0.1, 1e-5, False)
    yield SampleInput(x, make(3), make(3), *_running(make, 3), False, 0.1, 1e-5, False)


@samples("native_batch_norm_backward.default", dtypes=F32_64, atol=1e-5, rtol=1e-4)
def batch_norm_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, w = make((4, 3, 5)), make(3)
    rm, rv = _running(make, 3)
    _, sm, si = ember.ops.aten.native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5)
    yield SampleInput(make((4, 3, 5)), x, w, rm, rv, sm, si, True, 1e-5, [True, True, True])
    yield SampleInput(make((4, 3, 5)), x, w, rm, rv, None, None, False, 1e-5, [True, True, True])
    yield SampleInput(
        make((4, 3, 5)), x, None, None, None, sm, si, True, 1e-5, [True, False, False]
    )


# --------------------------------------------------------------------------- embedding


@samples("embedding.default", dtypes=F32_64, meta_errors=False)
def embedding_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    w = make((6, 4))
    yield SampleInput(w, _long([[0, 5, 2], [2, 2, 1]]))
    yield SampleInput(w, _long([3]), 0)
    yield SampleInput(w, _long(1), name="0-d indices")
    yield SampleInput(w, ember.from_numpy(np.array([1, 2], np.int32)))
    yield SampleInput(w, _long([6]), name="out of range")
    yield SampleInput(w, make(2), name="float indices")


@samples("embedding_renorm.default", dtypes=F32_64, meta_errors=False)
def embedding_renorm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    w = make((6, 4), low=-2, high=2)  # row norms of about 1 to 3: some rows exceed max_norm
    idx = _long([[0, 5, 2], [2, 2, 1]])  # a repeated index is renormalised once
    for p in (2.0, 1.0, float("inf"), 3.0, 0.5, 0.0, -1.0, float("-inf")):
        yield SampleInput(w, idx, 1.5, p, name=f"norm_type={p}")
    yield SampleInput(w, _long([-1, 3]), 1.0, 2.0, name="negative index")
    yield SampleInput(w, _long(4), 0.5, 2.0, name="0-d indices")
    yield SampleInput(w, ember.from_numpy(np.array([1, 0], np.int32)), 1.0, 2.0, name="int32")
    yield SampleInput(w, _long([]), 1.0, 2.0, name="no indices")
    yield SampleInput(w, _long([0, 1]), 100.0, 2.0, name="all within max_norm")
    yield SampleInput(w, _long([0, 1]), -1.0, 2.0, name="negative max_norm")
    yield SampleInput(make((6, 4), noncontiguous=True), idx, 1.0, 2.0, name="non-contiguous")
    yield SampleInput(make((0, 4)), _long([]), 1.0, 2.0, name="empty weight")
    yield SampleInput(w, _long([6]), 1.0, 2.0, name="out of range")
    yield SampleInput(w, _long([-7]), 1.0, 2.0, name="negative out of range")
    yield SampleInput(make((6,)), _long([0]), 1.0, 2.0, name="1-D weight")
    yield SampleInput(w, make(2), 1.0, 2.0, name="float indices")


@samples("embedding_dense_backward.default", dtypes=F32_64)
def embedding_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    idx = _long([[0, 5, 2], [2, 2, 1]])
    yield SampleInput(make((2, 3, 4)), idx, 6, -1, False)
    yield SampleInput(make((2, 3, 4)), idx, 6, 2, False)
    yield SampleInput(make((2, 3, 4)), idx, 7, -1, True)


# --------------------------------------------------------------------------- losses


def _log_probs(make: Any, shape: tuple[int, ...]) -> Any:
    return make(shape, low=-3, high=0)


@samples("nll_loss_forward.default", dtypes=F32_64, meta_errors=False)
def nll_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = _log_probs(make, (5, 4)), _long([0, 3, 1, -100, 2])
    for reduction in (0, 1, 2):
        yield SampleInput(x, t, None, reduction, -100)
        if dtype is dtypes.float32:  # PyTorch refuses weights that require grad (float64 samples)
            yield SampleInput(x, t, make(4, low=0, high=2), reduction, -100)
    yield SampleInput(x, _long([0, 3, 1, 1, 2]), None, 1, 1, name="ignore_index 1")
    yield SampleInput(_log_probs(make, (4,)), _long(2), None, 0, -100, name="1-d input")
    yield SampleInput(x, _long([-100] * 5), None, 1, -100, name="all ignored: nan")
    yield SampleInput(x, _long([0, 4, 1, 1, 2]), None, 1, -100, name="target out of range")
    yield SampleInput(x, _long([0, 1]), None, 1, -100, name="batch mismatch")


@samples("nll_loss_backward.default", dtypes=F32_64)
def nll_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = _log_probs(make, (5, 4)), _long([0, 3, 1, -100, 2])
    w = make(4, low=0, high=2)
    for reduction, gshape in ((0, (5,)), (1, ()), (2, ())):
        total = ember.ops.aten.nll_loss_forward(x, t, w, reduction, -100)[1]
        yield SampleInput(make(gshape), x, t, w, reduction, -100, total)
        yield SampleInput(make(gshape), x, t, None, reduction, -100, ember.tensor(4.0, dtype=dtype))


@samples("nll_loss.default", dtypes=F32_64)
def nll_front_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = _log_probs(make, (5, 4)), _long([0, 3, 1, -100, 2])
    yield SampleInput(x, t)
    yield SampleInput(x, _long([0, 3, 1, 3, 2]), make(4, low=0, high=2), 2, 3)


@samples("nll_loss_nd.default", dtypes=F32_64)
def nll_nd_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = _log_probs(make, (3, 4, 2, 5)), _long(np.arange(30).reshape(3, 2, 5) % 4)
    yield SampleInput(x, t)
    yield SampleInput(x, t, make(4, low=0, high=2), 0, 2)
    yield SampleInput(_log_probs(make, (5, 4)), _long([0, 3, 1, -100, 2]), None, 2)


@samples("cross_entropy_loss.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def cross_entropy_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = make((5, 4), low=-3, high=3), _long([0, 3, 1, -100, 2])
    w = make(4, low=0.1, high=2)
    for reduction in (0, 1, 2):
        yield SampleInput(x, t, None, reduction)
        yield SampleInput(x, t, w, reduction, -100, 0.2)
        yield SampleInput(x, _long([0, 3, 1, 1, 2]), None, reduction, 1, 0.1)
        yield SampleInput(x, make((5, 4), low=0, high=1), None, reduction, -100, 0.1, name="probs")
        yield SampleInput(x, make((5, 4), low=0, high=1), w, reduction, name="probs weighted")
    yield SampleInput(
        make((3, 4, 2, 2)), _long(np.arange(12).reshape(3, 2, 2) % 4), w, 1, -100, 0.3
    )
    yield SampleInput(make(4), _long(1), name="unbatched")


@samples("mse_loss.default", dtypes=F32_64)
def mse_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    for reduction in (0, 1, 2):
        yield SampleInput(x, make((3, 4)), reduction)
    yield SampleInput(x, make(4), 0, name="broadcast")
    yield SampleInput(make((3, 4), noncontiguous=True), make((3, 4)))
    yield SampleInput(make(()), make(()))


@samples("l1_loss.default", dtypes=F32_64)
def l1_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    for reduction in (0, 1, 2):
        yield SampleInput(x, make((3, 4)), reduction)


@samples("binary_cross_entropy_with_logits.default", dtypes=F32_64)
def bce_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = make((3, 4), low=-20, high=20), make((3, 4), low=0, high=1)
    for reduction in (0, 1, 2):
        yield SampleInput(x, t, reduction=reduction)
        if dtype is dtypes.float32:  # PyTorch refuses weights that require grad (float64 samples)
            yield SampleInput(x, t, make(4, low=0, high=2), make(4, low=0, high=3), reduction)
            yield SampleInput(x, t, make((3, 4), low=0, high=2), None, reduction)
    yield SampleInput(x, make(4), name="shape mismatch")


@samples("one_hot.default", dtypes=(dtypes.int64,), meta_errors=False)
def one_hot_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_long([[0, 2], [1, 4]]), 6)
    yield SampleInput(_long([0, 2, 1]), 5)
    yield SampleInput(_long(np.zeros((0,), np.int64)), 3)
    yield SampleInput(_long([0, 3]), 3, name="class too big")
    yield SampleInput(_long([-1, 2]), name="negative")
    yield SampleInput(make(3, dtype=dtypes.int32, low=0, high=3), name="int32 raises")


@samples("constant_pad_nd.default", dtypes=(*F32_64, dtypes.int64, dtypes.bool_))
def constant_pad_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4))
    yield SampleInput(x, [1, 2])
    yield SampleInput(x, [1, 0, 2, 1], 1)
    yield SampleInput(x, [-1, 2, 0, -2])
    yield SampleInput(x, [1, 1, 1, 1, 1, 1], 0)
    yield SampleInput(make((2, 3, 4), noncontiguous=True), [2, 2])
    yield SampleInput(x, [1, 2, 3], name="odd")
    yield SampleInput(x, [1] * 8, name="too long")
    yield SampleInput(x, [-3, -2], name="negative size")


@samples("pad.default", dtypes=F32_64)
def pad_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4))
    yield SampleInput(x, [1, 2])
    yield SampleInput(x, [1, 0, 2, 1], value=2.5)
    for mode in ("reflect", "replicate", "circular"):
        yield SampleInput(x, [1, 2], mode)
        yield SampleInput(x, [1, 2, 2, 1], mode)
        yield SampleInput(make((2, 3, 4, 5, 4)), [1, 2, 0, 1, 2, 2], mode)
        yield SampleInput(x, [-1, 2], mode, name="negative")
    yield SampleInput(x, [1, 2], "reflect", 0.0, name="zero value")
    yield SampleInput(x, [1, 2], "reflect", 1.0, name="value raises")
    yield SampleInput(x, [1, 2], "wrap", name="unknown mode raises")
    yield SampleInput(x, [4, 1], "reflect", name="pad too big raises")


@samples("native_dropout.default", dtypes=F32_64)
def native_dropout_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield SampleInput(x, 0.5, False)
    yield SampleInput(x, 0.0, True)
    yield SampleInput(x, 1.0, True)


@samples("native_dropout_backward.default", dtypes=F32_64)
def native_dropout_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), _bools((3, 4)), 2.0)


@samples("dropout.default", dtypes=F32_64)
def dropout_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield SampleInput(x, 0.5, False)
    yield SampleInput(x, 0.0, True)


@samples("linear.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def linear_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    w, b = make((5, 4)), make(5)
    yield SampleInput(make((3, 4)), w, b)
    yield SampleInput(make((3, 4)), w)
    yield SampleInput(make((2, 3, 4)), w, b)
    yield SampleInput(make(4), w, b, name="1-d input")
    yield SampleInput(make((3, 4), noncontiguous=True), w, b)


@samples("scaled_dot_product_attention.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def sdpa_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    q, k, v = (
        make((2, 3, 4, 8), low=-1, high=1),
        make((2, 3, 5, 8), low=-1, high=1),
        make((2, 3, 5, 6)),
    )
    yield SampleInput(q, k, v)
    yield SampleInput(q, k, v, scale=0.3)
    yield SampleInput(q, k, v, _bools((4, 5), 1, diagonal=True))
    yield SampleInput(q, k, v, make((4, 5), low=-1, high=1))
    yield SampleInput(q, k, v, is_causal=True)
    yield SampleInput(make((4, 8)), make((6, 8)), make((6, 3)), name="2-d")
    dead_row = _bools((4, 5), 2, diagonal=True)
    dead_row._edata[1] = False
    yield SampleInput(q, k, v, dead_row, name="a row with every key masked: zeros")
    yield SampleInput(q, make((2, 1, 5, 8)), make((2, 1, 5, 6)), enable_gqa=True, name="gqa")
    # one head dim for all three: PyTorch's fused CPU op (NOTE [attention on CPU])
    v8 = make((2, 3, 5, 8))
    yield SampleInput(q, k, v8, name="fused")
    yield SampleInput(q, k, v8, _bools((4, 5), 3, diagonal=True), name="fused, boolean mask")
    yield SampleInput(q, k, v8, dead_row, name="fused, a row with every key masked: zeros")
    yield SampleInput(q, k, v8, is_causal=True, name="fused, causal")
    kv = make((2, 1, 5, 8))
    yield SampleInput(q, kv, kv, enable_gqa=True, name="fused, gqa")
