"""The LU factorisation (issue 18): ``Tensor.lu`` / ``ember.lu`` and the errors and warnings
of ``linalg.lu_factor``, against PyTorch (values, shapes and gradients of every LU op are
the op samples' business: ``tests/test_ops.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]]


@requires_torch
def test_tensor_lu_and_lu_match_torch_with_and_without_infos() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn that torch.lu is deprecated
        e = ember.tensor(A).lu(), ember.lu(ember.tensor(A), get_infos=True)
        t = torch.tensor(A).lu(), torch.lu(torch.tensor(A), get_infos=True)
    assert [len(r) for r in e] == [2, 3]
    for er, tr in zip(e, t, strict=True):
        for a, b in zip(er, tr, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
            assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]


def test_lu_reconstructs_and_solves_through_the_factors() -> None:
    a = ember.tensor(A, dtype=ember.float64)
    P, L, U = ember.lu_unpack(*ember.linalg.lu_factor(a))
    np.testing.assert_allclose((P @ L @ U).numpy(), a.numpy(), atol=1e-12)
    LU, piv = ember.linalg.lu_factor(a)
    b = ember.tensor([[1.0], [2.0], [3.0]], dtype=ember.float64)
    x = ember.linalg.lu_solve(LU, piv, b)
    np.testing.assert_allclose((a @ x).numpy(), b.numpy(), atol=1e-12)
    xa = ember.linalg.lu_solve(LU, piv, b.mT, left=False, adjoint=True)  # x A^T = b^T
    np.testing.assert_allclose((xa @ a.mT).numpy(), b.mT.numpy(), atol=1e-12)


def test_singular_matrices_factor_but_lu_factor_raises_as_torch() -> None:
    z = ember.zeros(2, 2)
    LU, piv, info = ember.linalg.lu_factor_ex(z)
    assert info.item() == 1 and piv.tolist() == [1, 2]
    with pytest.raises(RuntimeError, match=r"torch.linalg.lu_factor: U\[1,1\] is zero"):
        ember.linalg.lu_factor(z)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): U\[1,1\] is zero"):
        ember.linalg.lu_factor_ex(ember.stack([ember.eye(2), z]), check_errors=True)
    with pytest.raises(RuntimeError, match="without pivoting"):
        ember.linalg.lu_factor(ember.eye(2), pivot=False)


@requires_torch
@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2)])
def test_linalg_lu_gradients_match_torch(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    cots = [rng.standard_normal(s) for s in ((shape[0], min(shape)), (min(shape), shape[1]))]
    grads = []
    for mod in (ember, torch):
        x = mod.tensor(a, requires_grad=True)
        _, L, U = mod.linalg.lu(x)
        ((L * mod.tensor(cots[0])).sum() + (U * mod.tensor(cots[1])).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)
