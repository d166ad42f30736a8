"""``F.grid_sample(mode="bicubic")``: values, input and grid gradients against PyTorch in
every padding mode, both ``align_corners``, both float types; taps padded one by one (NOTE
[bicubic grid sampling]); non-finite grid points; the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")

SHAPES = [(2, 3, 5, 6), (1, 2, 1, 1), (1, 1, 2, 3), (3, 1, 7, 4)]


def _run(lib, x: np.ndarray, g: np.ndarray, go: np.ndarray, **kw):  # type: ignore[no-untyped-def]
    xx = lib.tensor(x, requires_grad=True)
    gg = lib.tensor(g, requires_grad=True)
    out = lib.nn.functional.grid_sample(xx, gg, mode="bicubic", **kw)
    out.backward(lib.tensor(go))
    return out.detach().numpy(), xx.grad.numpy(), gg.grad.numpy()


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients_match_torch(
    shape: tuple[int, ...], padding_mode: str, align_corners: bool, dtype: str
) -> None:
    rng = np.random.default_rng(len(shape) + shape[2])
    x = rng.standard_normal(shape).astype(dtype)
    # many points outside [-1, 1], where the taps are padded
    g = (rng.standard_normal((shape[0], 4, 5, 2)) * 1.5).astype(dtype)
    go = rng.standard_normal((shape[0], shape[1], 4, 5)).astype(dtype)
    kw = {"padding_mode": padding_mode, "align_corners": align_corners}
    tol = 2e-5 if dtype == "float32" else 1e-11
    for a, b in zip(_run(ember, x, g, go, **kw), _run(torch, x, g, go, **kw), strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_identity_grid_reproduces_the_image() -> None:
    """With ``align_corners=True`` the grid of pixel centres reads each pixel exactly (the
    cubic weights at t = 0 are 0, 1, 0, 0)."""
    x = np.random.default_rng(3).standard_normal((1, 2, 4, 5))
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing="ij")
    grid = ember.tensor(np.stack([xs, ys], -1)[None])
    out = ember.nn.functional.grid_sample(ember.tensor(x), grid, mode="bicubic", align_corners=True)
    np.testing.assert_allclose(out.numpy(), x, atol=1e-12)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_non_finite_grid_points_and_input_values(padding_mode: str) -> None:
    """A NaN or inf coordinate gives NaN (its weights are NaN) as PyTorch, and an inf pixel
    that a tap reads with weight 0 gives NaN too."""
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    x[0, 0, 1, 1] = np.inf
    g = np.array(
        [[[[np.nan, 0.0], [0.2, np.inf], [-np.inf, 0.1], [0.3, 0.3], [-0.5, -0.33], [3, 3]]]],
        np.float32,
    )
    for x_ in (x, np.where(np.isinf(x), 5.0, x).astype(np.float32)):
        for corners in (False, True):
            kw = {"mode": "bicubic", "padding_mode": padding_mode, "align_corners": corners}
            a = ember.nn.functional.grid_sample(ember.tensor(x_), ember.tensor(g), **kw)
            b = torch.nn.functional.grid_sample(torch.tensor(x_), torch.tensor(g), **kw)
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-4, equal_nan=True)


def test_gradcheck_float64() -> None:
    rng = np.random.default_rng(5)
    x = ember.tensor(rng.standard_normal((1, 2, 4, 5)), requires_grad=True)
    g = ember.tensor(rng.uniform(-1.2, 1.2, (1, 3, 2, 2)), requires_grad=True)
    for pm in ("zeros", "border", "reflection"):
        assert ember.autograd.gradcheck(
            lambda a, b, pm=pm: ember.nn.functional.grid_sample(
                a, b, mode="bicubic", padding_mode=pm, align_corners=False
            ),
            (x, g),
        )


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.nn.functional.grid_sample(
            lib.ones(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False
        ),
        lambda lib: lib.nn.functional.grid_sample(
            lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 3), mode="bicubic", align_corners=False
        ),
        lambda lib: lib.nn.functional.grid_sample(
            lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), mode="cubic", align_corners=False
        ),
    ],
    ids=["5-d input", "grid's last dim", "mode name"],
)
def test_refusals_match_torch(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(Exception) as theirs:
        make(torch)
    with pytest.raises(type(theirs.value)) as ours:
        make(ember)
    assert "grid_sample" in str(ours.value)
