"""``linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve`` against PyTorch: the compact
factors and LAPACK pivots equal PyTorch's (real symmetric, complex symmetric and hermitian,
indefinite matrices with 2x2 pivots, batches), the solves solve, the layouts, ``info`` for a
singular matrix, backward raising, and the refusals (NOTE [LDL factors])."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")


def _symmetric(rng, shape, dtype, hermitian):  # type: ignore[no-untyped-def]
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(dtype)
    t = np.swapaxes(a.conj() if hermitian else a, -1, -2)
    return a + t


CASES = [
    (dtype, herm)
    for dtype in ("float32", "float64", "complex64", "complex128")
    for herm in (False, True)
]


@pytest.mark.parametrize("dtype, hermitian", CASES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (2, 2, 3, 3), (1, 1)], ids=str)
def test_factors_and_pivots_equal_torch(dtype: str, hermitian: bool, shape) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(len(shape))
    a = _symmetric(rng, shape, dtype, hermitian)
    e = ember.linalg.ldl_factor_ex(ember.tensor(a), hermitian=hermitian)
    t = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose(e.LD.numpy(), t.LD.numpy(), rtol=tol, atol=tol)
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    assert e.LD.stride() == t.LD.stride() and str(e.pivots.dtype) == "ember.int32"
    b = rng.standard_normal((*shape[:-1], 2)).astype(dtype)
    xe = ember.linalg.ldl_solve(e.LD, e.pivots, ember.tensor(b), hermitian=hermitian)
    xt = torch.linalg.ldl_solve(t.LD, t.pivots, torch.tensor(b), hermitian=hermitian)
    np.testing.assert_allclose(xe.numpy(), xt.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(a @ xe.numpy(), b, rtol=1e-3, atol=1e-3)  # it solves
    assert xe.stride() == xt.stride()


def test_two_by_two_pivots_and_the_lower_triangle() -> None:
    """An indefinite matrix with a zero diagonal takes 2x2 pivots (negative pairs); only the
    lower triangle is read."""
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]])
    e, t = ember.linalg.ldl_factor(ember.tensor(a)), torch.linalg.ldl_factor(torch.tensor(a))
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    assert (e.pivots.numpy() < 0).any()
    np.testing.assert_allclose(e.LD.numpy(), t.LD.numpy())
    junk = np.tril(a) + np.triu(np.full((3, 3), 7.0), 1)
    np.testing.assert_allclose(ember.linalg.ldl_factor(ember.tensor(junk)).LD.numpy(),
                               e.LD.numpy())  # fmt: skip


def test_batch_broadcast_in_solve() -> None:
    rng = np.random.default_rng(3)
    a = _symmetric(rng, (4, 4), "float64", False)
    b = rng.standard_normal((3, 4, 2))
    e = ember.linalg.ldl_factor(ember.tensor(a))
    t = torch.linalg.ldl_factor(torch.tensor(a))
    xe = ember.linalg.ldl_solve(e.LD, e.pivots, ember.tensor(b))
    xt = torch.linalg.ldl_solve(t.LD, t.pivots, torch.tensor(b))
    np.testing.assert_allclose(xe.numpy(), xt.numpy(), rtol=1e-10)


def test_singular_info_and_errors() -> None:
    z = np.zeros((2, 3, 3))
    z[0] = np.eye(3)
    e = ember.linalg.ldl_factor_ex(ember.tensor(z))
    t = torch.linalg.ldl_factor_ex(torch.tensor(z))
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    with pytest.raises(RuntimeError, match=r"ldl_factor: \(Batch element 1\).*D\[1, 1\]"):
        ember.linalg.ldl_factor(ember.tensor(z))
    with pytest.raises(RuntimeError, match="exactly zero"):
        ember.linalg.ldl_factor_ex(ember.tensor(z), check_errors=True)


def test_backward_raises_as_torch() -> None:
    a = ember.tensor(np.eye(3) * 2, requires_grad=True)
    LD, piv = ember.linalg.ldl_factor(a)
    assert LD.requires_grad
    with pytest.raises(NotImplementedError, match="ldl_factor_ex"):
        LD.sum().backward()
    b = ember.ones(3, 1, dtype=ember.float64, requires_grad=True)
    x = ember.linalg.ldl_solve(LD.detach(), piv, b)
    with pytest.raises(NotImplementedError, match="ldl_solve"):
        x.sum().backward()


def test_refusals() -> None:
    f, s = ember.linalg.ldl_factor, ember.linalg.ldl_solve
    with pytest.raises(RuntimeError, match="square matrices, but they are 3 by 4"):
        f(ember.ones(3, 4))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        f(ember.ones(3))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        f(ember.ones(3, 3, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="Half"):
        f(ember.ones(3, 3, dtype=ember.float16))
    LD, piv = f(ember.eye(3))
    with pytest.raises(RuntimeError, match="each A matrix is 3 by 3 but each b matrix is 4"):
        s(LD, piv, ember.ones(4, 2))
    with pytest.raises(RuntimeError, match="same dtype"):
        s(LD, piv, ember.ones(3, 2, dtype=ember.float64))
    with pytest.raises(IndexError, match="B must have at least 2 dimensions"):
        s(LD, piv, ember.ones(3))
