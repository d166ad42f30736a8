"""``F.interpolate(..., antialias=True)`` for bilinear and bicubic: values and gradients vs
PyTorch (``_upsample_bilinear2d_aa``, ``_upsample_bicubic2d_aa`` and their backward ops)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")

SIZES: list[dict[str, Any]] = [
    {"size": (4, 23)},
    {"size": (1, 1)},
    {"scale_factor": 0.37},
    {"scale_factor": (1.1, 2.5)},
    {"scale_factor": 0.1},
    {"size": (20, 3)},
]


@pytest.mark.parametrize("kw", SIZES, ids=str)
@pytest.mark.parametrize("mode", ("bilinear", "bicubic"))
@pytest.mark.parametrize("align_corners", (False, True))
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_values_and_gradients_match_torch(
    kw: Any, mode: str, align_corners: bool, dtype: str
) -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 11, 10)).astype(dtype)
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    opts = {"mode": mode, "align_corners": align_corners, "antialias": True, **kw}
    ty = torch.nn.functional.interpolate(tx, **opts)
    ey = ember.nn.functional.interpolate(ex, **opts)
    g = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


def test_non_4d_input_raises() -> None:
    with pytest.raises(ValueError, match="Anti-alias"):
        ember.nn.functional.interpolate(ember.ones(1, 1, 4), size=2, mode="linear", antialias=True)
