"""In-place ops on views (NOTE [in-place on a view]): double backward through CopySlices,
checked with gradgradcheck and against PyTorch's second and third derivatives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradgradcheck

from .conftest import requires_torch, torch

# Each case: (name, function of (lib, x, w) -> tensor), x of shape (3, 4), w of shape (4,),
# written once for both libraries. The writes go through views with and without a storage
# offset, strided and transposed views, views of views, and a base that is itself strided.


def _mul_first_row(m: Any, x: Any, w: Any) -> Any:
    b = x.clone()
    b[0].mul_(w)
    return b


def _mul_last_row(m: Any, x: Any, w: Any) -> Any:  # storage offset 8
    b = x * 2
    b[2].mul_(w * w)
    return b.exp()


def _div_column(m: Any, x: Any, w: Any) -> Any:  # strided view with an offset
    b = x.clone()
    b[:, 1].div_(w[1:] + 3)
    return b * b


def _add_transposed(m: Any, x: Any, w: Any) -> Any:  # a row of the transpose: a column
    b = x.clone()
    b.t()[1:3].add_(w[:3] * x[0, :3], alpha=2)
    return b


def _exp_chained(m: Any, x: Any, w: Any) -> Any:  # a view of a view
    b = x.clone()
    b[1:][:, 1:3].exp_()
    return b * w


def _exp_strided_base(m: Any, x: Any, w: Any) -> Any:  # clone keeps x.t()'s strides
    b = x.t().clone()
    b[1:][0].exp_()
    return b * w[:3]


def _copy_setitem(m: Any, x: Any, w: Any) -> Any:  # copy_ through b[1]
    b = x.clone()
    b[1] = w * x[0]
    return b * b


def _index_put_setitem(m: Any, x: Any, w: Any) -> Any:  # index_put_ on the view b[1:]
    b = x.clone()
    b[1:, [0, 2]] = w[:2] * w[2:]
    return b.exp()


def _base_without_grad(m: Any, x: Any, w: Any) -> Any:  # b requires grad only after the write
    b = m.zeros(3, 4, dtype=x.dtype)
    b[:, 2].copy_(x[:, 0] * w[:3])
    return b * x


def _two_writes(m: Any, x: Any, w: Any) -> Any:  # overlapping regions, the second reads self
    b = x.clone()
    b[:, 2].add_(w[:3])
    b[1:].mul_(x[0] * w)
    return b * b


def _view_used_after(m: Any, x: Any, w: Any) -> Any:  # the written view has a new history
    b = x.clone()
    v = b[:, 0]
    v.mul_(w[:3])
    return (v * w[1:]).sum() + (b * b).sum()


def _case(name: str, fn: Callable[..., Any]) -> Any:
    """(``exp_`` reads its result, which under create_graph is relinked to the view's new
    grad_fn: NOTE [saved outputs].)"""
    return pytest.param((name, fn), id=name)


CASES = [
    _case("mul_ first row", _mul_first_row),
    _case("mul_ last row", _mul_last_row),
    _case("div_ column", _div_column),
    _case("add_ transposed", _add_transposed),
    _case("exp_ view of a view", _exp_chained),
    _case("exp_ strided base", _exp_strided_base),
    _case("copy_ via setitem", _copy_setitem),
    _case("index_put_ via setitem", _index_put_setitem),
    _case("base without grad", _base_without_grad),
    _case("two writes", _two_writes),
    _case("view used after", _view_used_after),
]
THIRD_ORDER = [c for c in CASES if c.id in ("mul_ last row", "exp_ view of a view", "two writes")]


def _inputs(lib: Any) -> tuple[Any, Any]:
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal(4)
    return (
        lib.tensor(x, dtype=lib.float64, requires_grad=True),
        lib.tensor(w, dtype=lib.float64, requires_grad=True),
    )


def _weights(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _numpy(t: Any, like: Any) -> np.ndarray:
    return np.zeros(tuple(like.shape)) if t is None else t.detach().numpy()


@pytest.mark.parametrize("case", CASES)
def test_gradgradcheck_through_copy_slices(case: tuple[str, Callable[..., Any]]) -> None:
    _, fn = case
    x, w = _inputs(ember)
    assert gradgradcheck(lambda x, w: fn(ember, x, w), (x, w))


def _derivatives(lib: Any, fn: Callable[..., Any], order: int) -> list[list[np.ndarray]]:
    """Gradients of orders 1..order of fn w.r.t. (x, w), each contracted with fixed random
    weights to a scalar before the next ``grad``."""
    x, w = _inputs(lib)
    out = fn(lib, x, w)
    scalar = (out * lib.tensor(_weights(tuple(out.shape), 0))).sum()
    found = []
    for k in range(order):
        last = k == order - 1
        gs = lib.autograd.grad(scalar, [x, w], create_graph=not last, allow_unused=True)
        found.append([_numpy(g, t) for g, t in zip(gs, (x, w), strict=True)])
        if not last:
            scalar = sum(
                (g * lib.tensor(_weights(tuple(t.shape), 10 * k + i + 1))).sum()
                for i, (g, t) in enumerate(zip(gs, (x, w), strict=True))
                if g is not None
            )
    return found


@requires_torch
@pytest.mark.parametrize("case", CASES)
def test_second_derivatives_match_torch(case: tuple[str, Callable[..., Any]]) -> None:
    _, fn = case
    ours, theirs = _derivatives(ember, fn, 2), _derivatives(torch, fn, 2)
    for got, want in zip(ours, theirs, strict=True):
        for g, t in zip(got, want, strict=True):
            np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)
    assert np.abs(theirs[1][0]).max() > 0  # the cases do have a second derivative in x


@requires_torch
@pytest.mark.parametrize("case", THIRD_ORDER)
def test_third_derivatives_match_torch(case: tuple[str, Callable[..., Any]]) -> None:
    """The write inside CopySlices' own backward is a CopySlices: differentiable again."""
    _, fn = case
    ours, theirs = _derivatives(ember, fn, 3), _derivatives(torch, fn, 3)
    for g, t in zip(ours[2], theirs[2], strict=True):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)
    assert np.abs(theirs[2][0]).max() > 0


def test_create_graph_gradient_has_history() -> None:
    x, w = _inputs(ember)
    b = _mul_first_row(ember, x, w)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    gx, gw = ember.autograd.grad(b.sum(), [x, w], create_graph=True)
    assert gx.requires_grad and gw.requires_grad
    # d(sum(b))/dw = x[0]: its gradient w.r.t. x is one on the first row only
    (hx,) = ember.autograd.grad(gw.sum(), [x])
    np.testing.assert_array_equal(hx.numpy(), np.array([[1.0] * 4, [0.0] * 4, [0.0] * 4]))


def test_first_order_gradient_has_no_history() -> None:
    x, w = _inputs(ember)
    gx, gw = ember.autograd.grad(_mul_first_row(ember, x, w).sum(), [x, w])
    assert not gx.requires_grad and not gw.requires_grad
    np.testing.assert_allclose(gw.numpy(), x.detach().numpy()[0])


def test_double_backward_keeps_the_saved_tensor_check() -> None:
    """The formula's saved tensors are still version-checked when CopySlices runs it."""
    x, w = _inputs(ember)
    b = x.clone()
    b[0].mul_(w)
    with ember.no_grad():
        w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ember.autograd.grad(b.sum(), [x], create_graph=True)


#: views taken before an in-place op rewrote their base's history, then used (NOTE [views
#: of a rewritten base]); each returns a scalar of (x, w)
STALE_VIEWS: dict[str, Callable[[Any, Any], Any]] = {
    "same_row_written_through_another_view": lambda x, w: _rows(x, lambda b: b[0].mul_(2)),
    "base_written_directly": lambda x, w: _rows(x, lambda b: b.mul_(w)),
    "written_through_the_transpose": lambda x, w: _rows(x, lambda b: b.t()[1].add_(w[:3])),
    "view_of_a_view": lambda x, w: _nested(x, w),
    "two_writes": lambda x, w: _rows(x, lambda b: (b[0].mul_(w), b.exp_())),
}


def _rows(x: Any, write: Callable[[Any], Any]) -> Any:
    b = x.clone()
    v0, v1 = b[0], b[:, 1]
    write(b)
    return (v0 * v0).sum() + v1.exp().sum()


def _nested(x: Any, w: Any) -> Any:
    b = x * 1
    inner = b[1:][0]
    b[1].mul_(w)
    return (inner * w).sum()


@requires_torch
@pytest.mark.parametrize("name", sorted(STALE_VIEWS))
def test_views_taken_before_the_write_see_it(name: str) -> None:
    """Gradients, and through create_graph second derivatives, equal PyTorch's."""
    results = []
    for lib in (ember, torch):
        x, w = _inputs(lib)
        out = STALE_VIEWS[name](x, w)
        gx, gw = lib.autograd.grad(out, [x, w], create_graph=True, allow_unused=True)
        second = lib.autograd.grad((gx * gx).sum(), [x], allow_unused=True)[0]
        results.append([None if g is None else g.detach().numpy() for g in (gx, gw, second)])
    for ours, theirs in zip(*results, strict=True):
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@requires_torch
def test_views_of_a_multi_output_view_op_refuse_a_later_write() -> None:
    """``unbind``'s views can't be differentiated after their base was written, as in
    PyTorch (NOTE [view creation meta] in ``ember/autograd/view_rules.py``)."""
    for lib in (ember, torch):
        a = lib.ones(2, 3, requires_grad=True)
        x = a * 1
        rows = x.unbind(0)
        x[1].mul_(5)
        with pytest.raises(RuntimeError, match="Output 0 of Unbind is a view and its base"):
            (rows[0].sum() + rows[1].sum()).backward()


@requires_torch
def test_writes_after_a_write_that_reads_self() -> None:
    """Each row's mul_ reads the row as it was; later writes to other rows don't change it."""
    grads = []
    for lib in (ember, torch):
        x, w = _inputs(lib)
        b = x.clone()
        for i in range(3):
            b[i].mul_(w)
        b.sum().backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    for ours, theirs in zip(grads[0], grads[1], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_an_integer_tensor_written_through_a_view_gets_no_history() -> None:
    """Integer tensors cannot require grad, even when a value that does is copied into a
    view of one (found by the random programs)."""
    x = ember.tensor(0.822, requires_grad=True)
    v = ember.tensor([0]).clone()
    v[:, ...].copy_(x)
    assert not v.requires_grad and v.grad_fn is None and v.tolist() == [0]
