"""Inputs and comparisons the vmap rule tests share: the same NumPy data made into ember and
torch tensors, and results compared in shape, dtype and values."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember

from .conftest import torch


def arr(*shape: int, seed: int = 0) -> np.ndarray:
    """Standard normal float32 data of ``shape``."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def idx(high: int, *shape: int, seed: int = 0) -> np.ndarray:
    """int64 indices in ``[0, high)`` of ``shape``."""
    return np.random.default_rng(seed).integers(0, high, shape).astype(np.int64)


def to_lib(lib: Any, x: Any) -> Any:
    """``x`` with each array (also inside lists and tuples) a fresh tensor of ``lib``."""
    if isinstance(x, np.ndarray):
        return ember.from_numpy(x.copy()) if lib is ember else torch.from_numpy(x.copy())
    if isinstance(x, (list, tuple)):
        return type(x)(to_lib(lib, t) for t in x)
    return x


def close(got: Any, want: Any, tol: float = 1e-4) -> None:
    """Equal structure, shapes and dtype names; floating values within ``tol``, NaNs equal;
    other values exactly."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            close(g, w, tol)
        return
    if want is None:
        assert got is None
        return
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    g, w = got.detach().numpy(), want.detach().numpy()
    if g.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)
