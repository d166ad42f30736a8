"""Regression tests for issue 13's wrong answers and their classes, against PyTorch.

- NumPy scalars as tensor data (NOTE [kernel results are arrays] in ``ember/_tensor.py``);
- derivatives that divide by an input or output, at zeros (NOTE [derivatives at zeros] in
  ``ember/autograd/derivatives.py``);
- undefined gradients of unused outputs (NOTE [undefined output gradients] in
  ``ember/autograd/engine.py``);
- type promotion in multi-operand ops (einsum and friends).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember._tensor import wrap, wrap_view

from .conftest import requires_torch, torch

INF, NAN = math.inf, math.nan

# --------------------------------------------------------------------------- NumPy scalars


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.argmax(0),
        lambda t: t.argmin(0),
        lambda t: t.argmax(-1, keepdim=False),
        lambda t: t.max(0).values,
        lambda t: t.max(0).indices,
        lambda t: t.min(0).values,
        lambda t: t.min(0).indices,
        lambda t: t.argmax(),
        lambda t: t.sum(0),
        lambda t: t.prod(0),
        lambda t: t.amax(0),
        lambda t: t.logsumexp(0),
        lambda t: t.std(0),
        lambda t: ember.var_mean(t, 0)[1],
        lambda t: t.all(0),
        lambda t: t[1],
    ],
)
def test_reductions_of_1d_give_0d_tensors_with_data(call: Callable[[Any], Any]) -> None:
    r = call(ember.tensor([0.5, 2.0]))
    assert type(r._edata) is np.ndarray and r._edata.ndim == 0
    assert r.shape == ()
    float(r.item())  # item, numpy and repr work
    assert r.numpy().shape == ()
    assert repr(r).startswith("tensor(")


@requires_torch
def test_argmax_of_1d_matches_torch() -> None:
    e, t = ember.tensor([0.5, 2.0, -1.0]), torch.tensor([0.5, 2.0, -1.0])
    assert e.argmax(0).item() == t.argmax(0).item() == 1
    assert e.argmin(0).item() == t.argmin(0).item() == 2
    values, indices = e.max(0)
    assert (values.item(), indices.item()) == (2.0, 1)
    assert indices.dtype is ember.int64


def test_wrap_makes_numpy_scalars_0d_arrays() -> None:
    t = wrap(np.float32(2.5))  # type: ignore[arg-type]
    assert type(t._edata) is np.ndarray and t.dtype is ember.float32 and t.item() == 2.5
    assert wrap(np.int64(3)).dtype is ember.int64


def test_wrap_refuses_what_is_not_an_array() -> None:
    with pytest.raises(TypeError, match="internal error: a kernel returned list"):
        wrap([1.0, 2.0])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="internal error: a kernel returned float"):
        wrap(1.0)  # type: ignore[arg-type]


def test_wrap_view_refuses_a_numpy_scalar() -> None:
    base = ember.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="view of a NumPy scalar"):
        wrap_view(base, base._edata[0])
    v = wrap_view(base, base._edata[0, ...])  # a 0-d view: writes reach the base
    v._edata[...] = 5.0
    assert base.tolist() == [5.0, 2.0]


def test_wrap_takes_an_ndarray_subclass_as_a_plain_array_over_the_same_memory() -> None:
    class Sub(np.ndarray):
        pass

    arr = np.zeros(3, np.float32).view(Sub)
    t = wrap(arr)
    assert type(t._edata) is np.ndarray
    arr[0] = 1.0
    assert t.tolist() == [1.0, 0.0, 0.0]


# --------------------------------------------------------------------------- gradients


def _grads(module: Any, fn: Callable[..., Any], inputs: list[Any], which: int | None) -> list[Any]:
    leaves = [module.tensor(x, dtype=module.float64, requires_grad=True) for x in inputs]
    out = fn(module, *leaves)
    if isinstance(out, (tuple, list)):
        out = out[which if which is not None else 0]
    out.sum().backward()
    return [None if x.grad is None else x.grad.detach().numpy() for x in leaves]


def _vector_norm(m: Any, x: Any, p: float, dim: Any = None, keepdim: bool = False) -> Any:
    if m is torch:
        return torch.linalg.vector_norm(x, p, dim, keepdim)
    return ember.ops.aten.linalg_vector_norm.default(x, p, dim, keepdim)


def _pow_scalar(m: Any, base: float, exponent: Any) -> Any:
    return (torch if m is torch else ember).ops.aten.pow.Scalar(base, exponent)


#: (name, fn(module, *inputs), inputs, which output to use)
GRADIENT_CASES: list[tuple[str, Callable[..., Any], list[Any], int | None]] = [
    ("prod one zero", lambda m, x: x.prod(), [[0.0, 2.0, 3.0]], None),
    ("prod two zeros", lambda m, x: x.prod(), [[0.0, 2.0, 0.0]], None),
    ("prod negative zero", lambda m, x: x.prod(), [[-0.0, 2.0, 3.0]], None),
    ("prod inf and zero", lambda m, x: x.prod(), [[INF, 0.0, 3.0]], None),
    ("prod 0-dim zero", lambda m, x: x.prod(), [0.0], None),
    ("prod dim", lambda m, x: x.prod(1), [[[0.0, 2.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3]]], None),
    ("prod dim keepdim", lambda m, x: x.prod(0, keepdim=True), [[[0.0, 2.0], [0.0, 0.0]]], None),
    ("prod dim of 0-dim", lambda m, x: x.prod(0), [0.0], None),
    ("prod dtype", lambda m, x: x.prod(dtype=m.float32), [[0.0, 2.0, 3.0]], None),
    ("cumprod one zero", lambda m, x: x.cumprod(0), [[0.0, 2.0, 3.0]], None),
    ("cumprod two zeros", lambda m, x: x.cumprod(0), [[2.0, 0.0, 3.0, 0.0, 5.0]], None),
    ("cumprod 2-D", lambda m, x: x.cumprod(1), [[[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]]], None),
    ("cumprod 0-dim zero", lambda m, x: x.cumprod(0), [0.0], None),
    ("std constant", lambda m, x: x.std(), [[2.0, 2.0, 2.0]], None),
    ("std dim constant row", lambda m, x: x.std(1), [[[2.0, 2.0], [1.0, 3.0]]], None),
    ("std one element, correction 0", lambda m, x: x.std(correction=0), [[2.0]], None),
    ("std one element, correction 1", lambda m, x: x.std(), [[2.0]], None),
    ("var no degrees of freedom", lambda m, x: x.var(correction=2), [[2.0, 3.0]], None),
    ("std_mean constant, both used", lambda m, x: sum(m.std_mean(x, 1)), [[[1.0, 1.0]]], None),
    ("norm 2 at zero", lambda m, x: _vector_norm(m, x, 2), [[0.0, -0.0]], None),
    ("norm 2 dim at zero", lambda m, x: _vector_norm(m, x, 2, 1), [[[0.0, 0.0], [3.0, 4.0]]], None),
    ("norm 3 at zero", lambda m, x: _vector_norm(m, x, 3), [[0.0, 0.0]], None),
    ("norm 1.5 at zero", lambda m, x: _vector_norm(m, x, 1.5), [[-0.0, 0.0]], None),
    ("norm 0.5 with a zero", lambda m, x: _vector_norm(m, x, 0.5), [[0.0, 1.0]], None),
    ("norm -1 with a zero", lambda m, x: _vector_norm(m, x, -1), [[0.0, 1.0]], None),
    ("norm inf at zero", lambda m, x: _vector_norm(m, x, INF), [[0.0, 0.0]], None),
    ("norm inf with nan", lambda m, x: _vector_norm(m, x, INF), [[NAN, 1.0]], None),
    ("pow tensor exponent at 0", lambda m, x, y: x.pow(y),
     [[0.0, 0.0, 0.0, -1.0, 2.0, 0.0], [0.0, 2.0, -1.0, 0.5, 0.0, 0.5]], None),
    ("pow ** 0 at 0", lambda m, x: x**0, [[0.0, -0.0, 4.0]], None),
    ("pow ** 0.5 at -0", lambda m, x: x**0.5, [[0.0, -0.0, 4.0]], None),
    ("pow.Scalar base 0", lambda m, y: _pow_scalar(m, 0.0, y), [[0.0, 2.0, -1.0, 0.5]], None),
    ("atan2 at the origin", lambda m, x, y: m.atan2(x, y), [[0.0, 1.0, 0.0], [0.0, 0.0, -0.0]],
     None),
    ("atan2 underflow", lambda m, x, y: m.atan2(x, y), [[1e-170], [1e-170]], None),
    ("var_mean, only the mean", lambda m, x: m.var_mean(x, 1), [[[1.0], [2.0]]], 1),
    ("std_mean, only the mean", lambda m, x: m.std_mean(x, 1), [[[1.0], [2.0]]], 1),
    ("std_mean keepdim, only the mean", lambda m, x: m.std_mean(x, 1, keepdim=True),
     [[[1.0], [2.0]]], 1),
    ("var_mean, only the variance", lambda m, x: m.var_mean(x, 1), [[[1.0, 2.0], [2.0, 2.0]]], 0),
    ("std_mean, only the std", lambda m, x: m.std_mean(x, 1), [[[1.0, 1.0], [2.0, 3.0]]], 0),
    ("split, one piece used", lambda m, x: m.split(x, 2, 1), [[[1.0, 1.0, 3.0]]], 1),
    ("split_with_sizes, one piece", lambda m, x: m.split(x, [1, 2], 1), [[[1.0, 1.0, 3.0]]], 0),
    ("unbind, one slice used", lambda m, x: m.unbind(x, 1), [[[1.0, 1.0, 3.0]]], 2),
    ("chunk, one piece used", lambda m, x: m.chunk(x, 3, 1), [[[1.0, 1.0, 3.0]]], 1),
    ("max.dim of 1-D", lambda m, x: m.max(x, 0), [[2.0, 3.0]], 0),
    ("min.dim of 0-dim", lambda m, x: m.min(x, 0), [2.0], 0),
]  # fmt: skip


@requires_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's "degrees of freedom is <= 0"
@pytest.mark.parametrize(
    "name, fn, inputs, which", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES]
)
def test_gradient_matches_torch(
    name: str, fn: Callable[..., Any], inputs: list[Any], which: int | None
) -> None:
    expected = _grads(torch, fn, inputs, which)
    actual = _grads(ember, fn, inputs, which)
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        assert a is not None, f"{name}: no gradient for input {i}"
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-12, equal_nan=True, err_msg=name)


def _second(module: Any, fn: Callable[[Any], Any], x: Any) -> tuple[Any, Any]:
    """A weighted first derivative and the gradient of its square (double backward)."""
    t = module.tensor(x, dtype=module.float64, requires_grad=True)
    y = fn(t)
    w = module.tensor(np.arange(1.0, y.numel() + 1).reshape(tuple(y.shape)), dtype=module.float64)
    (g,) = module.autograd.grad((y * w).sum(), [t], create_graph=True)
    (h,) = module.autograd.grad((g * g).sum(), [t])
    return g.detach().numpy(), h.detach().numpy()


@requires_torch
@pytest.mark.parametrize(
    "x", [[0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [[2.0, 0.0, 3.0], [0.0, 1.0, 0.0]]]
)
@pytest.mark.parametrize(
    "fn",
    [lambda t: t.prod(), lambda t: t.prod(-1), lambda t: t.cumprod(-1), lambda t: t.cumprod(0)],
    ids=["prod", "prod(-1)", "cumprod(-1)", "cumprod(0)"],
)
def test_double_backward_at_zeros_matches_torch(fn: Callable[[Any], Any], x: Any) -> None:
    for a, e in zip(_second(ember, fn, x), _second(torch, fn, x), strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


def test_custom_function_still_gets_zeros_for_an_unused_output() -> None:
    seen: list[Any] = []

    class Two(ember.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2, x * 3

        @staticmethod
        def backward(ctx: Any, ga: Any, gb: Any) -> Any:
            seen.append((ga, gb))
            return ga * 2 + gb * 3

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert seen[0][1] is not None and seen[0][1].tolist() == [0.0, 0.0]
    assert x.grad.tolist() == [2.0, 2.0]


@requires_torch
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_scatter_with_an_empty_index_does_not_check_the_value(device: str) -> None:
    # PyTorch runs no kernel for an empty index, so a value the dtype can't hold passes
    x = ember.tensor([5], dtype=ember.uint8).to(device)
    out = x.scatter(0, ember.tensor([], dtype=ember.int64).to(device), -1.5)
    assert out.shape == (1,) and out.dtype is ember.uint8
    if device == "cpu":
        assert out.tolist() == [5]
    with pytest.raises(RuntimeError, match="without overflow"):
        x.scatter(0, ember.tensor([0]).to(device), -1.5)
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.tensor([5], dtype=torch.uint8).scatter(0, torch.tensor([0]), -1.5)


# --------------------------------------------------------------------------- einsum dtypes

EINSUM_FORMS = [
    ("i,i->i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("i,i->", [(3,), (3,)]),
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk->ik", [(2, 1), (1, 4)]),  # size-1 contraction: summed, not bmm
    ("ij,jk->ik", [(2, 0), (0, 4)]),  # empty contraction
    ("ij,j->j", [(2, 3), (3,)]),
    ("i,j->", [(2,), (3,)]),
    ("...i,...i", [(2, 3), (1, 3)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 3), (3, 2)]),
    ("ij->", [(2, 3)]),
]
EINSUM_DTYPES = ["float32", "float64", "int32", "int64", "bool", "complex64", "uint8"]


@requires_torch
@pytest.mark.parametrize("equation, shapes", EINSUM_FORMS, ids=[f[0] for f in EINSUM_FORMS])
def test_einsum_promotes_as_torch_form_by_form(equation: str, shapes: list[Any]) -> None:
    import itertools

    for names in itertools.product(EINSUM_DTYPES, repeat=len(shapes)):
        t_ops = [torch.ones(s, dtype=getattr(torch, n)) for s, n in zip(shapes, names, strict=True)]
        e_ops = [ember.ones(s, dtype=getattr(ember, n)) for s, n in zip(shapes, names, strict=True)]
        where = f"einsum({equation!r}) of {names}"
        try:
            expected = torch.einsum(equation, *t_ops)
        except Exception as exc:  # noqa: BLE001 - ember must raise the same type
            for ops in (e_ops, [e.to("meta") for e in e_ops]):
                with pytest.raises(type(exc)):
                    ember.einsum(equation, *ops)
            continue
        actual = ember.einsum(equation, *e_ops)
        assert actual.dtype.name == str(expected.dtype).removeprefix("torch."), where
        assert ember.einsum(equation, *[e.to("meta") for e in e_ops]).dtype is actual.dtype
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), err_msg=where)


@requires_torch
@pytest.mark.parametrize(
    "equation, shapes", [("i,j->ij", [(3,), (2,)]), ("ij,j->ij", [(2, 3), (3,)])]
)
def test_einsum_of_mixed_float_dtypes_differentiates(equation: str, shapes: list[Any]) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    grads = []
    for m in (torch, ember):
        xs = [
            m.tensor(a, dtype=d, requires_grad=True)
            for a, d in zip(arrays, (m.float32, m.float64), strict=True)
        ]
        y = m.einsum(equation, *xs)
        assert y.dtype is m.float64
        (y * y).sum().backward()
        grads.append([(str(x.grad.dtype).split(".")[-1], x.grad.detach().numpy()) for x in xs])
    for (ed, eg), (td, tg) in zip(grads[1], grads[0], strict=True):
        assert ed == td
        np.testing.assert_allclose(eg, tg, rtol=1e-5)


# --------------------------------------------------------------------------- lerp, errors


@requires_torch
@pytest.mark.parametrize("dtype, weight", [("int64", 0.5), ("uint8", 0.25), ("int32", -1.5)])
def test_lerp_of_integers_with_a_0dim_float_weight_is_float(dtype: str, weight: float) -> None:
    # The weight tensor takes part in promotion (found by the random programs: ember raised
    # "not implemented for 'Long'"); a gradient reaches the weight.
    values = ([1, 3, 0], [3, 7, 1])
    results = []
    for m in (torch, ember):
        d = getattr(m, dtype)
        w = m.tensor(weight, requires_grad=True)
        y = m.tensor(values[0], dtype=d).lerp(m.tensor(values[1], dtype=d), w)
        (y * y).sum().backward()
        results.append((str(y.dtype).split(".")[-1], y.detach().numpy(), w.grad.numpy()))
    (td, ty, tg), (ed, ey, eg) = results
    assert ed == td == "float32"
    np.testing.assert_allclose(ey, ty)
    np.testing.assert_allclose(eg, tg, rtol=1e-6)


@requires_torch
def test_lerp_of_bools_with_a_0dim_float_weight_is_float() -> None:
    # (PyTorch's backward subtracts bools, which it refuses, so values only)
    b = [True, False, True]
    e = ember.tensor(b).lerp(ember.tensor(b[::-1]), ember.tensor(2.9))
    t = torch.tensor(b).lerp(torch.tensor(b[::-1]), torch.tensor(2.9))
    assert e.dtype is ember.float32
    np.testing.assert_allclose(e.numpy(), t.numpy())


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        # lerp: the weight's dtype is checked before the missing integer kernel
        lambda m: m.lerp(m.tensor([1, 2]), m.tensor([3, 4]), m.tensor([0.5, 0.5])),
        lambda m: m.lerp(m.tensor([1, 2]), m.tensor([3, 4]), 0.5),
        lambda m: m.lerp(m.tensor([1, 2]), m.tensor([3, 4]), m.tensor(1)),
        lambda m: m.maximum(m.tensor([1 + 1j]), m.tensor([2 + 0j])),
        lambda m: m.minimum(m.tensor([1 + 1j]), m.tensor([2 + 0j])),
        lambda m: m.bmm(m.ones(1, 2, 2, dtype=m.bool), m.ones(1, 2, 2)),
        lambda m: m.bmm(m.ones(1, 2, 2), m.ones(1, 2, 2, dtype=m.bool)),
        lambda m: m.addmm(m.tensor([[True]]), m.tensor([[True]]), m.tensor([[True]])),
        lambda m: m.nn.functional.mse_loss(m.tensor([1, 2]), m.tensor([1, 2])),
        lambda m: m.nn.functional.mse_loss(m.tensor([1j, 2]), m.tensor([1j, 2])),
    ],
)
def test_refusals_raise_pytorchs_exception_type(call: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(Exception) as actual:
        call(ember)
    assert actual.type is expected.type, (actual.value, expected.value)


@requires_torch
def test_atan2_gradient_with_a_uint8_operand_is_the_derivative() -> None:
    # PyTorch negates the uint8 operand in uint8 in atan2's backward (-5 wraps to 251), so
    # its gradient differs; ember's equals the gradient with the operand cast to float.
    grads = []
    for m, cast in ((ember, False), (torch, True)):
        a = m.tensor([[5, 3], [1, 0]], dtype=m.uint8)
        b = m.tensor(0.8, requires_grad=True)
        m.atan2(a.float() if cast else a, b).sum().backward()
        grads.append(b.grad.item())
    assert grads[0] == pytest.approx(grads[1], rel=1e-6)


@requires_torch
def test_batch_norm_gradient_with_a_strided_weight_is_the_contiguous_ones() -> None:
    # Found by the random programs: PyTorch 2.13's eval-mode batch_norm backward misreads a
    # strided weight (its input gradient differs from its own with .contiguous()); ember's
    # equals PyTorch's for the contiguous weight.
    def grads(m: Any, strided: bool) -> np.ndarray:
        x = m.tensor(np.arange(12.0).reshape(3, 4) / 7, dtype=m.float32, requires_grad=True)
        wb = m.tensor([-1.6, -1.6, 0.9, 0.9, 1.4, 1.4, 1.1], dtype=m.float32)
        w = (wb[::2] if strided else wb[::2].contiguous()).requires_grad_()
        y = m.nn.functional.batch_norm(x, m.zeros(4), m.ones(4), w, m.zeros(4), training=False)
        cot = m.arange(12, dtype=m.float32).reshape(3, 4).cos()
        return m.autograd.grad((y * cot).sum(), x)[0].numpy()

    np.testing.assert_allclose(grads(ember, True), grads(torch, False), rtol=1e-6)
    np.testing.assert_allclose(grads(ember, False), grads(torch, False), rtol=1e-6)


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.scatter(0, m.tensor([[0]], device=x.device), 5.0),
        lambda m, x: x.scatter(0, m.tensor([[0]], device=x.device), m.ones(1, 1, device=x.device)),
        lambda m, x: x.scatter_add(
            0, m.tensor([[0]], device=x.device), m.ones(1, 1, device=x.device)
        ),
        lambda m, x: x.scatter_add(
            -2, m.tensor([], dtype=m.int64, device=x.device), m.tensor([], device=x.device)
        ),
        lambda m, x: x.index_put((m.tensor([0], device=x.device),), m.tensor(1.0, device=x.device)),
        lambda m, x: x.masked_fill(x > 3, 0.0),
    ],
)
def test_out_of_place_writes_lay_out_results_as_pytorch(call: Callable[..., Any]) -> None:
    # Found by the random programs: scatter_add of a transposed tensor kept its strides, so
    # a later .view() failed where PyTorch's contiguous result views fine.
    results = []
    for m in (torch, ember):
        x = m.arange(12.0).reshape(4, 3).t()
        results.append((call(m, x).stride(), call(m, x.to("meta")).stride()))
    (t_cpu, _), (e_cpu, e_meta) = results
    assert e_cpu == t_cpu
    assert e_meta == e_cpu


@requires_torch
@pytest.mark.parametrize("shape", [(3, 4), (5,), (), (2, 1, 3)])
def test_nonzero_is_laid_out_as_pytorch(shape: tuple[int, ...]) -> None:
    # Found by a 10,000-program run: PyTorch's nonzero is (n, ndim) with strides (1, n), so
    # a clone of its transpose is contiguous and .view() works on it; ember's was C-ordered.
    data = np.asarray(np.arange(int(np.prod(shape))).reshape(shape) % 3 != 1, np.float32)
    t, e = torch.from_numpy(data).nonzero(), ember.from_numpy(data).nonzero()
    assert e.stride() == t.stride()
    assert e.t().clone().stride() == t.t().clone().stride()
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@requires_torch
@pytest.mark.parametrize(
    "make",
    [
        lambda m: [m.ones(2, 3).t(), m.ones(2, 3).t()],  # every input transposed
        lambda m: [m.ones(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)] * 2,
        lambda m: [
            m.ones(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
            m.ones(2, 3, 4, 5),
        ],  # fmt: skip
    ],
)
def test_cat_is_laid_out_as_pytorch(make: Callable[[Any], Any]) -> None:
    # Found by a 10,000-program run: cat of transposed inputs kept NumPy's F order, so a
    # later .view() failed where PyTorch's contiguous result views fine.
    expected = torch.cat(make(torch), 1).stride()
    assert ember.cat(make(ember), 1).stride() == expected
    assert ember.cat([t.to("meta") for t in make(ember)], 1).stride() == expected


@requires_torch
def test_batch_norm_statistics_are_as_accurate_as_pytorchs() -> None:
    # Found by a 10,000-program run: a training batch_norm of a nearly constant channel was
    # 5x further from the float64 result than PyTorch's, whose CPU kernels accumulate the
    # statistics in float64 and round once; ember's now do too.
    def run(m: Any, dt: Any) -> tuple[np.ndarray, np.ndarray]:
        v = [0.822] * 12
        v[5], v[6] = 0.822 + 0.071 * 0.822, 0.822 - 0.071 * 1.381  # a conv's padded output
        x = m.tensor(v, dtype=dt).reshape(1, 1, 3, 4).requires_grad_()
        y = m.nn.functional.batch_norm(x, None, None, training=True)
        (y * m.arange(12, dtype=dt).mul(0.7).cos().reshape(y.shape)).sum().backward()
        return y.detach().numpy().astype(np.float64), x.grad.numpy().astype(np.float64)

    ref = run(torch, torch.float64)
    for got, want, theirs in zip(
        run(ember, ember.float32), ref, run(torch, torch.float32), strict=True
    ):
        assert np.abs(got - want).max() <= 1.2 * np.abs(theirs - want).max()


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.rot90(x, 0),
        lambda m, x: m.nn.functional.pixel_shuffle(x.reshape(1, 4, 1, 3), 1),
        lambda m, x: m.linalg.cross(x[:, :3], x[:, :3]),
        lambda m, x: m.cdist(x, x),
        lambda m, x: m.einsum("ij->ji", x),  # NumPy's einsum returns views for these
        lambda m, x: m.einsum("ii->i", x[:3]),
        lambda m, x: m.einsum("ab->ab", x),
    ],
)
def test_results_are_their_own_writable_storage(call: Callable[..., Any]) -> None:
    # Found by the compiler's storage audit: rot90(x, 0) and pixel_shuffle(x, 1) returned
    # x's own memory (an add_ on the result changed x), cross and cdist a read-only array;
    # found by the random programs on the NumPy tier: einsum('a->a', x) returned x's memory
    x = ember.arange(12.0).reshape(4, 3)
    before = x.clone()
    y = call(ember, x)
    y.add_(1)
    assert ember.equal(x, before)


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m, z, i: z[i],
        lambda m, z, i: z.index_put((i,), m.tensor([4.0])),
        lambda m, z, i: z.index_put((i,), m.tensor([4.0]), accumulate=True),
        lambda m, z, i: z.index_put((i,), m.ones(3)),  # still a shape mismatch
    ],
)
def test_out_of_range_indices_that_select_nothing(call: Callable[..., Any]) -> None:
    # Found by a 10,000-program run: PyTorch checks an index as it reads or writes an
    # element, so an out-of-range index into an empty result is no error; ember raised
    results = []
    for m in (torch, ember):
        try:
            results.append(tuple(call(m, m.zeros(1, 2, 0), m.tensor([0, 1])).shape))
        except Exception as exc:  # noqa: BLE001 - compared with PyTorch's
            results.append(type(exc).__name__)
    assert results[0] == results[1]


@requires_torch
@pytest.mark.parametrize("bias", [False, True])
def test_linear_of_zero_features_over_a_batch(bias: bool) -> None:
    # Found by a 10,000-program run: linear folded a 3-D input with reshape(-1, 0), which is
    # ambiguous; PyTorch gives zeros (plus the bias)
    results = []
    for m in (torch, ember):
        x, w = m.ones(2, 1, 0), m.ones(3, 0)
        b = m.arange(3.0) if bias else None
        results.append(m.nn.functional.linear(x, w, b).numpy())
    np.testing.assert_array_equal(results[1], results[0])


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.sum(1),
        lambda m, x: x.mean(1, keepdim=True),
        lambda m, x: x.max(1, keepdim=True).indices,
        lambda m, x: x.argmax(1, keepdim=True),
        lambda m, x: x.var(1, keepdim=True),
        lambda m, x: m.logsumexp(x, 1, keepdim=True),
        lambda m, x: x.cumsum(1),
        lambda m, x: x.softmax(1),
        lambda m, x: x.log_softmax(1),
        lambda m, x: x.sort(1).values,
        lambda m, x: x.sort(1).indices,
    ],
)
def test_reductions_scans_softmax_and_sort_are_laid_out_as_pytorch(
    call: Callable[..., Any],
) -> None:
    # Found by a 10,000-program run: NumPy lays a reduction of a permuted input out in the
    # input's order, so a later .view() failed; PyTorch's is contiguous (sort keeps the
    # input's layout) (NOTE [result layouts])
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    expected = call(torch, torch.from_numpy(base).permute(2, 0, 1)).stride()
    x = ember.from_numpy(base).permute(2, 0, 1)
    assert call(ember, x).stride() == expected
    assert call(ember, x.to("meta")).stride() == expected


def test_batch_norm_gradients_of_a_strided_input_are_the_derivative() -> None:
    # PyTorch 2.13 gets this one wrong (found by a 10,000-program run): for this strided
    # input its bias gradient is [1.170, 0.260], not the sum of the output gradient over
    # each channel; ember's is that sum, as the formula says (docs/testing.md)
    x = ember.tensor([[[[0.071]], [[-2.135]]], [[[2.703]], [[2.692]]]]).transpose(0, -1)
    bias = ember.tensor([0.822, -1.381]).requires_grad_()
    y = ember.nn.functional.batch_norm(x, None, None, None, bias, training=True)
    g = ember.arange(y.numel(), dtype=y.dtype).mul(0.7).cos().reshape(y.shape)
    (y * g).sum().backward()
    np.testing.assert_allclose(bias.grad.numpy(), g.sum((0, 2, 3)).numpy(), rtol=1e-6)
    # the same input made contiguous first: the same gradient
    b2 = ember.tensor([0.822, -1.381]).requires_grad_()
    y2 = ember.nn.functional.batch_norm(x.contiguous(), None, None, None, b2, training=True)
    (y2 * g).sum().backward()
    np.testing.assert_allclose(b2.grad.numpy(), bias.grad.numpy(), rtol=1e-6)


# --------------------------------------------------------------------------- ember.library


@requires_torch
def test_library_define_and_impl_return_what_pytorchs_do() -> None:
    # Library.define returned the qualified name ('demo::twice') where PyTorch returns the
    # op's name ('twice', also for an overload); impl given the kernel returned the kernel
    # where PyTorch returns None (found by running every docstring example)
    results = []
    for lib_mod, ns in ((ember, "ember_reg_lib"), (torch, "torch_reg_lib")):
        lib = lib_mod.library.Library(ns, "DEF")
        try:
            names = (lib.define("f(Tensor x) -> Tensor"), lib.define("f.out(Tensor x) -> Tensor"))
            given = lib_mod.library.impl(f"{ns}::f", "CPU", lambda x: x * 2, lib=lib)
            results.append((names, given))
        finally:
            lib._destroy()
    assert results[0] == results[1] == (("f", "f"), None)


@requires_torch
@pytest.mark.parametrize(
    ("seq_shape", "val_shape"),
    [((1, 1), (1, 0)), ((2, 0), (2, 3)), ((2, 0), (2, 0)), ((0, 3), (0, 2)), ((3,), (0, 2))],
)
def test_searchsorted_of_empty_rows(seq_shape: tuple[int, ...], val_shape: tuple[int, ...]) -> None:
    # Found by the random programs: a batched search folded its values with
    # reshape(-1, 0), which NumPy cannot resolve for an empty row; rows are counted now
    results = []
    for m in (torch, ember):
        seq = m.arange(float(math.prod(seq_shape))).reshape(seq_shape)
        r = m.searchsorted(seq, m.ones(val_shape), right=True)
        results.append((tuple(r.shape), r.numpy().tolist()))
    assert results[1] == results[0]


def test_block_diag_gradient_of_a_block_after_an_empty_vector() -> None:
    # PyTorch 2.13 gets this one wrong (found by the random programs): its forward gives a
    # 1-D empty input a row of its own, as ember, but its backward does not, so the next
    # block's gradient is read from the row above it; ember's is the block's own gradient
    # (docs/testing.md)
    a = ember.tensor([]).requires_grad_()
    b = ember.tensor([1.0, 2.0, 3.0]).requires_grad_()
    y = ember.block_diag(a, b)
    assert y.tolist() == [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]
    g = ember.arange(6.0).reshape(2, 3)
    y.backward(g)
    assert b.grad.tolist() == [3.0, 4.0, 5.0]
    assert a.grad.shape == (0,)


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
def test_median_along_an_expanded_dim(fn: str) -> None:
    # PyTorch 2.13 gets this one wrong (found by the random programs): its median along a
    # dim of stride 0 reads garbage ([0, 3, 343680612] here); ember's is the median of the
    # rows, as of the same tensor made contiguous (docs/testing.md)
    x = ember.tensor([0, -4, 3], dtype=ember.int32).expand(3, 3)
    assert getattr(x, fn)(0).values.tolist() == [0, -4, 3]
    y = ember.tensor([[0.5], [-4.0], [3.0]]).expand(3, 4).t()
    assert getattr(y, fn)(0, keepdim=True).values.tolist() == [[0.5, -4.0, 3.0]]


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m, t: m.xlogy(t, 0.5),
        lambda m, t: m.xlogy(2.0, t),
        lambda m, t: m.special.xlogy(t, 3),
        lambda m, t: m.special.xlog1py(t, 0.5),
        lambda m, t: m.special.xlog1py(2.0, t),
        lambda m, t: t.xlogy(2.0),
    ],
)
def test_a_0dim_tensor_that_requires_grad_binds_as_a_tensor(call: Callable[..., Any]) -> None:
    # Found by the random programs: a 0-dim tensor filled a Scalar parameter even when it
    # required grad, so xlogy(t, 0.5) bound xlogy.Scalar_Self and the result lost t's
    # gradient; PyTorch's parser takes a tensor as a number only 0-dim and without grad
    grads = []
    for m in (torch, ember):
        t = m.tensor(0.071, requires_grad=True)
        r = call(m, t)
        assert r.requires_grad
        r.backward()
        grads.append(t.grad.item())
    assert grads[1] == pytest.approx(grads[0], rel=1e-6)


@requires_torch
@pytest.mark.parametrize("alpha", [[2.0], [[2.0]]])
def test_a_tensor_of_one_element_is_not_a_scalar_argument(alpha: list[Any]) -> None:
    # add's alpha is a Scalar: PyTorch takes only a 0-dim tensor (without grad) there
    for m in (torch, ember):
        x = m.tensor([1.0, 2.0])
        with pytest.raises(TypeError):
            m.add(x, x, alpha=m.tensor(alpha))
    x = ember.tensor([1.0, 2.0])
    assert ember.add(x, x, alpha=ember.tensor(2.0)).tolist() == [3.0, 6.0]


@pytest.mark.parametrize(
    "call",
    [
        lambda x, i: x.index_add(0, i, ember.ones(1, 3)),
        lambda x, i: x.index_add_(0, i, ember.ones(1, 3)),
        lambda x, i: x.index_copy_(0, i, ember.ones(1, 3)),
        lambda x, i: x.index_fill_(0, i, 1.0),
    ],
)
def test_an_index_into_an_empty_dim_is_out_of_range(call: Callable[..., Any]) -> None:
    # PyTorch 2.13 does not check (found by the random programs): its index_add of index 0
    # into a dim of size 0 returns the empty tensor, its index_copy_ and index_fill_ fail
    # in setStorage; ember says the index is out of range, as for any other size
    # (docs/testing.md)
    with pytest.raises((IndexError, RuntimeError), match="out of"):
        call(ember.zeros(0, 3), ember.tensor([0]))


@requires_torch
@pytest.mark.parametrize(
    ("dtype", "alpha"), [("uint8", -2), ("uint8", -1), ("int8", 2), ("int64", -3)]
)
def test_index_add_of_an_integer_alpha_wraps_into_the_dtype(dtype: str, alpha: int) -> None:
    # Found by the random programs: index_add on uint8 with alpha=-2 raised NumPy's
    # OverflowError; PyTorch casts alpha into the dtype (-2 is 254) and wraps the products
    results = []
    for m in (torch, ember):
        dt = getattr(m, dtype)
        x = m.tensor([1, 2, 3], dtype=dt)
        src = m.tensor([3, 100], dtype=dt)
        results.append(x.index_add(0, m.tensor([0, 0]), src, alpha=alpha).tolist())
    assert results[1] == results[0]


@requires_torch
@pytest.mark.parametrize(
    ("a", "b"),
    [
        (([1.0], "float32"), (2.0, "float64")),
        (([1], "int64"), (2.0, "float32")),
        ((1, "int64"), (2.0, "float64")),
        (([1], "uint8"), (-2, "int64")),
        (([[True]], "bool"), (2, "int64")),
    ],
)
def test_block_diag_promotes_a_0dim_input_as_pytorch(a: Any, b: Any) -> None:
    # Found by the random programs: block_diag promoted its inputs pairwise, so a float64
    # 0-dim input made a float32 matrix float64; PyTorch's result type ranks 0-dim inputs
    # below the others of their category
    dts = []
    for m in (torch, ember):
        t1, t2 = (m.tensor(v, dtype=getattr(m, d)) for v, d in (a, b))
        dts.append(str(m.block_diag(t1, t2).dtype).split(".")[-1])
        if m is ember:
            meta = m.block_diag(t1.to("meta"), t2.to("meta"))
            assert str(meta.dtype).split(".")[-1] == dts[0]
    assert dts[1] == dts[0]


@requires_torch
def test_layer_norm_of_a_transposed_input_is_contiguous() -> None:
    # Found by the random programs: NumPy laid layer_norm's result out in a transposed
    # input's order, so a later .view(-1) failed; PyTorch's is contiguous (as the Meta rule)
    for m in (torch, ember):
        x = m.arange(6.0).reshape(3, 2).t().requires_grad_()
        w = m.ones(3, requires_grad=True)
        y = m.nn.functional.layer_norm(x, [3], w, w)
        assert y.is_contiguous()
        assert y.clone().view(-1).shape == (6,)
        y.backward(m.ones(3, 2).t())
        assert x.grad is not None


@requires_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: x.roll(1, 0),
        lambda m, x: x.roll((1, -1), (0, 2)),
        lambda m, x: m.roll(x, 2),
        lambda m, x: x.index_add(1, m.tensor([0]), m.ones(4, 1, 3)),
        lambda m, x: x.index_copy(1, m.tensor([1]), m.ones(4, 1, 3)),
        lambda m, x: x.index_fill(1, m.tensor([0]), 1.0),
        lambda m, x: x.flip(0),
    ],
)
def test_roll_and_index_add_results_are_laid_out_as_pytorch(call: Callable[..., Any]) -> None:
    # roll, index_add and index_copy give a new contiguous tensor in PyTorch, whatever the
    # input's strides (ember kept a permuted input's layout, so a later .view() could fail
    # where PyTorch's works); flip and index_fill keep the input's layout in both
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    expected = call(torch, torch.from_numpy(base).permute(2, 0, 1)).stride()
    x = ember.from_numpy(base).permute(2, 0, 1)
    assert call(ember, x).stride() == expected
    assert call(ember, x.to("meta")).stride() == expected


@requires_torch
@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 0, 1)])
@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3])
def test_rot90_is_laid_out_as_pytorch(perm: tuple[int, ...], k: int) -> None:
    # PyTorch's rot90 is a flip (laid out as the input) transposed for odd k, a contiguous
    # copy for k = 0; ember's was always contiguous, so .view() could work where PyTorch's
    # fails, or fail where it works
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    expected = torch.from_numpy(base).permute(*perm).rot90(k, [0, 2])
    x = ember.from_numpy(base).permute(*perm)
    got = x.rot90(k, [0, 2])
    assert got.stride() == expected.stride()
    assert x.to("meta").rot90(k, [0, 2]).stride() == expected.stride()
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("rows", [0, 1])
def test_einsum_of_two_float_dtypes_is_refused_empty_or_not(rows: int) -> None:
    # PyTorch 2.13 returns float64 zeros for an empty float32 operand and a float64 one
    # (found by the random programs) but refuses the same operands with a row; ember refuses
    # both, as its contraction takes one dtype (docs/testing.md)
    a = ember.zeros(rows, 2)
    b = ember.ones(2, 2, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        ember.einsum("...ij,...jk->...ik", a, b)


@requires_torch
def test_circular_pad_refuses_to_wrap_a_cropped_dim_more_than_once() -> None:
    # a random program padded a size-2 dim by (-1, 2), circularly: PyTorch's 5-d form
    # copies overlapping slices (its 3-d form refuses the same pad); ember refuses every
    # form, so the generator steers clear (docs/testing.md, docs/spatial.md)
    for k in (1, 2, 3):
        x = ember.arange(2.0).reshape((1, 1) + (1,) * (k - 1) + (2,))
        with pytest.raises(RuntimeError, match="more than once"):
            ember.nn.functional.pad(x, [-1, 2] + [0, 0] * (k - 1), mode="circular")
    with pytest.raises(RuntimeError):
        torch.nn.functional.pad(torch.arange(2.0).reshape(1, 1, 2), [-1, 2], mode="circular")
    # within one wrap, the same values as PyTorch
    x = np.arange(8.0).reshape(1, 2, 4)
    expected = torch.nn.functional.pad(torch.from_numpy(x), [-1, 3], mode="circular")
    got = ember.nn.functional.pad(ember.from_numpy(x), [-1, 3], mode="circular")
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


# ------------------------------------------------------------- empty batches in nn kernels
# A random program ran conv1d with groups=2 over an empty batch: its backward reshaped the
# output gradient to (0, 2, 2, -1), which NumPy cannot infer for zero elements. The kernels
# now spell out every size (conv, transposed conv, pools, group norm, grid sampling), and
# batch_norm of an empty input is its copy, as PyTorch's (the native op refuses it).


def _empty_case_grads(lib: Any, fn: Callable[..., Any], shapes: list[tuple[int, ...]]) -> Any:
    xs = [
        lib.tensor(np.random.default_rng(i).uniform(-1, 1, s), dtype=lib.float32).requires_grad_()
        for i, s in enumerate(shapes)
    ]
    y = fn(lib, *xs)
    y = y[0] if isinstance(y, tuple) else y
    y.sum().backward()
    return (
        tuple(y.shape),
        [tuple(x.grad.shape) for x in xs],
        [float(x.grad.abs().sum()) for x in xs],
    )


@requires_torch
@pytest.mark.parametrize(
    ("fn", "shapes"),
    [
        (
            lambda m, x, w, b: m.nn.functional.conv1d(x, w, b, padding=1, dilation=2, groups=2),
            [(0, 6, 6), (4, 3, 1), (4,)],
        ),
        (lambda m, x, w: m.nn.functional.conv2d(x, w, groups=2), [(0, 4, 3, 3), (4, 2, 2, 2)]),
        (lambda m, x, w: m.nn.functional.conv3d(x, w), [(0, 2, 3, 3, 3), (3, 2, 2, 2, 2)]),
        (lambda m, x, w: m.nn.functional.conv_transpose1d(x, w, groups=2), [(0, 4, 5), (4, 3, 2)]),
        (
            lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2),
            [(0, 2, 3, 3), (2, 3, 2, 2)],
        ),
        (lambda m, x: m.nn.functional.max_pool1d(x, 2, return_indices=True), [(0, 2, 4)]),
        (lambda m, x: m.nn.functional.max_pool3d(x, 2), [(0, 2, 4, 4, 4)]),
        (lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 2), [(0, 2, 4, 4)]),
        (lambda m, x, w, b: m.nn.functional.group_norm(x, 2, w, b), [(0, 4, 3), (4,), (4,)]),
        (lambda m, x: m.nn.functional.instance_norm(x), [(0, 4, 3)]),
        (
            lambda m, x, w, b: m.nn.functional.batch_norm(x, None, None, w, b, training=True),
            [(0, 4, 3), (4,), (4,)],
        ),
        (lambda m, x: m.nn.functional.batch_norm(x, None, None, training=True), [(2, 0, 3)]),
        (
            lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False),
            [(0, 2, 3, 3), (0, 2, 2, 2)],
        ),
        (
            lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="nearest", align_corners=True),
            [(1, 0, 3, 3), (1, 2, 2, 2)],
        ),
        (
            lambda m, x, g: m.nn.functional.grid_sample(x, g, align_corners=False),
            [(0, 2, 3, 3, 3), (0, 2, 2, 2, 3)],
        ),
    ],
)
def test_nn_kernels_of_empty_batches_match_torch(
    fn: Callable[..., Any], shapes: list[tuple[int, ...]]
) -> None:
    assert _empty_case_grads(ember, fn, shapes) == _empty_case_grads(torch, fn, shapes)


def test_batch_norm_of_an_empty_batch_leaves_the_running_statistics() -> None:
    rm, rv = ember.zeros(3), ember.ones(3)
    out = ember.nn.functional.batch_norm(ember.zeros(0, 3, 2), rm, rv, training=True)
    assert out.shape == (0, 3, 2)
    assert rm.tolist() == [0.0] * 3 and rv.tolist() == [1.0] * 3
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        ember.nn.functional.batch_norm(ember.zeros(1, 3, 1), None, None, training=True)


@requires_torch
@pytest.mark.parametrize(
    ("call", "shape"),
    [
        (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, [1, 2]), (0, 2, 2)),
        (lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 2), (0, 2, 2)),
        (lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 1), (0, 2)),
        (lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 1), (0, 2)),
        (lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, 1), (0, 2, 2, 2)),
    ],
)
def test_adaptive_pools_take_an_unbatched_input_with_no_channels(
    call: Callable[..., Any], shape: tuple[int, ...]
) -> None:
    # a random program's adaptive_avg_pool2d of a (0, 2, 2) input: PyTorch checks only the
    # dims after the first, so an unbatched input may have no channels; ember refused it
    shapes = []
    for m in (ember, torch):
        x = m.zeros(shape).requires_grad_()
        y = call(m, x)
        y.sum().backward()
        shapes.append((tuple(y.shape), tuple(x.grad.shape)))
    assert shapes[0] == shapes[1]


@pytest.mark.parametrize("dim", [None, 0, -1])
def test_vector_norm_of_order_zero_leaves_the_gradient_undefined(dim: Any) -> None:
    # a count of nonzeros: PyTorch's backward gives no gradient (x.grad stays None), not
    # zeros (found by a random program: ember's x.grad was 0.0)
    x = ember.tensor([2.5, 0.0, -1.0]).requires_grad_()
    ember.linalg.vector_norm(x, 0, dim=dim).backward()
    assert x.grad is None
    x = ember.tensor([2.5, 0.0, -1.0]).requires_grad_()
    (ember.linalg.vector_norm(x, 0) + x.sum()).backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_convolution_of_an_unbatched_input_with_no_channels_has_the_weights_channels() -> None:
    # PyTorch 2.13 gives conv1d of a (0, 2) input with a (2, 0, 1) weight the shape (0, 2);
    # a sum over no input channels is zeros, one row per output channel, plus the bias
    # (the random programs steer clear: docs/testing.md)
    bias = ember.tensor([1.5, -2.0])
    out = ember.nn.functional.conv1d(ember.zeros(0, 2), ember.zeros(2, 0, 1), bias)
    assert out.shape == (2, 2)
    assert out.tolist() == [[1.5, 1.5], [-2.0, -2.0]]
    out = ember.nn.functional.conv2d(ember.zeros(0, 2, 2), ember.zeros(3, 0, 1, 1))
    assert out.shape == (3, 2, 2) and not out.any()


@requires_torch
def test_hardswish_gradient_at_its_kinks_is_pytorchs() -> None:
    # found by a sweep of the activations after a random program's hardsigmoid: at -3 and 3
    # ember's gradient was -0.5 and 1.5 (the middle piece's closed interval); PyTorch's is
    # 0 and 1
    values = [-3.5, -3.0, -1.0, 0.0, 2.0, 3.0, 3.5]
    grads = []
    for m in (ember, torch):
        x = m.tensor(values, dtype=m.float64).requires_grad_()
        m.nn.functional.hardswish(x).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_hardsigmoid_gradient_in_float64_is_one_sixth() -> None:
    # PyTorch 2.13's float64 gradient is 0.1666666716337204, float32's 1/6 (3e-8 off, past
    # the float64 tolerance); ember's is 1/6 in float64, so the generator gives hardsigmoid
    # only float32 inputs (docs/testing.md)
    x = ember.tensor([0.822, -2.0], dtype=ember.float64).requires_grad_()
    ember.nn.functional.hardsigmoid(x).sum().backward()
    assert x.grad.tolist() == [1 / 6, 1 / 6]


def test_transposed_convolution_checks_its_output_size_for_an_empty_batch_too() -> None:
    # PyTorch 2.13 gives (0, 1, 0) for the empty batch and refuses the batch of one; ember
    # refuses both (the random programs steer clear: docs/testing.md)
    for n in (0, 1):
        with pytest.raises(RuntimeError, match="output size is too small"):
            ember.nn.functional.conv_transpose1d(
                ember.zeros(n, 1, 2), ember.ones(1, 1, 1), padding=1
            )


@requires_torch
@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.zeros(3, 4).t(),
        lambda m: m.zeros(3, 4, 5).permute(2, 0, 1),
        lambda m: m.zeros(3, 4, 5)[:, ::2],
        lambda m: m.zeros(2, 3, 4, 5).to(memory_format=m.channels_last),
    ],
)
def test_roll_and_fftshift_are_laid_out_as_pytorch(make: Callable[[Any], Any]) -> None:
    # a random program viewed fftshift's result of a transposed input: ember's roll kept the
    # input's permuted layout, so .view(4) failed; PyTorch's is contiguous (channels-last
    # for a channels-last input)
    for call in (lambda m, x: m.roll(x, 1, 0), lambda m, x: m.fft.fftshift(x)):
        expected = call(torch, make(torch)).stride()
        assert call(ember, make(ember)).stride() == expected
        assert call(ember, make(ember).to("meta")).stride() == expected


@requires_torch
@pytest.mark.parametrize("shape", [(0, 1), (1, 0), (0, 0), (3, 0, 2), (3, 2, 0), (0, 2, 2)])
@pytest.mark.parametrize("ord", [2, -2, 1, -1, math.inf, -math.inf])
def test_matrix_norms_of_empty_matrices_match_pytorch(shape: tuple[int, ...], ord: float) -> None:
    # linalg.norm(empty (0, 1), 2) raised amax's empty-dim error; PyTorch's positive orders
    # give zeros without autograd history, its negative ones amin's error (found by the
    # random programs)
    def run(lib: Any) -> Any:
        x = lib.ones(*shape, requires_grad=True)
        try:
            results = [lib.linalg.matrix_norm(x, ord, keepdim=k) for k in (False, True)]
        except IndexError as exc:
            return "IndexError" if "non-zero size" in str(exc) else str(exc)
        return [(tuple(r.shape), r.requires_grad, r.detach().numpy().tolist()) for r in results]

    assert run(ember) == run(torch)


@pytest.mark.parametrize("eps", [None, 0.0])
@pytest.mark.parametrize("n", [1, 3, 64])
def test_logit_gradient_at_signed_zeros_is_ieee(eps: float | None, n: int) -> None:
    """logit's gradient at ±0 is g / (x (1 - x)) in IEEE arithmetic, at every size: -g * inf at
    -0, g * inf at +0 (ember gave +g * inf at -0, PyTorch's scalar-loop value; NOTE [logit at
    -0])."""
    g = np.array([1.0, -1.0] * n)[:n]
    for zero, sign in ((0.0, 1.0), (-0.0, -1.0)):
        x = ember.full((n,), zero, dtype=ember.float64, requires_grad=True)
        ember.logit(x, eps).backward(ember.from_numpy(g))
        np.testing.assert_array_equal(x.grad.numpy(), sign * g * math.inf)


@requires_torch
def test_logit_gradient_at_signed_zeros_matches_pytorch_vectorized_loop() -> None:
    """On a 64-element input PyTorch's vectorized loop runs on every element a vector width
    divides, and gives IEEE's signs there, as ember does everywhere."""
    g = np.array([1.0, -1.0] * 32)
    for zero in (0.0, -0.0):
        x = ember.full((64,), zero, dtype=ember.float64, requires_grad=True)
        ember.logit(x).backward(ember.from_numpy(g))
        t = torch.full((64,), zero, dtype=torch.float64, requires_grad=True)
        torch.logit(t).backward(torch.from_numpy(g))
        np.testing.assert_array_equal(x.grad.numpy()[:32], t.grad.numpy()[:32])


# --------------------------------------------------------------------------- issue 18


def _with_parameters(lib: Any, call: str) -> tuple[Any, list[tuple[str, ...]]]:
    """``call`` on a LoggingTensor-style subclass with Parameters among the arguments."""
    seen: list[tuple[str, ...]] = []

    class LoggingTensor(lib.Tensor):  # type: ignore[name-defined, misc]
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None):  # noqa: ANN206
            seen.append(tuple(t.__name__ for t in types))
            return super().__torch_function__(func, types, args, kwargs or {})

    F, P = lib.nn.functional, lib.nn.Parameter
    x = lib.tensor(np.linspace(-1, 1, 72).reshape(2, 4, 3, 3).astype(np.float32))
    x = x.as_subclass(LoggingTensor)
    w4, b4 = P(lib.linspace(0.5, 2, 4)), P(lib.linspace(-1, 1, 4))
    if call == "layer_norm":
        out = F.layer_norm(x, (3,), P(lib.ones(3) * 2), P(lib.ones(3)))
    elif call == "batch_norm":
        out = F.batch_norm(x, lib.zeros(4), lib.ones(4), w4, b4, True)
    elif call == "group_norm":
        out = F.group_norm(x, 2, w4, b4)
    elif call == "instance_norm":
        out = F.instance_norm(x, weight=w4, bias=b4)
    elif call == "embedding":
        idx = lib.tensor([[1, 2]]).as_subclass(LoggingTensor)
        out = F.embedding(idx, P(lib.linspace(0, 1, 30).view(10, 3)))
    else:
        out = F.linear(x, P(lib.linspace(0, 1, 15).view(5, 3)))
    assert type(out) is LoggingTensor
    return out, seen


@requires_torch
@pytest.mark.parametrize(
    "call", ["layer_norm", "batch_norm", "group_norm", "instance_norm", "embedding", "linear"]
)
def test_parameters_stay_out_of_a_subclass_handlers_types(call: str) -> None:
    """``nn.Parameter`` disables ``__torch_function__`` (PyTorch's
    ``_disabled_torch_function_impl``): a subclass handler calling
    ``super().__torch_function__`` with Parameters among the arguments runs the function."""
    ours, our_types = _with_parameters(ember, call)
    theirs, their_types = _with_parameters(torch, call)
    assert sorted(set(our_types)) == sorted(set(their_types))
    assert all("Parameter" not in s for s in our_types), our_types
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ember.nn.Parameter.__torch_function__ is ember._C._disabled_torch_function_impl


@requires_torch
def test_a_subclass_built_from_a_tensor_requiring_grad_is_an_alias() -> None:
    """``Sub(t)`` for a ``t`` that requires grad: an alias with ``AliasBackward0`` whose
    gradient reaches ``t``, as PyTorch's (it was a detached tensor)."""
    grads = []
    for lib in (ember, torch):

        class Sub(lib.Tensor):  # type: ignore[name-defined, misc]
            pass

        t = lib.tensor([1.0, 2.0], requires_grad=True)
        s = Sub(t)
        assert type(s) is Sub and s.requires_grad and s._base is t
        assert s.grad_fn.name() == "AliasBackward0"
        (s * 3).sum().backward()
        grads.append(t.grad.tolist())
    assert grads[0] == grads[1] == [3.0, 3.0]


def _inf_nan_calls(lib: Any) -> dict[str, Callable[[], Any]]:
    """Calls whose NumPy computation makes inf or NaN (each warned before, issue 18)."""
    x = lib.tensor([[math.inf, 0.0], [1.0, -math.inf]])
    v = lib.tensor([math.inf, 0.0, -math.inf, math.nan])
    return {
        "mm": lambda: x @ x,
        "bmm": lambda: lib.bmm(x[None], x[None]),
        "mv": lambda: lib.mv(x, lib.tensor([0.0, 1.0])),
        "addmm": lambda: lib.addmm(lib.zeros(2), x, x),
        "linear": lambda: lib.nn.functional.linear(x, x),
        "prod": lambda: v.prod(),
        "prod dim": lambda: x.prod(0),
        "cumsum": lambda: v.cumsum(0),
        "cumprod": lambda: v.cumprod(0),
        "sum to int": lambda: v[:1].sum(dtype=lib.int64).shape,  # the value is undefined
        "polygamma float32": lambda: lib.polygamma(3, lib.tensor([1e-13])),
        "dropout p=1": lambda: lib.nn.functional.dropout(v, 1.0),
        "einsum complex empty": lambda: lib.einsum(
            "ij,jk->ik", lib.ones(2, 0, dtype=lib.complex64), lib.ones(0, 4)
        ),
    }


@requires_torch
@pytest.mark.parametrize("name", list(_inf_nan_calls(ember)))
def test_inf_and_nan_are_computed_silently(name: str) -> None:
    """ember's own NumPy RuntimeWarnings never reach users; the values are PyTorch's (the
    test configuration also turns any RuntimeWarning from ember into an error)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = _inf_nan_calls(ember)[name]()
    theirs = _inf_nan_calls(torch)[name]()
    if isinstance(ours, tuple):
        assert ours == tuple(theirs)
        return
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
