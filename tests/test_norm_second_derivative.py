"""Second derivatives through vector norms at a zero vector equal PyTorch's.

PyTorch's p = 2 norm gradient is ``g * (x / norm)`` with the quotient masked to 0 where the
norm is 0, so differentiating it again divides 0 by 0: the Hessian of ``||x||`` at the origin
is NaN there (the norm has no second derivative at 0), while p = 3 gives 0 and 1 < p < 2 NaN.
ember groups the formula the same way (found by the lowest-version random programs:
``dist(x0, x0, 2)``).
"""

from __future__ import annotations

import math

import pytest

import ember

from .conftest import requires_torch, torch

CASES = [
    (2.0, [0.0, 0.0]),
    (2.0, [1.0, -2.0]),
    (3.0, [0.0, 0.0]),
    (3.0, [1.5, 2.0]),
    (1.5, [0.0, 0.0]),
    (1.5, [0.5, -1.0]),
    (4.0, [0.0, 1.0]),
]


def _hessian_row_sums(lib, p: float, values: list[float]) -> tuple[list[float], list[float]]:
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(lib.linalg.vector_norm(x, p), x, create_graph=True)
    (h,) = lib.autograd.grad(g.sum(), x)
    return g.tolist(), h.tolist()


def _same(a: list[float], b: list[float]) -> bool:
    return all(
        (math.isnan(u) and math.isnan(v)) or math.isclose(u, v, rel_tol=1e-9, abs_tol=1e-12)
        for u, v in zip(a, b, strict=True)
    )


@requires_torch
@pytest.mark.parametrize(("p", "values"), CASES)
def test_vector_norm_second_derivative_matches_torch(p: float, values: list[float]) -> None:
    mine = _hessian_row_sums(ember, p, values)
    ref = _hessian_row_sums(torch, p, values)
    assert _same(mine[0], ref[0]), (mine, ref)
    assert _same(mine[1], ref[1]), (mine, ref)


def test_dist_of_a_tensor_with_itself_has_a_nan_second_derivative() -> None:
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (g,) = ember.autograd.grad(ember.dist(x, x, 2), x, create_graph=True)
    assert g.tolist() == [0.0, 0.0]
    (h,) = ember.autograd.grad(g.sum(), x)
    # dist(x, x) is the norm of x - x, whose gradient in x cancels: PyTorch gives NaN too
    ref = [math.nan, math.nan]
    if torch is not None:
        tx = torch.tensor([1.0, 2.0], requires_grad=True)
        (tg,) = torch.autograd.grad(torch.dist(tx, tx, 2), tx, create_graph=True)
        ref = torch.autograd.grad(tg.sum(), tx)[0].tolist()
    assert _same(h.tolist(), ref), (h, ref)


def test_first_derivative_at_zero_stays_zero_and_quiet() -> None:
    import warnings

    x = ember.zeros(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.linalg.vector_norm(x).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
