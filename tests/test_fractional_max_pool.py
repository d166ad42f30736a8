"""``F.fractional_max_pool2d``/``3d`` and ``nn.FractionalMaxPool2d``/``3d`` against PyTorch:
with ``_random_samples`` given, outputs and indices equal PyTorch's exactly (values, int64
indices, NaN and -inf windows), gradients scatter to the argmax (overlapping windows add),
``output_ratio``, drawn samples, the modules, and the refusals (NOTE [fractional max
pooling])."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")

CASES = [
    (2, (2, 3, 9, 11), (2, 3), (4, 5)),
    (2, (3, 7, 8), (3, 2), (5, 6)),  # unbatched
    (2, (1, 2, 10, 10), (4, 4), (7, 7)),  # heavily overlapping windows
    (2, (2, 1, 6, 6), (2, 2), (5, 5)),  # kernel + output - 1 == input
    (3, (2, 2, 7, 8, 9), (2, 3, 2), (4, 3, 5)),
    (3, (2, 6, 7, 8), (1, 2, 3), (5, 5, 5)),  # unbatched
    (3, (1, 2, 6, 6, 6), (3, 3, 3), (3, 3, 3)),
]


def _pool(lib, n, x, k, o, s, g=None):  # type: ignore[no-untyped-def]
    xx = lib.tensor(x, requires_grad=True)
    fn = getattr(lib.nn.functional, f"fractional_max_pool{n}d")
    out, idx = fn(xx, k, output_size=o, return_indices=True, _random_samples=lib.tensor(s))
    out.backward(lib.tensor(g) if g is not None else lib.ones_like(out))
    return out.detach().numpy(), idx.numpy(), xx.grad.numpy()


def _inputs(n, shape, seed, dtype="float32"):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    batch = shape[0] if len(shape) == n + 2 else 1
    s = rng.random((batch + 1, shape[-n - 1], n)).astype(dtype)  # more samples than batch
    return rng, x, s


@pytest.mark.parametrize("n, shape, k, o", CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_equals_torch_with_given_samples(n, shape, k, o, dtype) -> None:  # type: ignore[no-untyped-def]
    rng, x, s = _inputs(n, shape, len(shape) + k[0], dtype)
    shape_out = tuple(shape[: len(shape) - n]) + tuple(o)
    g = rng.standard_normal(shape_out).astype(dtype)
    e = _pool(ember, n, x, list(k), list(o), s, g)
    t = _pool(torch, n, x, list(k), list(o), s, g)
    np.testing.assert_array_equal(e[0], t[0])
    np.testing.assert_array_equal(e[1], t[1])
    assert e[1].dtype == np.int64
    np.testing.assert_allclose(e[2], t[2], rtol=1e-6, atol=1e-6)


def test_nan_and_minus_inf_windows_equal_torch() -> None:
    """The last NaN of a window wins; an all -inf window reports its first position; ties
    report the first of the largest values."""
    x = np.zeros((1, 2, 6, 6), np.float32)
    x[0, 0, 0:2, 0:2] = [[1.0, np.nan], [np.nan, 2.0]]
    x[0, 0, 3:, 3:] = -np.inf
    x[0, 1] = 1.0  # every window ties
    s = np.array([[[0.5, 0.5], [0.2, 0.7]]], np.float32)
    for k, o in (((2, 2), (3, 3)), ((3, 3), (4, 4)), ((2, 3), (5, 4))):
        e = _pool(ember, 2, x, list(k), list(o), s)
        t = _pool(torch, 2, x, list(k), list(o), s)
        for a, b in zip(e, t, strict=True):
            np.testing.assert_array_equal(a, b)


def test_output_ratio_and_drawn_samples() -> None:
    F = ember.nn.functional
    x = ember.randn(2, 3, 10, 9)
    out = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.7))
    assert (
        out.shape
        == torch.nn.functional.fractional_max_pool2d(
            torch.randn(2, 3, 10, 9), 2, output_ratio=(0.5, 0.7)
        ).shape
    )
    # drawn samples are ember.rand's: the same seed draws the same windows
    ember.manual_seed(3)
    a, ia = F.fractional_max_pool3d(ember.randn(1, 2, 6, 7, 8), 2, output_size=3,
                                    return_indices=True)  # fmt: skip
    ember.manual_seed(3)
    b, ib = F.fractional_max_pool3d(ember.randn(1, 2, 6, 7, 8), 2, output_size=3,
                                    return_indices=True)  # fmt: skip
    assert ember.equal(a, b) and ember.equal(ia, ib)
    with pytest.raises(TypeError):  # PyTorch takes len() of output_ratio in 2-d too
        F.fractional_max_pool2d(x, 2, output_ratio=0.5)
    with pytest.raises(ValueError, match="either an output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)


@pytest.mark.parametrize("n", [2, 3])
def test_modules_match_torch(n: int) -> None:
    shape = (2, 3, 8, 9, 7)[: n + 2]
    rng, x, s = _inputs(n, shape, 11)
    for kw in ({"output_size": 3}, {"output_ratio": 0.5}):
        cls_e = getattr(ember.nn, f"FractionalMaxPool{n}d")
        cls_t = getattr(torch.nn, f"FractionalMaxPool{n}d")
        me = cls_e(2, return_indices=True, _random_samples=ember.tensor(s), **kw)
        mt = cls_t(2, return_indices=True, _random_samples=torch.tensor(s), **kw)
        (oe, ie), (ot, it) = me(ember.tensor(x)), mt(torch.tensor(x))
        np.testing.assert_array_equal(oe.numpy(), ot.numpy())
        np.testing.assert_array_equal(ie.numpy(), it.numpy())
        assert "_random_samples" in dict(me.named_buffers())
    with pytest.raises(ValueError, match="between 0 and 1"):
        getattr(ember.nn, f"FractionalMaxPool{n}d")(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of"):
        getattr(ember.nn, f"FractionalMaxPool{n}d")(2, output_size=2, output_ratio=0.5)


@pytest.mark.parametrize("n", [2, 3])
def test_double_backward(n: int) -> None:
    """The backward op's derivative reads the incoming gradient at each argmax."""
    shape = (1, 2, 7, 7, 7)[: n + 2]
    _, x, s = _inputs(n, shape, 5, "float64")
    res = []
    for lib in (ember, torch):
        xx = lib.tensor(x, requires_grad=True)
        fn = getattr(lib.nn.functional, f"fractional_max_pool{n}d")
        out = fn(xx, 2, output_size=4, _random_samples=lib.tensor(s))
        g = lib.ones_like(out, requires_grad=True)
        (gx,) = lib.autograd.grad(out, xx, g, create_graph=True)
        (gg,) = lib.autograd.grad((gx * lib.tensor(x)).sum(), g)
        res.append(gg.detach().numpy())
    np.testing.assert_allclose(res[0], res[1])


def test_refusals_name_the_op_and_shapes() -> None:
    A = ember.ops.aten
    x = ember.ones(1, 1, 4, 4)
    s = ember.rand(1, 1, 2)
    cases = [
        (lambda: A.fractional_max_pool2d(x, [3, 3], [3, 3], s), "pool height 3 too large"),
        (lambda: A.fractional_max_pool2d(x, [2, 2], [3, 3], s.double()), "same dtype"),
        (lambda: A.fractional_max_pool2d(x, [2, 2], [3, 3], ember.rand(1, 2, 2)), "size.1."),
        (lambda: A.fractional_max_pool2d(ember.ones(4, 4), [2, 2], [3, 3], s), "3D or 4D"),
        (lambda: A.fractional_max_pool2d(ember.ones(2, 1, 4, 4), [2, 2], [3, 3], s), "size.0."),
        (lambda: A.fractional_max_pool2d(x, [2, 2], [3, 3], ember.rand(1, 1, 3)), "size.2."),
        (
            lambda: A.fractional_max_pool3d(
                ember.ones(1, 1, 4, 4, 4), [2] * 3, [3] * 3, ember.rand(1, 1, 3)
            ),
            "pool time 2",
        ),  # fmt: skip
    ]
    for fn, match in cases:
        with pytest.raises(RuntimeError, match=match):
            fn()
    with pytest.raises(NotImplementedError, match="fractional_max_pool2d"):
        A.fractional_max_pool2d(ember.ones(1, 1, 4, 4, dtype=ember.int64), [2, 2], [3, 3],
                                ember.ones(1, 1, 2, dtype=ember.int64))  # fmt: skip
    out, idx = A.fractional_max_pool2d(x, [2, 2], [3, 3], s)
    with pytest.raises(RuntimeError, match="fractional_max_pool2d_backward.*grad_output"):
        A.fractional_max_pool2d_backward(ember.ones(1, 1, 3, 2), x, [2, 2], [3, 3], idx)
