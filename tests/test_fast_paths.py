"""The shortcuts the hot paths take give what the general paths give (and PyTorch gives).

Keyword calls go through cached per-call-shape routes (``keyword_route``); in-place float
arithmetic writes straight into ``self`` (``_inplace_fast``); the engine reduces broadcast
gradients with one ``sum`` where it can. Each is checked against the slow path's answer or
PyTorch's, including the cases that must fall back to the general path and its errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _pair(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> tuple[object, object]:
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _same(e: object, t: object) -> None:
    assert isinstance(e, ember.Tensor)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------- keyword routes


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x, y: m.add(x, y, alpha=2),
        lambda m, x, y: m.add(x, 3, alpha=2),
        lambda m, x, y: m.sub(x, y, alpha=0.5),
        lambda m, x, y: x.add(y, alpha=-1),
        lambda m, x, y: m.sum(x, dim=1),
        lambda m, x, y: m.sum(x, dim=(0, 1), keepdim=True),
        lambda m, x, y: m.sum(input=x, dim=0),
        lambda m, x, y: m.clamp(x, min=-0.5),
        lambda m, x, y: m.clamp(x, max=y),
        lambda m, x, y: x.softmax(dim=-1),
        lambda m, x, y: m.where(x > 0, x, other=y),
    ],
)
def test_keyword_calls_match_torch(call: object) -> None:
    (ex, tx), (ey, ty) = _pair((3, 4)), _pair((3, 4), seed=1)
    for _ in range(2):  # the second call takes the cached route
        _same(call(ember, ex, ey), call(torch, tx, ty))  # type: ignore[operator]


def test_keyword_route_picks_the_overload_by_type() -> None:
    x = ember.ones(2)
    assert x.add(x, alpha=2).tolist() == [3.0, 3.0]  # add.Tensor
    assert x.add(2, alpha=2).tolist() == [5.0, 5.0]  # add.Scalar (or Tensor with a number)
    assert ember.sum(x, dtype=ember.float64).dtype is ember.float64  # sum.default
    assert ember.sum(x, dim=0, dtype=ember.float64).dtype is ember.float64  # sum.dim_IntList


def test_keyword_route_rejects_bad_types_with_the_overloads() -> None:
    x = ember.ones(2)
    for _ in range(2):
        with pytest.raises(TypeError, match=r"add\(\) received an invalid combination"):
            ember.add(x, x, alpha="two")
        with pytest.raises(TypeError, match="sum"):
            ember.sum(x, dim="zero")


# --------------------------------------------------------------------------- in place


@pytest.mark.parametrize("name", ["add_", "sub_", "mul_", "div_"])
@pytest.mark.parametrize("other", ["tensor", "broadcast", "float", "int", "self"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inplace_float_matches_torch(name: str, other: str, dtype: str) -> None:
    ex, tx = _pair((3, 4), dtype)
    if other == "tensor":
        ey, ty = _pair((3, 4), dtype, seed=1)
    elif other == "broadcast":
        ey, ty = _pair((4,), dtype, seed=2)
    elif other == "self":
        ey, ty = ex, tx
    else:
        ey = ty = 0.75 if other == "float" else 3
    kw = {"alpha": -0.5} if name in ("add_", "sub_") else {}
    version = ex._version
    out = getattr(ex, name)(ey, **kw)
    getattr(tx, name)(ty, **kw)
    assert out is ex
    assert ex._version == version + 1
    _same(ex, tx)


def test_inplace_on_a_parameter_and_a_view_writes_through() -> None:
    w = ember.nn.Parameter(ember.ones(2, 3))
    with ember.no_grad():
        w.add_(ember.ones(2, 3), alpha=-0.25)
    assert w.tolist() == [[0.75] * 3] * 2
    base = ember.zeros(4, 4)
    base[1:3, ::2].add_(ember.ones(2, 2), alpha=2)
    expected = np.zeros((4, 4), np.float32)
    expected[1:3, ::2] = 2
    np.testing.assert_array_equal(base.numpy(), expected)


def test_inplace_that_cannot_broadcast_into_self_raises_and_writes_nothing() -> None:
    x = ember.ones(4)
    with pytest.raises(RuntimeError, match=r"add_.*shape \[4\].*broadcast shape \[3, 4\]"):
        x.add_(ember.ones(3, 4), alpha=2)
    assert x.tolist() == [1.0] * 4 and x._version == 0


def test_inplace_falls_back_for_other_dtypes() -> None:
    i = ember.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.add_(0.5)
    i.add_(ember.tensor([1, 1, 1]), alpha=2)
    assert i.tolist() == [3, 4, 5]
    h = ember.ones(2, dtype=ember.float16)
    h.add_(ember.ones(2, dtype=ember.float16), alpha=0.5)
    assert h.tolist() == [1.5, 1.5]
    f = ember.ones(2)
    f.add_(ember.ones(2, dtype=ember.float64), alpha=2)  # mixed dtypes: the general path
    assert f.dtype is ember.float32 and f.tolist() == [3.0, 3.0]


# --------------------------------------------------------------------------- sum_to


@pytest.mark.parametrize("shape", [(4,), (1, 4), (3, 1), (1, 1), (), (2, 1, 4), (1, 3, 4)], ids=str)
def test_broadcast_gradients_reduce_like_torch(shape: tuple[int, ...]) -> None:
    ex, tx = _pair((2, 3, 4), "float64")
    eb, tb = _pair(shape, "float64", seed=3)
    eb.requires_grad_()
    tb.requires_grad_()
    (ex * eb).sum().backward()
    (tx * tb).sum().backward()
    assert tuple(eb.grad.shape) == tuple(tb.grad.shape)
    _same(eb.grad, tb.grad)


# --------------------------------------------------------------------------- matrix products


@pytest.mark.parametrize("bias", [(48,), (32, 48), (1, 48), (32, 1), ()], ids=str)
@pytest.mark.parametrize("transposed", [False, True], ids=["W", "W.t()"])
def test_addmm_and_mm_match_torch(bias: tuple[int, ...], transposed: bool) -> None:
    """Large enough for the transposed-weight path (NOTE [transposed weights])."""
    ex, tx = _pair((32, 2100))
    ew, tw = _pair((48, 2100) if transposed else (2100, 48), seed=1)
    eb, tb = _pair(bias, seed=2)
    if transposed:
        ew, tw = ew.t(), tw.t()
    for e, t in (
        (ember.addmm(eb, ex, ew), torch.addmm(tb, tx, tw)),
        (ember.mm(ex, ew), torch.mm(tx, tw)),
    ):
        assert e.is_contiguous() and tuple(e.stride()) == t.stride()
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-4, atol=1e-3)


def test_addmm_shape_errors_are_torchs() -> None:
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ember.addmm(ember.zeros(3), ember.zeros(2, 4), ember.zeros(5, 3))
    with pytest.raises(RuntimeError, match="expanded size"):
        ember.addmm(ember.zeros(4), ember.zeros(2, 5), ember.zeros(5, 3))


# --------------------------------------------------------------------------- nn kernels


def test_relu_backward_passes_the_gradient_where_the_input_is_nan() -> None:
    """threshold_backward zeroes where ``self <= threshold``; NaN compares false there."""
    g = [1.0, 2.0, 3.0, 4.0]
    x = [float("nan"), -1.0, 0.0, 1.0]
    for dtype in ("float32", "float64"):
        e = ember.ops.aten.threshold_backward.default(
            ember.tensor(g, dtype=getattr(ember, dtype)),
            ember.tensor(x, dtype=getattr(ember, dtype)),
            0,
        )
        t = torch.ops.aten.threshold_backward.default(
            torch.tensor(g, dtype=getattr(torch, dtype)),
            torch.tensor(x, dtype=getattr(torch, dtype)),
            0,
        )
        _same(e, t)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_relu_backward_by_bits_is_exact(dtype: str, layout: str) -> None:
    """Large arrays are masked by bits (NOTE [masking by bits]): bit for bit what PyTorch
    gives, NaN and inf in either input included, for any layout."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((96, 128)).astype(dtype)
    g = rng.standard_normal((96, 128)).astype(dtype)
    x.flat[:4] = [np.nan, -1.0, 0.0, -np.nan]
    g.flat[:4] = [np.inf, np.inf, np.nan, 2.0]
    arrays = [x, g]
    if layout == "transposed":
        arrays = [a.T for a in arrays]
    elif layout == "strided":
        arrays = [a[:, ::2] for a in arrays]
    e = ember.ops.aten.threshold_backward.default(
        ember.from_numpy(arrays[1]), ember.from_numpy(arrays[0]), 0.25
    )
    t = torch.ops.aten.threshold_backward.default(
        torch.from_numpy(arrays[1].copy()), torch.from_numpy(arrays[0].copy()), 0.25
    )
    assert e.dtype.name == dtype and e._edata.size >= 4096
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("targets", [[0, 3, 1, 3], [0, -100, 1, 3], [2, 2, 2, 2]], ids=str)
def test_cross_entropy_forward_and_backward_match_torch(reduction: str, targets: list[int]) -> None:
    """Plain targets take the kernels' fast path; an ignored one takes the general path."""
    ex, tx = _pair((4, 5), "float64")
    ex.requires_grad_()
    tx.requires_grad_()
    e = ember.nn.functional.cross_entropy(ex, ember.tensor(targets), reduction=reduction)
    t = torch.nn.functional.cross_entropy(tx, torch.tensor(targets), reduction=reduction)
    _same(e.detach(), t.detach())
    e.sum().backward()
    t.sum().backward()
    _same(ex.grad, tx.grad)


def test_nll_loss_with_a_target_out_of_range_raises() -> None:
    x = ember.zeros(2, 3)
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        ember.nn.functional.nll_loss(x, ember.tensor([0, 3]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        ember.nn.functional.nll_loss(x, ember.tensor([-1, 0]))
