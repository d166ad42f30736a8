"""CPU kernels of PyTorch's fused attention op and its backward (NOTE [attention on CPU] in
``ember/ops/native/attention.py``): the scores, their softmax and the weighted values in
NumPy, in float32 for half inputs, the softmax kept as its logsumexp for the backward."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember._memory_format import infer_dense_strides
from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.backends.cpu.vector_width import vector_size
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.attention import check_flash, lse_dtype, transposed_strides
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU


def empty_strided(shape: tuple[int, ...], strides: tuple[int, ...], dt: Any) -> np.ndarray:
    """An uninitialised array of ``shape`` whose strides (in elements, dense) are ``strides``."""
    order = sorted(range(len(shape)), key=lambda i: -strides[i])
    base = np.empty([shape[i] for i in order], dt)
    return base.transpose(np.argsort(order))


def _inputs(q: Tensor, k: Tensor, v: Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """q, k and v in the compute dtype, key and value heads repeated to the query's."""
    acc = lse_dtype(q).np
    qa, ka, va = (t._edata.astype(acc, copy=False) for t in (q, k, v))
    r = q.shape[1] // k.shape[1]
    if r > 1:
        ka, va = np.repeat(ka, r, axis=1), np.repeat(va, r, axis=1)
    return qa, ka, va, r


def _scores(
    qa: np.ndarray, ka: np.ndarray, is_causal: bool, mask: Tensor | None, scale: float | None
) -> np.ndarray:
    s = 1.0 / math.sqrt(qa.shape[-1]) if scale is None else scale
    scores = np.matmul(qa, ka.swapaxes(-1, -2)) * np.asarray(s, qa.dtype)
    if is_causal:
        lq, lk = scores.shape[-2:]
        scores[..., ~np.tri(lq, lk, dtype=bool)] = -np.inf
    if mask is not None:
        scores = scores + mask._edata.astype(scores.dtype, copy=False)
    return scores


# NOTE [attention NaN rows]
# PyTorch 2.13's fused CPU kernel takes each row's running maximum over blocks of keys
# (512 at most; is_causal's masked keys included: tests/test_attention_nan_rows.py). With
# no mask, the keys of a block that fill whole vectors (vector_width.py) go through a
# NaN-spreading vector maximum and the rest (the block's tail) through a scalar one that
# skips NaN; with a mask every key goes through the NaN-spreading one. A row whose maximum
# is -inf (every key masked out, or every score NaN and all of them in tails) gives output 0
# and logsumexp 0; a NaN maximum gives NaN. So a row of NaN scores is 0 when its keys are
# fewer than a vector holds (5 keys: 0 in float32 with 32-byte vectors, NaN in float64;
# 0 in both with AVX512) and NaN otherwise, as PyTorch's on the same machine.


def _vector_keys(lk: int, itemsize: int) -> np.ndarray:
    """(lk,) booleans: the keys whose scores PyTorch's maximum takes a whole vector at a
    time (NaN spreads) rather than in a block's scalar tail (NaN skipped)."""
    width = vector_size(itemsize)
    out = np.zeros(lk, dtype=bool)
    for n in range(0, lk, 512):
        c = min(512, lk - n)
        out[n : n + c - c % width] = True
    return out


def _row_max(scores: np.ndarray, unmasked: bool) -> np.ndarray:
    """Each row's maximum score as PyTorch's fused kernel finds it (NOTE [attention NaN
    rows]), keeping the last dim."""
    if not unmasked or scores.shape[-1] == 0:
        return np.maximum.reduce(scores, axis=-1, keepdims=True, initial=-np.inf)
    vec = _vector_keys(scores.shape[-1], scores.dtype.itemsize)
    whole = np.maximum.reduce(
        np.where(vec, scores, -np.inf), axis=-1, keepdims=True, initial=-np.inf
    )
    tail = np.fmax.reduce(np.where(vec, -np.inf, scores), axis=-1, keepdims=True, initial=-np.inf)
    return np.maximum(whole, tail)


@impl(aten._scaled_dot_product_flash_attention_for_cpu.default, CPU)
def flash_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    attn_mask: Tensor | None = None,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    check_flash(query, key, value, dropout_p)
    qa, ka, va, _ = _inputs(query, key, value)
    with quiet_block():  # inf and NaN scores give NaN silently, as PyTorch's
        scores = _scores(qa, ka, is_causal, attn_mask, scale)
        top = _row_max(scores, attn_mask is None)
        dead = top == -np.inf
        top[dead] = 0.0
        p = np.where(dead, 0.0, np.exp(scores - top)).astype(scores.dtype, copy=False)
        total = p.sum(-1, keepdims=True)
        total[dead] = 1.0
        out = np.matmul(p / total, va)
        lse = (top + np.log(total))[..., 0]
    shape = tuple(query.shape)
    res = empty_strided(shape, infer_dense_strides(shape, query.stride()), query.dtype.np)
    res[...] = out
    lse_arr = empty_strided(lse.shape, transposed_strides(lse.shape), lse.dtype)
    lse_arr[...] = lse
    return wrap(res), wrap(lse_arr)


@impl(aten._scaled_dot_product_flash_attention_for_cpu_backward.default, CPU)
def flash_attention_backward(
    grad_out: Tensor,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    out: Tensor,
    logsumexp: Tensor,
    dropout_p: float,
    is_causal: bool,
    *,
    attn_mask: Tensor | None = None,
    scale: float | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    check_flash(query, key, value, dropout_p)
    qa, ka, va, r = _inputs(query, key, value)
    acc = qa.dtype
    s = 1.0 / math.sqrt(qa.shape[-1]) if scale is None else scale
    go = grad_out._edata.astype(acc, copy=False)
    with quiet_block():
        scores = _scores(qa, ka, is_causal, attn_mask, scale)
        p = np.exp(scores - logsumexp._edata.astype(acc, copy=False)[..., None])
        gv = np.matmul(p.swapaxes(-1, -2), go)
        gp = np.matmul(go, va.swapaxes(-1, -2))
        rows = (go * out._edata.astype(acc, copy=False)).sum(-1, keepdims=True)
        gs = p * (gp - rows) * np.asarray(s, acc)
        gq = np.matmul(gs, ka)
        gk = np.matmul(gs.swapaxes(-1, -2), qa)
    if r > 1:  # the repeated heads' gradients summed into each key/value head
        b, h, n, d = gk.shape
        gk = gk.reshape(b, h // r, r, n, d).sum(2)
        gv = gv.reshape(b, h // r, r, n, gv.shape[-1]).sum(2)
    grads = []
    for g, like in ((gq, query), (gk, key), (gv, value)):
        shape = tuple(like.shape)
        arr = empty_strided(shape, transposed_strides(shape), like.dtype.np)
        arr[...] = g
        grads.append(wrap(arr))
    return grads[0], grads[1], grads[2]
