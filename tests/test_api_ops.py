"""The tensor ops and autograd API of issue 18 that scripts reach for next: behaviour the op
samples (``tests/test_ops.py``) cannot show, compared with PyTorch where it is deterministic
and checked for its distribution where it is random."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

# --------------------------------------------------------------------------- multinomial


def test_multinomial_with_replacement_follows_the_weights() -> None:
    w = ember.tensor([0.5, 1.0, 0.0, 2.5])  # unnormalised weights
    draws = ember.multinomial(w.expand(4000, 4), 5, replacement=True)
    assert draws.shape == (4000, 5) and draws.dtype is ember.int64
    freq = np.bincount(draws.numpy().ravel(), minlength=4) / draws.numel()
    np.testing.assert_allclose(freq, [0.125, 0.25, 0.0, 0.625], atol=0.015)


def test_multinomial_without_replacement_draws_distinct_categories() -> None:
    w = ember.tensor([[0.0, 1.0, 3.0, 0.0, 6.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    draws = w.multinomial(3)  # the method
    for row in draws.numpy():
        assert len(set(row)) == 3
    big = ember.multinomial(w[0].expand(3000, 5), 4)
    rows = big.numpy()
    assert all(len(set(r)) == 4 for r in rows)
    # the three categories of nonzero weight come first, in draws proportional to weight
    assert set(rows[:, :3].ravel()) == {1, 2, 4}
    first = np.bincount(rows[:, 0], minlength=5) / len(rows)
    np.testing.assert_allclose(first, [0, 0.1, 0.3, 0, 0.6], atol=0.03)


def test_multinomial_generator_reproduces_and_out_writes() -> None:
    w = ember.tensor([0.2, 0.3, 0.5])
    g = ember.Generator().manual_seed(7)
    a = ember.multinomial(w, 10, True, generator=g)
    g.manual_seed(7)
    b = ember.multinomial(w, 10, True, generator=g)
    assert ember.equal(a, b)
    out = ember.empty(0, dtype=ember.int64)
    r = ember.multinomial(w, 2, out=out)
    assert r is out and out.shape == (2,)


@requires_torch
@pytest.mark.parametrize(
    "weights, n, replacement",
    [
        ([1.0, -1.0], 1, False),
        ([1.0, float("nan")], 1, True),
        ([1.0, float("inf")], 1, False),
        ([0.0, 0.0], 1, True),
        ([1.0, 2.0], 0, True),
        ([1.0, 2.0], 3, False),
        ([[[1.0]]], 1, True),
    ],
)
def test_multinomial_refuses_as_torch(weights: list, n: int, replacement: bool) -> None:
    with pytest.raises(RuntimeError) as t_err:
        torch.multinomial(torch.tensor(weights), n, replacement)
    with pytest.raises(RuntimeError) as e_err:
        ember.multinomial(ember.tensor(weights), n, replacement)
    assert str(t_err.value).split(" (")[0] in str(e_err.value)


# --------------------------------------------------------------------------- compositions


def _grads(lib, fn, *arrays):  # noqa: ANN001, ANN202 - one helper for both libraries
    leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    weights = [lib.arange(o.numel(), dtype=lib.float64).reshape(o.shape) for o in outs]
    sum(((o * w).sum() for o, w in zip(outs, weights, strict=True)), lib.tensor(0.0)).backward()
    return [o.detach().numpy() for o in outs], [leaf.grad.numpy() for leaf in leaves]


COMPOSITIONS = {
    "tile": (lambda t, x: t.tile(x, (2, 1, 2)), [np.arange(6.0).reshape(2, 3)]),
    "sum_to_size": (lambda t, x: x.sum_to_size(3, 1), [np.arange(24.0).reshape(2, 3, 4)]),
    "broadcast_tensors": (
        lambda t, x, y: t.broadcast_tensors(x, y),
        [np.arange(2.0).reshape(2, 1), np.arange(3.0)],
    ),
    "chain_matmul": (
        lambda t, a, b, c: t.chain_matmul(a, b, c),
        [np.ones((2, 3)), np.arange(12.0).reshape(3, 4), np.arange(4.0).reshape(4, 1)],
    ),
    "trapz": (lambda t, y, x: t.trapz(y, x), [np.arange(8.0).reshape(2, 4), [0, 1, 3, 4.0]]),
    "ger": (lambda t, a, b: t.ger(a, b), [np.arange(3.0), np.arange(2.0)]),
    "row_stack": (lambda t, a, b: t.row_stack((a, b)), [np.arange(3.0), np.ones(3)]),
    "dist": (lambda t, a, b: t.dist(a, b, 3), [np.arange(3.0), np.ones(3)]),
    "renorm": (lambda t, a: a.renorm(2, 0, 3.0), [np.arange(6.0).reshape(2, 3) - 1]),
    # (non-negative integer exponents: PyTorch's gradient takes 2 ** -2 in integers, 0)
    "ldexp": (lambda t, a: t.ldexp(a, t.tensor([1, 0, 3])), [np.arange(3.0)]),
    "fill_diagonal_": (lambda t, a: (a * 1).fill_diagonal_(2.0, True), [np.ones((5, 2))]),
    "matrix_exp": (lambda t, a: a.matrix_exp(), [np.arange(4.0).reshape(2, 2) / 4]),
}


@requires_torch
@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_compositions_and_their_gradients_match_torch(name: str) -> None:
    fn, arrays = COMPOSITIONS[name]
    e_vals, e_grads = _grads(ember, fn, *arrays)
    t_vals, t_grads = _grads(torch, fn, *arrays)
    for e, t in zip(e_vals + e_grads, t_vals + t_grads, strict=True):
        np.testing.assert_allclose(e, t)


@requires_torch
def test_where_of_a_condition_alone_is_nonzero_as_a_tuple() -> None:
    c = [[0, 1, 2], [3, 0, 0]]
    e, t = ember.where(ember.tensor(c)), torch.where(torch.tensor(c))
    assert isinstance(e, tuple) and len(e) == len(t) == 2
    for a, b in zip(e, t, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert ember.where(ember.tensor(2.0))[0].tolist() == [0]


def test_broadcast_tensors_returns_an_input_of_the_right_shape_itself() -> None:
    a, b = ember.ones(2, 3), ember.ones(3)
    ra, rb = ember.broadcast_tensors(a, b)
    assert ra is a and rb._base is b and rb.stride() == (0, 1)
    x = ember.ones(2, 3, requires_grad=True)
    assert x.sum_to_size(2, 3) is x


def test_chain_matmul_warns_once_it_is_deprecated() -> None:
    linalg_ops = importlib.import_module("ember.ops.native.linalg")
    linalg_ops._warned_chain_matmul.clear()
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        ember.chain_matmul(ember.ones(2, 2), ember.ones(2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.chain_matmul(ember.ones(2, 2))


# --------------------------------------------------------------------------- in-place views


@requires_torch
def test_in_place_view_ops_rebase_history_as_torch() -> None:
    def run(lib):  # noqa: ANN001, ANN202
        x = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_()
        y = x * 2
        r = y.unsqueeze_(0)
        assert r is y
        y.t_() if y.dim() == 2 else y.squeeze_(0)
        y.transpose_(0, 1)
        z = x * 3
        v = z[1]  # a view: made 2-D in place, then written through
        v.unsqueeze_(-1)
        v.mul_(lib.tensor([[2.0], [3.0], [4.0]], dtype=lib.float64))
        loss = (y * lib.arange(6.0, dtype=lib.float64).reshape(3, 2)).sum() + (z * z).sum()
        loss.backward()
        return y.shape, v.shape, z.detach().numpy(), x.grad.numpy(), y._version

    e, t = run(ember), run(torch)
    assert tuple(e[0]) == tuple(t[0]) and tuple(e[1]) == tuple(t[1]) and e[4] == t[4]
    np.testing.assert_allclose(e[2], t[2])
    np.testing.assert_allclose(e[3], t[3])


def test_in_place_view_ops_refuse_a_leaf_that_requires_grad() -> None:
    x = ember.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.t_()
    with ember.no_grad():
        x.t_()
    assert x.shape == (3, 2) and x.is_leaf


# --------------------------------------------------------------------------- scatter reductions


@requires_torch
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_in_place_with_ties_and_zeros_matches_torch(
    reduce: str, include_self: bool
) -> None:
    def run(lib):  # noqa: ANN001, ANN202
        x = lib.tensor([[1.0, 0.0, 3.0], [2.0, 2.0, -1.0]], dtype=lib.float64).requires_grad_()
        s = lib.tensor([[2.0, 0.0, 3.0], [2.0, 5.0, 0.0]], dtype=lib.float64).requires_grad_()
        idx = lib.tensor([[0, 1, 0], [0, 1, 1]])
        y = x.clone()
        r = y.scatter_reduce_(0, idx, s, reduce, include_self=include_self)
        assert r is y
        (y * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        return y.detach().numpy(), x.grad.numpy(), s.grad.numpy()

    for e, t in zip(run(ember), run(torch), strict=True):
        np.testing.assert_allclose(e, t)


def test_put_writes_at_row_major_positions_of_a_transposed_tensor() -> None:
    x = ember.zeros(2, 3).t()  # (3, 2), column-major: put still counts row-major
    x.put_(ember.tensor([1, 4]), ember.tensor([7.0, 8.0]))
    assert x.tolist() == [[0.0, 7.0], [0.0, 0.0], [8.0, 0.0]]


# --------------------------------------------------------------------------- memory, autograd


def test_constants_are_torchs() -> None:
    import math

    assert (ember.pi, ember.e, ember.inf) == (math.pi, math.e, math.inf)
    assert math.isnan(ember.nan) and ember.newaxis is None
    assert ember.ones(2)[ember.newaxis].shape == (1, 2)


def test_memory_placement_answers_as_a_cpu_only_torch() -> None:
    x = ember.ones(3)
    assert not x.is_pinned() and not x.is_shared()
    with pytest.raises(RuntimeError, match="accelerator"):
        x.pin_memory()
    assert x.share_memory_() is x and x.is_shared() and x[1:].is_shared()
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        importlib.import_module("ember._memory")._warned_typed.clear()
        s = x.storage()
    assert s.size() == len(s) == 3 and s.tolist() == [1.0, 1.0, 1.0] and s.dtype is ember.float32


def test_variable_is_an_alias_of_tensor() -> None:
    x = ember.ones(2)
    v = ember.autograd.Variable(x, requires_grad=True)
    assert type(v) is ember.Tensor and v.requires_grad and v.is_leaf
    assert isinstance(x, ember.autograd.Variable)
    assert issubclass(ember.nn.Parameter, ember.autograd.Variable)
    v.data[0] = 5.0  # the same memory
    assert x[0].item() == 5.0


@requires_torch
def test_post_accumulate_grad_hooks_run_after_accumulation_as_torch() -> None:
    def run(lib):  # noqa: ANN001, ANN202
        w = lib.ones(2, requires_grad=True)
        seen = []
        h = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone().tolist()))
        (w * 3).sum().backward()
        (w * w).sum().backward()
        h.remove()
        (w * 2).sum().backward()
        with pytest.raises(RuntimeError):
            (w * 2).register_post_accumulate_grad_hook(print)
        return seen

    assert run(ember) == run(torch)


def test_ldexp_gradient_of_a_negative_integer_exponent_is_the_true_one() -> None:
    x = ember.tensor([1.0, 1.0], requires_grad=True)
    ember.ldexp(x, ember.tensor([-2, 1])).sum().backward()
    assert x.grad.tolist() == [0.25, 2.0]  # PyTorch 2.13 gives [0.0, 2.0] (docs/fidelity.md)
