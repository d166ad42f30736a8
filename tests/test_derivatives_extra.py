"""Gradients of einsum, as_strided and scatter(reduce=) against PyTorch, on the cases the
shared op samples miss: ellipsis broadcasting, diagonals, implicit outputs, three operands,
overlapping and offset as_strided views, zeros in a multiplied scatter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from .conftest import requires_torch, torch

pytestmark = requires_torch

F64 = ember.float64


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _leaves(arrays: Sequence[np.ndarray]) -> tuple[list[ember.Tensor], list[Any]]:
    e = [ember.from_numpy(a.copy()).requires_grad_() for a in arrays]
    t = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    return e, t


def _assert_grads_match(
    e_fn: Callable[..., ember.Tensor],
    t_fn: Callable[..., Any],
    arrays: Sequence[np.ndarray],
) -> None:
    """``e_fn`` and ``t_fn`` of the same leaves give the same value and the same gradients
    for a random cotangent."""
    e_in, t_in = _leaves(arrays)
    e_out, t_out = e_fn(*e_in), t_fn(*t_in)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10)
    cot = _rand(*t_out.shape, seed=7)
    e_grads = ember.autograd.grad([e_out], e_in, [ember.from_numpy(cot)], allow_unused=True)
    t_grads = torch.autograd.grad([t_out], t_in, [torch.from_numpy(cot)], allow_unused=True)
    for i, (eg, tg) in enumerate(zip(e_grads, t_grads, strict=True)):
        assert tuple(eg.shape) == tuple(tg.shape), f"input {i}: {eg.shape} vs {tg.shape}"
        np.testing.assert_allclose(
            eg.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"grad of input {i}"
        )


# --------------------------------------------------------------------------- einsum

EINSUM_CASES = [
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 5)]),  # ellipsis of two ranks, size-1 batch
    ("...ij,...jk", [(2, 3), (5, 3, 4)]),  # implicit output with an ellipsis
    ("i...->...", [(3, 2, 4)]),
    ("...ii->...i", [(2, 3, 3)]),  # ellipsis and a diagonal
    ("ii->i", [(4, 4)]),
    ("ii->", [(4, 4)]),
    ("ii", [(3, 3)]),  # implicit trace
    ("iji->j", [(3, 2, 3)]),
    ("iii->i", [(3, 3, 3)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ba", [(2, 3)]),  # implicit output is sorted: a transpose
    ("Ab,bA", [(2, 3), (3, 2)]),  # upper case
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),  # three operands
    ("i,j,k->ijk", [(2,), (3,), (2,)]),
    ("ij,jk,kl", [(2, 3), (3, 4), (4, 2)]),
    ("ij->i", [(3, 4)]),  # a subscript summed away
    ("ij,k->", [(2, 3), (4,)]),
    ("ij,ij->ij", [(1, 3), (4, 3)]),  # a size-1 subscript broadcasts
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]),
    (",i->i", [(), (3,)]),  # a 0-dim operand
    (" i j , j k -> k i ", [(2, 3), (3, 4)]),
    ("ij,jk->ik", [(0, 3), (3, 2)]),  # empty
]


@pytest.mark.parametrize(("equation", "shapes"), EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_gradients_match_torch(equation: str, shapes: list[tuple[int, ...]]) -> None:
    arrays = [_rand(*s, seed=i) for i, s in enumerate(shapes)]
    _assert_grads_match(
        lambda *xs: ember.einsum(equation, list(xs)),
        lambda *xs: torch.einsum(equation, *xs),
        arrays,
    )


def test_einsum_same_tensor_twice() -> None:
    """An operand passed twice gets both of its gradients."""
    a = _rand(3, 3)
    _assert_grads_match(
        lambda x: ember.einsum("ij,jk,ki->", [x, x, x]),
        lambda x: torch.einsum("ij,jk,ki->", x, x, x),
        [a],
    )


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]), ("ii,ij->j", [(3, 3), (3, 2)])],
)
def test_einsum_double_backward_matches_torch(equation: str, shapes: list[tuple[int, ...]]) -> None:
    """The first gradient differentiates again, to PyTorch's second derivatives."""
    arrays = [_rand(*s, seed=i) for i, s in enumerate(shapes)]
    e_in, t_in = _leaves(arrays)
    cot = _rand(*torch.einsum(equation, *t_in).shape, seed=3)
    e_cot = ember.from_numpy(cot).requires_grad_()
    t_cot = torch.from_numpy(cot).requires_grad_()
    e_g = ember.autograd.grad([ember.einsum(equation, e_in)], e_in, [e_cot], create_graph=True)
    t_g = torch.autograd.grad([torch.einsum(equation, *t_in)], t_in, [t_cot], create_graph=True)
    weights = [_rand(*s, seed=10 + i) for i, s in enumerate(shapes)]
    e_sum = sum((g * ember.from_numpy(w)).sum() for g, w in zip(e_g, weights, strict=True))
    t_sum = sum((g * torch.from_numpy(w)).sum() for g, w in zip(t_g, weights, strict=True))
    e_gg = ember.autograd.grad([e_sum], [*e_in, e_cot])
    t_gg = torch.autograd.grad([t_sum], [*t_in, t_cot])
    for i, (eg, tg) in enumerate(zip(e_gg, t_gg, strict=True)):
        np.testing.assert_allclose(eg.numpy(), tg.numpy(), rtol=1e-10, err_msg=f"input {i}")


def test_einsum_gradgradcheck() -> None:
    a = ember.from_numpy(_rand(2, 3, 3)).requires_grad_()
    b = ember.from_numpy(_rand(3, 1)).requires_grad_()
    assert gradgradcheck(lambda a, b: ember.einsum("...ii,ij->...j", [a, b]), (a, b))


# --------------------------------------------------------------------------- as_strided

AS_STRIDED_CASES = [
    ((3, 4), (3, 3), (1, 1), 2),  # overlapping output, offset
    ((3, 4), (2, 3), (0, 1), None),  # stride 0: every row reads the same elements
    ((3, 4), (2, 2), (4, 1), 6),
    ((3, 4), (0, 2), (1, 1), 3),  # empty output
    ((12,), (3, 4), (1, 3), 0),  # reading past what a row covers: overlap of 4 elements
]


@pytest.mark.parametrize(("shape", "size", "stride", "offset"), AS_STRIDED_CASES)
def test_as_strided_gradients_match_torch(
    shape: tuple[int, ...], size: tuple[int, ...], stride: tuple[int, ...], offset: int | None
) -> None:
    _assert_grads_match(
        lambda x: x.as_strided(size, stride, offset),
        lambda x: x.as_strided(size, stride, offset),
        [_rand(*shape)],
    )


def _view_leaf(module: Any, data: np.ndarray, size: tuple[int, ...], stride: tuple[int, ...],
               offset: int) -> Any:  # fmt: skip
    """A leaf that requires grad and is a view into a bigger storage, at ``offset``."""
    base = module.from_numpy(data.copy())
    return base.as_strided(size, stride, offset).requires_grad_()


@pytest.mark.parametrize(
    ("size", "stride", "offset"),
    [
        ((2, 3), (3, 1), 7),  # inside the input's elements
        ((2, 3), (1, 2), 2),  # starts before the input: those elements get nothing
        ((3,), (5,), None),  # the input's own offset
        ((4, 4), (1, 1), 4),  # overlapping output straddling the input's start
    ],
)
def test_as_strided_of_a_view_with_storage_offset(
    size: tuple[int, ...], stride: tuple[int, ...], offset: int | None
) -> None:
    """The input is a (3, 4) view at storage offset 5, every other column of a wider row."""
    data = _rand(40)
    e_x = _view_leaf(ember, data, (3, 4), (8, 2), 5)
    t_x = _view_leaf(torch, data, (3, 4), (8, 2), 5)
    assert e_x.storage_offset() == t_x.storage_offset() == 5
    e_out, t_out = e_x.as_strided(size, stride, offset), t_x.as_strided(size, stride, offset)
    np.testing.assert_array_equal(e_out.detach().numpy(), t_out.detach().numpy())
    cot = _rand(*size, seed=4)
    (e_g,) = ember.autograd.grad([e_out], [e_x], [ember.from_numpy(cot)])
    (t_g,) = torch.autograd.grad([t_out], [t_x], [torch.from_numpy(cot)])
    np.testing.assert_allclose(e_g.numpy(), t_g.numpy(), rtol=1e-12)


def test_as_strided_of_an_overlapping_input() -> None:
    """An input whose elements share storage (an expanded view) shares their gradient."""

    def fn(module: Any) -> Callable[[Any], Any]:
        return lambda x: x.expand(3, 4).as_strided((2, 3), (1, 1), 0)

    _assert_grads_match(fn(ember), fn(torch), [_rand(4)])


def test_as_strided_of_a_nonleaf_view() -> None:
    """Through a slice of a leaf: the gradient reaches the slice's elements, as in PyTorch."""

    def fn(x: Any) -> Any:
        return x[3:15].view(3, 4).as_strided((3, 3), (2, 1), 4)

    _assert_grads_match(fn, fn, [_rand(20)])


def test_as_strided_gradcheck_and_gradgradcheck() -> None:
    x = ember.from_numpy(_rand(3, 4)).requires_grad_()
    assert gradcheck(lambda x: x.as_strided((3, 3), (1, 1), 2), (x,))
    assert gradgradcheck(lambda x: x.as_strided((3, 3), (1, 1), 2) ** 2, (x,))


# --------------------------------------------------------------------------- scatter(reduce=)
# PyTorch has no derivative for scatter(reduce=...); scatter_reduce(include_self=True) with
# "sum" / "prod" computes the same function and has one, so it is the oracle here.

_TORCH_REDUCE = {"add": "sum", "multiply": "prod"}
_INDEX = np.array([[0, 0, 1, 3], [2, 2, 2, 1], [3, 0, 3, 0]])


def _scatter_src(reduce: str, src: np.ndarray, self: np.ndarray | None = None) -> None:
    idx_e, idx_t = ember.from_numpy(_INDEX), torch.from_numpy(_INDEX)
    _assert_grads_match(
        lambda x, s: x.scatter(1, idx_e, s, reduce=reduce),
        lambda x, s: x.scatter_reduce(1, idx_t, s, _TORCH_REDUCE[reduce]),
        [_rand(3, 5) if self is None else self, src],
    )


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_gradients_match_scatter_reduce(reduce: str) -> None:
    _scatter_src(reduce, _rand(3, 4, seed=1))


def test_scatter_multiply_gradients_with_zeros() -> None:
    """A lone zero in its slot gets the product of the others; two zeros give zeros."""
    src = _rand(3, 4, seed=1)
    src[0, 0] = 0.0  # row 0, slot 0: one zero among two values
    src[1, 0] = src[1, 1] = 0.0  # row 1, slot 2: two zeros among three values
    self = _rand(3, 5)
    self[2, 3] = 0.0  # a zero in self's slot
    _scatter_src("multiply", src, self)


def test_scatter_src_larger_than_index() -> None:
    """src may be larger than index: the part index does not read gets a zero gradient."""
    idx = np.array([[2, 0, 1]])
    for reduce in ("add", "multiply"):
        _assert_grads_match(
            lambda x, s, r=reduce: x.scatter(0, ember.from_numpy(idx), s, reduce=r),
            lambda x, s, r=reduce: x.scatter_reduce(
                0, torch.from_numpy(idx), s[:1, :3], _TORCH_REDUCE[r]
            ),
            [_rand(3, 4), _rand(2, 5, seed=1)],
        )


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_value_reduce_gradients(reduce: str) -> None:
    idx_e, idx_t = ember.from_numpy(_INDEX), torch.from_numpy(_INDEX)
    value = torch.full(_INDEX.shape, 1.5, dtype=torch.float64)
    _assert_grads_match(
        lambda x: x.scatter(1, idx_e, 1.5, reduce=reduce),
        lambda x: x.scatter_reduce(1, idx_t, value, _TORCH_REDUCE[reduce]),
        [_rand(3, 5)],
    )


def test_scatter_multiply_gradgradcheck() -> None:
    idx = ember.from_numpy(_INDEX)
    x = ember.from_numpy(_rand(3, 5)).requires_grad_()
    s = ember.from_numpy(_rand(3, 4, seed=1)).requires_grad_()
    assert gradgradcheck(lambda x, s: x.scatter(1, idx, s, reduce="multiply"), (x, s))


def test_torch_has_no_scatter_reduce_derivative() -> None:
    """Why the oracle above is scatter_reduce: if PyTorch gains a derivative for
    scatter(reduce=), compare with it directly instead."""
    x = torch.ones(3, 5, dtype=torch.float64, requires_grad=True)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="not implemented"):
        y = x.scatter(1, torch.from_numpy(_INDEX), torch.ones(3, 4, dtype=torch.float64),
                      reduce="multiply")  # fmt: skip
        y.sum().backward()


def test_xlog1py_gradient_with_a_uint8_other_at_zero() -> None:
    """``xlog1py(0, other)``'s gradient is ``log1p(other)`` unless ``other <= -1``; a uint8
    ``other`` is compared as a number (ember compared it in uint8, where -1 is 255, and
    zeroed the gradient; found by a random program)."""
    other = np.array([25, 0, 3], dtype=np.uint8)
    e_x = ember.tensor([0.0, 0.0, -2.5], requires_grad=True)
    t_x = torch.tensor([0.0, 0.0, -2.5], requires_grad=True)
    ember.special.xlog1py(e_x, ember.from_numpy(other)).sum().backward()
    torch.special.xlog1py(t_x, torch.from_numpy(other)).sum().backward()
    np.testing.assert_allclose(e_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-6)
