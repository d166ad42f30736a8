"""Sample inputs for the loss ops and their backward ops (see opinfo.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import ember
from ember import dtypes
from ember.testing._internal.opinfo import ErrorInput, SampleInput, errors, samples

F32_64 = (dtypes.float32, dtypes.float64)
REDUCTIONS = (0, 1, 2)


def _long(values: Any) -> Any:
    return ember.from_numpy(np.asarray(values, np.int64))


def _signs(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).choice([-1.0, 1.0], shape)


def _float(values: np.ndarray, dtype: Any) -> Any:
    return ember.from_numpy(values.astype(dtype.np))


@samples("binary_cross_entropy.default", dtypes=F32_64, meta_errors=False)
def bce_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = make((3, 4), low=0.02, high=0.98), make((3, 4), low=0, high=1)
    for r in REDUCTIONS:
        yield SampleInput(x, t, reduction=r)
        if dtype is dtypes.float32:  # PyTorch refuses weights that require grad (float64)
            yield SampleInput(x, t, make(4, low=0, high=2), r)
            yield SampleInput(x, t, make((3, 4), low=0, high=2), r)
    if dtype is dtypes.float32:  # at 0 and 1 a finite difference leaves [0, 1]
        yield SampleInput(_float(np.array([0.0, 1.0, 0.5]), dtype), make(3, low=0, high=1),
                          name="log clamped at -100")  # fmt: skip
    yield SampleInput(make((), low=0, high=1), make((), low=0, high=1))
    yield SampleInput(make((3, 4), low=0.02, high=0.98, noncontiguous=True), t, reduction=0)
    yield SampleInput(x, t * 3, name="target out of [0, 1]")
    yield SampleInput(x * 3, t, name="out of [0, 1]")


@samples("binary_cross_entropy_backward.default", dtypes=F32_64)
def bce_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = make((3, 4), low=0.02, high=0.98), make((3, 4), low=0, high=1)
    for r in REDUCTIONS:
        g = make((3, 4) if r == 0 else ())
        yield SampleInput(g, x, t, None, r)
        yield SampleInput(g, x, t, make((3, 4), low=0, high=2), r)


def _pair(make: Any, shape: tuple[int, ...] = (3, 4)) -> tuple[Any, Any]:
    return make(shape, low=-3, high=3), make(shape, low=-3, high=3)


@samples("smooth_l1_loss.default", "huber_loss.default", dtypes=(*F32_64, dtypes.int64))
def smooth_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = _pair(make)
    for r in REDUCTIONS:
        yield SampleInput(x, t, r)
        yield SampleInput(x, t, r, 0.5)
        yield SampleInput(x, t, r, 2.5)
    yield SampleInput(x, make(4, low=-3, high=3), 0, name="broadcast")
    yield SampleInput(make(()), make(()), 1)
    yield SampleInput(make((3, 4), noncontiguous=True), t, 0, 1.5)
    if dtype is dtypes.float32:
        yield SampleInput(x, t.double(), 0, name="promotes")


@samples("smooth_l1_loss_backward.default", "huber_loss_backward.default", dtypes=F32_64)
def smooth_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = _pair(make)
    for r in REDUCTIONS:
        g = make((3, 4) if r == 0 else ())
        yield SampleInput(g, x, t, r, 1.0)
        yield SampleInput(g, x, t, r, 0.5)


@samples("soft_margin_loss.default", dtypes=(*F32_64, dtypes.int64))
def soft_margin_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-3, high=3)
    t = _float(_signs((3, 4)), dtype) if dtype.is_floating_point else make((3, 4))
    for r in REDUCTIONS:
        yield SampleInput(x, t, r)
    yield SampleInput(make(()), make(()), 0)


@samples("soft_margin_loss_backward.default", dtypes=F32_64)
def soft_margin_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, t = make((3, 4), low=-3, high=3), _float(_signs((3, 4)), dtype)
    for r in REDUCTIONS:
        yield SampleInput(make((3, 4) if r == 0 else ()), x, t, r)


@samples("kl_div.default", dtypes=F32_64)
def kl_div_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-3, high=0)
    t = make((3, 4), low=0.01, high=1)
    for r in REDUCTIONS:
        yield SampleInput(x, t, r)
        yield SampleInput(x, make((3, 4), low=-3, high=0), r, log_target=True)
    yield SampleInput(x, make(4, low=0.01, high=1), 0, name="broadcast")


@samples("margin_ranking_loss.default", dtypes=F32_64)
def margin_ranking_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a, b, y = make(5), make(5), _float(_signs((5,)), dtype)
    for r in REDUCTIONS:
        yield SampleInput(a, b, y, 0.0, r)
        yield SampleInput(a, b, y, 0.7, r)


@samples("cosine_embedding_loss.default", dtypes=F32_64)
def cosine_embedding_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a, b, y = make((4, 3)), make((4, 3)), _float(_signs((4,)), dtype)
    for r in REDUCTIONS:
        yield SampleInput(a, b, y, 0.0, r)
        yield SampleInput(a, b, y, 0.3, r)
    yield SampleInput(make(3), make(3), _float(np.array(-1.0), dtype), 0.1, 0, name="1-d")
    yield SampleInput(a, b, _float(_signs((4, 1)), dtype), name="2-d target")
    yield SampleInput(make(3), make(3), y, name="1-d inputs, 1-d target")


@samples("hinge_embedding_loss.default", dtypes=F32_64)
def hinge_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, y = make((3, 4), low=-2, high=2), _float(_signs((3, 4)), dtype)
    for r in REDUCTIONS:
        yield SampleInput(x, y, 1.0, r)
        yield SampleInput(x, y, 0.5, r)


@samples("triplet_margin_loss.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def triplet_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a, p, n = make((4, 5)), make((4, 5)), make((4, 5))
    for r in REDUCTIONS:
        yield SampleInput(a, p, n, 1.0, 2.0, 1e-6, False, r)
        yield SampleInput(a, p, n, 0.5, 1.0, 1e-6, True, r)
    yield SampleInput(make(5), make(5), make(5), name="unbatched")
    yield SampleInput(a, p, make(5), name="dims differ")


@samples("poisson_nll_loss.default", dtypes=F32_64)
def poisson_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    t = make((3, 4), low=0, high=5)
    for r in REDUCTIONS:
        yield SampleInput(make((3, 4), low=-2, high=2), t, True, False, 1e-8, r)
        yield SampleInput(make((3, 4), low=0.1, high=4), t, False, True, 1e-8, r)
        yield SampleInput(make((3, 4), low=-2, high=2), t, True, True, 1e-8, r)


def _ctc(make: Any, t: int, n: int, c: int) -> Any:
    logits = make((t, n, c), low=-2, high=2)
    return ember.ops.aten._log_softmax(logits, 2, False)


@samples("_ctc_loss.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def ctc_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    lp = _ctc(make, 8, 3, 5)
    # every length full, so PyTorch fills all of log_alpha (it leaves the rest uninitialized)
    targets = _long([[1, 2, 2], [3, 1, 4], [2, 2, 2]])
    yield SampleInput(lp, targets, [8, 8, 8], [3, 3, 3])
    yield SampleInput(lp, targets, [8, 8, 8], [3, 3, 3], 0, True)
    flat = _long([1, 2, 2, 3, 1, 4, 4, 4, 1])
    yield SampleInput(lp, flat, [8, 8, 8], [3, 3, 3], name="concatenated targets")
    yield SampleInput(_ctc(make, 6, 2, 4), _long([[3, 1], [2, 2]]), [6, 6], [2, 2], 0)
    yield SampleInput(lp, targets, [8, 9, 8], [3, 3, 3], name="input length too long")
    yield SampleInput(lp, targets, [8, 8, 8], [3, 4, 3], name="target length too long")


@samples("_ctc_loss_backward.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def ctc_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    lp = _ctc(make, 8, 3, 5)
    for targets, il, tl in (
        (_long([[1, 2, 2], [3, 1, 4], [2, 2, 2]]), [8, 8, 8], [3, 3, 3]),
        (_long([[1, 2, 0], [3, 0, 0], [2, 2, 2]]), [8, 5, 7], [2, 1, 3]),
        (_long([1, 2, 2, 3, 4, 4]), [8, 6, 8], [2, 2, 2]),
    ):
        nll, alpha = ember.ops.aten._ctc_loss(lp, targets, il, tl)
        yield SampleInput(make(3), lp, targets, il, tl, nll, alpha, 0)


@samples("ctc_loss.IntList", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def ctc_loss_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    lp = _ctc(make, 10, 4, 6)
    targets = _long([[1, 2, 2, 5], [3, 0, 0, 0], [2, 5, 2, 0], [4, 4, 4, 4]])
    il, tl = [10, 7, 9, 10], [4, 1, 3, 4]
    for r in REDUCTIONS:
        yield SampleInput(lp, targets, il, tl, 0, r)
        yield SampleInput(lp, targets, il, tl, 0, r, True)
    yield SampleInput(lp, targets, il, [4, 0, 3, 4], name="empty target")
    yield SampleInput(lp, _long([1, 2, 2, 5, 3, 2, 5, 2]), il, [4, 1, 3, 0], 0, 0)
    yield SampleInput(lp, _long([[1, 2, 3, 1]] * 4), [2, 7, 9, 10], [4, 1, 3, 4], 0, 0,
                      name="impossible: inf")  # fmt: skip
    yield SampleInput(lp, _long([[1, 2, 3, 1]] * 4), [2, 7, 9, 10], [4, 1, 3, 4], 0, 0, True,
                      name="impossible: zero_infinity")  # fmt: skip
    yield SampleInput(lp, targets, il, tl, 3, 1, name="other blank")
    yield SampleInput(_ctc(make, 10, 1, 6)[:, 0], _long([1, 2, 2]), [10], [3], name="unbatched")


@samples("ctc_loss.Tensor", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def ctc_loss_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    lp = _ctc(make, 10, 3, 6)
    targets = _long([[1, 2, 2, 5], [3, 0, 0, 0], [2, 5, 2, 0]])
    for r in REDUCTIONS:
        yield SampleInput(lp, targets, _long([10, 7, 9]), _long([4, 1, 3]), 0, r)


@errors("smooth_l1_loss.default")
def smooth_l1_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.ones(3), ember.ones(3), 1, -1.0), RuntimeError, "beta")


@errors("huber_loss.default")
def huber_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.ones(3), ember.ones(3), 1, 0.0), RuntimeError, "delta")


@errors("binary_cross_entropy.default")
def bce_errors() -> Iterator[ErrorInput]:
    x = ember.full((3,), 0.5)
    yield ErrorInput(SampleInput(x * 3, x), RuntimeError, "between 0 and 1")
    yield ErrorInput(SampleInput(x, x.double()), RuntimeError, "dtype")


@errors("cosine_embedding_loss.default")
def cosine_embedding_errors() -> Iterator[ErrorInput]:
    a = ember.ones(3, 4)
    yield ErrorInput(SampleInput(a, a, ember.ones(3, 1)), RuntimeError, "0D or 1D target")
    yield ErrorInput(SampleInput(ember.ones(4), ember.ones(4), ember.ones(4)), RuntimeError, "2D")


@errors("_ctc_loss.default")
def ctc_errors() -> Iterator[ErrorInput]:
    lp = ember.zeros(5, 2, 4)
    t = _long([[1, 2], [1, 1]])
    yield ErrorInput(SampleInput(lp, t, [6, 5], [2, 2]), RuntimeError, "input_lengths")
    yield ErrorInput(SampleInput(lp, t, [5, 5], [3, 2]), RuntimeError, "at least")
