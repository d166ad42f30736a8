"""NaN scores in PyTorch's fused CPU attention kernel (NOTE [attention NaN rows] in
ember/backends/cpu/attention.py): which rows give 0 and which NaN depends on the key count,
the blocks and the machine's vector width, and ember's must be PyTorch's on this machine."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.backends.cpu import vector_width
from ember.backends.cpu.attention import _vector_keys

from .conftest import requires_torch, torch

OP = "_scaled_dot_product_flash_attention_for_cpu"


def _qkv(lq: int, lk: int, dtype: type, seed: int) -> tuple[np.ndarray, ...]:
    """q, k, v whose scores have NaN rows (a NaN query row), NaN columns (a NaN key) and
    -inf rows (a -inf query element against positive keys)."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, (1, 2, lq, 4)).astype(dtype)
    k = rng.uniform(-1, 1, (1, 2, lk, 4)).astype(dtype)
    v = rng.uniform(-1, 1, (1, 2, lk, 4)).astype(dtype)
    q[0, 0, ::3] = np.nan  # every score of these rows NaN
    if lk > 1:
        k[0, 1, rng.integers(lk)] = np.nan  # one NaN score in every row of head 1
    q[0, 1, 1::4, 0] = -np.inf
    k[0, 1, :, 0] = np.abs(k[0, 1, :, 0]) + 0.5  # so those rows' scores are all -inf
    return q, k, v


def _both(args: tuple[np.ndarray, ...], **kwargs: object) -> tuple[np.ndarray, ...]:
    e_op = getattr(ember.ops.aten, OP).default
    t_op = getattr(torch.ops.aten, OP).default
    e = e_op(*(ember.from_numpy(a.copy()) for a in args), **kwargs)
    t = t_op(*(torch.from_numpy(a.copy()) for a in args), **kwargs)
    return e[0]._edata, e[1]._edata, t[0].numpy(), t[1].numpy()


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize(
    "lq,lk",
    [(1, 1), (4, 3), (4, 4), (4, 5), (3, 8), (40, 9), (7, 16), (70, 17), (33, 520), (2, 1030)],
)
def test_nan_rows_match_torch(lq: int, lk: int, is_causal: bool, dtype: type) -> None:
    out, lse, t_out, t_lse = _both(_qkv(lq, lk, dtype, lq * 1000 + lk), is_causal=is_causal)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, t_out, rtol=tol, atol=tol, equal_nan=True)
    np.testing.assert_allclose(lse, t_lse, rtol=tol, atol=tol, equal_nan=True)


@requires_torch
def test_five_keys_of_nan_give_nan_in_float64_on_avx2() -> None:
    """The failing edge sample's case: every score NaN, 5 keys: PyTorch's float64 kernel
    on 32-byte vectors (4 doubles) spreads the NaN; its float32 one (8 floats) skips it."""
    if vector_width.vector_bytes() != 32:
        pytest.skip("this machine's PyTorch uses AVX512 vectors")
    q = np.full((1, 1, 1, 2), np.nan)
    kv = np.ones((1, 1, 5, 2))
    out64, _, t64, _ = _both((q, kv, kv))
    assert np.isnan(out64).all() and np.isnan(t64).all()
    out32, _, t32, _ = _both(tuple(a.astype(np.float32) for a in (q, kv, kv)))
    assert (out32 == 0).all() and (t32 == 0).all()


def test_vector_keys_follow_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """With AVX512 (64-byte vectors) 5 float64 keys are all in the scalar tail, so a row of
    NaN scores gives 0, as the float32 one does with 32-byte vectors."""
    monkeypatch.setattr(vector_width, "vector_bytes", lambda: 64)
    assert not _vector_keys(5, 8).any()
    assert _vector_keys(9, 8).tolist() == [True] * 8 + [False]
    monkeypatch.setattr(vector_width, "vector_bytes", lambda: 32)
    assert _vector_keys(5, 8).tolist() == [True] * 4 + [False]
    assert _vector_keys(5, 4).tolist() == [False] * 5
    # blocks of 512 keys, each with its own tail
    assert _vector_keys(1030, 8).sum() == 512 + 512 + 4


def test_vector_bytes_honours_aten_cpu_capability(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    vector_width.vector_bytes.cache_clear()
    try:
        assert vector_width.vector_bytes() == 32
    finally:
        monkeypatch.delenv("ATEN_CPU_CAPABILITY")
        vector_width.vector_bytes.cache_clear()
