"""Batching rules that replaced the slow fallback: normalization layers and their backward
ops, ``index_put``, the solve family, ``as_strided``. Each case runs under ``vmap`` without
the fallback's warning and equals ``torch.func.vmap`` on the same inputs."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.func import vmap

from ._vmap_compare import arr as _arr
from ._vmap_compare import close
from ._vmap_compare import to_lib as _lib
from .conftest import requires_torch, torch

pytestmark = requires_torch

_close = close


def _both(fn: Callable[..., Any], *inputs: Any, in_dims: Any = 0) -> tuple[Any, Any]:
    """``vmap(fn(lib))`` on ``inputs`` in ember (no fallback warning) and in torch."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = vmap(fn(ember), in_dims=in_dims)(*_lib(ember, inputs))
    fallback = [str(w.message) for w in caught if "batching rule" in str(w.message)]
    assert not fallback, fallback
    want = torch.func.vmap(fn(torch), in_dims=in_dims)(*_lib(torch, inputs))
    _close(got, want)
    return got, want


# ------------------------------------------------------------------ normalization layers


@pytest.mark.parametrize("dims", [(0, 0, 0), (None, 0, 0), (0, 0, None), (0, None, 0)])
def test_layer_norm_with_batched_affine(dims: tuple[Any, ...]) -> None:
    x, w, b = _arr(4, 3, 5), _arr(4, 5, seed=1), _arr(4, 5, seed=2)
    x = x if dims[0] == 0 else x[0]
    w = w if dims[1] == 0 else w[0]
    b = b if dims[2] == 0 else b[0]
    _both(lambda m: lambda xx, ww, bb: m.nn.functional.layer_norm(xx, (5,), ww, bb), x, w, b,
          in_dims=dims)  # fmt: skip


def _norm_grads(norm: Callable[[Any, Any, Any, Any], Any]) -> Callable[[Any], Any]:
    """Per-example gradients of a loss through ``norm(lib, x, w, b)`` for every argument."""

    def make(m: Any) -> Any:
        def loss(xx: Any, ww: Any, bb: Any) -> Any:
            return (norm(m, xx, ww, bb) * m.arange(xx.numel()).reshape(xx.shape).sin()).sum()

        return m.func.grad(loss, argnums=(0, 1, 2))

    return make


def test_layer_norm_backward_with_batched_weight() -> None:
    x, w, b = _arr(3, 2, 6), _arr(3, 6, seed=1), _arr(3, 6, seed=2)
    _both(_norm_grads(lambda m, xx, ww, bb: m.nn.functional.layer_norm(xx, (6,), ww, bb)),
          x, w, b)  # fmt: skip
    _both(_norm_grads(lambda m, xx, ww, bb: m.nn.functional.layer_norm(xx, (6,), ww, bb)),
          x, w[0], b[0], in_dims=(0, None, None))  # fmt: skip


@pytest.mark.parametrize("dims", [(0, 0, 0), (0, None, None), (None, 0, 0)])
def test_group_norm_and_its_backward(dims: tuple[Any, ...]) -> None:
    x, w, b = _arr(3, 2, 6, 4), _arr(3, 6, seed=1), _arr(3, 6, seed=2)
    x = x if dims[0] == 0 else x[0]
    w = w if dims[1] == 0 else w[0]
    b = b if dims[2] == 0 else b[0]
    gn = lambda m, xx, ww, bb: m.nn.functional.group_norm(xx, 3, ww, bb)  # noqa: E731
    _both(lambda m: lambda xx, ww, bb: gn(m, xx, ww, bb), x, w, b, in_dims=dims)
    _both(_norm_grads(gn), x, w, b, in_dims=dims)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_with_batched_statistics_and_affine(training: bool) -> None:
    x, w, b = _arr(3, 4, 5, 2), _arr(3, 5, seed=1), _arr(3, 5, seed=2)
    rm, rv = _arr(3, 5, seed=3), np.abs(_arr(3, 5, seed=4)) + 0.5

    def fn(m: Any) -> Any:
        def f(xx: Any, ww: Any, bb: Any, mean: Any, var: Any) -> Any:
            out = m.nn.functional.batch_norm(xx, mean, var, ww, bb, training=training)
            return out, mean, var  # the running statistics, updated in training

        return f

    _both(fn, x, w, b, rm, rv)
    _both(_norm_grads(lambda m, xx, ww, bb: m.nn.functional.batch_norm(
        xx, None, None, ww, bb, training=True)), x, w, b)  # fmt: skip


def test_batch_norm_backward_in_eval_mode_with_running_statistics() -> None:
    x, w, b = _arr(3, 4, 5), _arr(5, seed=1), _arr(5, seed=2)
    rm, rv = _arr(5, seed=3), np.abs(_arr(5, seed=4)) + 0.5

    def bn(m: Any, xx: Any, ww: Any, bb: Any) -> Any:
        mean, var = _lib(m, rm), _lib(m, rv)
        return m.nn.functional.batch_norm(xx, mean, var, ww, bb, training=False)

    _both(_norm_grads(bn), x, w, b, in_dims=(0, None, None))


# ------------------------------------------------------------------ index_put


INDEX_PUT = [
    # (self shape, index shapes by position (None: a full slice), values shape, which batched)
    ((5, 4), [(3,), None], (3, 4), "index"),
    ((5, 4), [(3,), (3,)], (3,), "index"),
    ((5, 4), [(3,), (3,)], (), "all"),
    ((5, 4, 2), [(2, 3), None, (3,)], (2, 3, 4), "index"),
    ((5, 4), [(3,), None], (4,), "values"),
    ((5, 4), [(3,), None], (3, 4), "self"),
]


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("case", range(len(INDEX_PUT)))
def test_index_put_with_batched_arguments(case: int, accumulate: bool) -> None:
    shape, index_shapes, values_shape, batched = INDEX_PUT[case]
    rng = np.random.default_rng(case)
    b = 3
    x = _arr(b, *shape)
    idx = [None if s is None else rng.integers(0, shape[i], (b, *s)) for i, s in
           enumerate(index_shapes)]  # fmt: skip
    vals = _arr(b, *values_shape, seed=5)
    dx = 0 if batched in ("self", "all") else None
    di = 0 if batched in ("index", "all") else None
    dv = 0 if batched in ("values", "all") else None
    x = x if dx == 0 else x[0]
    idx = [t if t is None or di == 0 else t[0] for t in idx]
    vals = vals if dv == 0 else vals[0]

    def fn(m: Any) -> Any:
        def f(xx: Any, ii: Any, vv: Any) -> Any:
            return m.ops.aten.index_put(xx, list(ii), vv, accumulate)

        return f

    _both(fn, x, tuple(idx), vals, in_dims=(dx, tuple(None if t is None else di for t in idx), dv))


def test_index_put_in_place_into_batched_self() -> None:
    x, vals = _arr(3, 5, 4), _arr(3, 2, 4, seed=1)
    idx = np.random.default_rng(0).integers(0, 5, (3, 2))

    def fn(m: Any) -> Any:
        def f(xx: Any, ii: Any, vv: Any) -> Any:
            xx = xx.clone()
            xx.index_put_((ii,), vv, accumulate=True)
            return xx

        return f

    _both(fn, x, idx, vals)


def test_index_put_in_place_into_unbatched_self_raises() -> None:
    x, idx = ember.zeros(5), ember.tensor([[0], [1]])
    with pytest.raises(RuntimeError, match="inplace"):
        vmap(lambda i: x.index_put_((i,), ember.ones(1)))(idx)


# ------------------------------------------------------------------ solve family


def _spd(*shape: int, seed: int = 0) -> np.ndarray:
    a = _arr(*shape, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1], dtype=np.float32)


SOLVE = [  # (A shape, B shape, in_dims, left)
    ((3, 4, 4), (3, 4), (0, 0), True),
    ((4, 4), (3, 4), (None, 0), True),
    ((3, 4, 4), (4,), (0, None), True),
    ((3, 2, 4, 4), (3, 4, 2), (0, 0), True),
    ((3, 4, 4), (3, 2, 4), (0, 0), False),
    ((3, 4, 4), (3, 4, 4), (0, 0), True),
]


@pytest.mark.parametrize("case", range(len(SOLVE)))
def test_linalg_solve(case: int) -> None:
    # against a loop in torch: torch.func.vmap of linalg.solve fails on case 3 (a batch of
    # matrices and a batched right-hand side with fewer batch dimensions)
    sa, sb, dims, left = SOLVE[case]
    a, b = _spd(*sa), _arr(*sb, seed=1)
    ta, tb = _lib(torch, (a, b))

    def pick(t: Any, d: Any, i: int) -> Any:
        return t if d is None else t[i]

    for name in ("solve", "solve_ex"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn = getattr(ember.linalg, name)
            got = vmap(functools.partial(fn, left=left), in_dims=dims)(*_lib(ember, (a, b)))
        assert not [w for w in caught if "batching rule" in str(w.message)]
        outs = [getattr(torch.linalg, name)(pick(ta, dims[0], i), pick(tb, dims[1], i), left=left)
                for i in range(3)]  # fmt: skip
        if name == "solve":
            _close(got, torch.stack(outs))
        else:
            _close(tuple(got), tuple(torch.stack([o[k] for o in outs]) for k in range(2)))


@pytest.mark.parametrize("dims", [(0, 0), (None, 0), (0, None)])
def test_linalg_solve_triangular(dims: tuple[Any, ...]) -> None:
    a = np.triu(_spd(3, 2, 4, 4))
    b = _arr(3, 4, 3, seed=1)
    a = a if dims[0] == 0 else a[0]
    b = b if dims[1] == 0 else b[0]
    _both(lambda m: lambda aa, bb: m.linalg.solve_triangular(aa, bb, upper=True), a, b,
          in_dims=dims)  # fmt: skip


def test_linalg_pinv_with_tensor_tolerances() -> None:
    a, atol = _arr(3, 2, 4, 5), np.abs(_arr(3, 2, seed=1))
    _both(lambda m: lambda aa, t: m.linalg.pinv(aa, atol=t), a, atol)
    _both(lambda m: lambda aa, t: m.linalg.pinv(aa, atol=t), a[0], atol, in_dims=(None, 0))


# ------------------------------------------------------------------ as_strided


def test_as_strided_of_each_example() -> None:
    x = _arr(3, 4, 5)
    _both(lambda m: lambda t: t.as_strided((2, 3), (5, 1), 2), x)
    _both(lambda m: lambda t: t.as_strided((4, 5), (1, 4)), x.transpose(0, 2, 1).copy())
    # a slice of a bigger tensor: its storage offset is example 0's
    big = _arr(3, 6, 5, seed=1)
    _both(lambda m: lambda t: t[1:].as_strided((3,), (6,), t[1:].storage_offset() + 1), big)


def test_as_strided_errors() -> None:
    x = ember.ones(3, 4)
    with pytest.raises(RuntimeError, match="can access memory outside"):
        vmap(lambda t: t.as_strided((5,), (1,)))(x)
    with pytest.raises(RuntimeError, match="can access memory outside"):
        vmap(lambda t: t[1:].as_strided((2,), (1,), 0))(x)  # before example 0's slice
    with pytest.raises(RuntimeError, match="batch dims being vmapped over are at the front"):
        vmap(lambda t: t.as_strided((3,), (1,)), in_dims=1)(x)


# ------------------------------------------------------------------ stack, einsum, LU


def test_stack_of_batched_and_unbatched_tensors() -> None:
    x = _arr(3, 2, 4)
    _both(lambda m: lambda t: m.stack([t, m.ones(2, 4), t * 2], -1), x)
    _both(lambda m: lambda t: m.stack([t, t], 0), x, in_dims=1)


@pytest.mark.parametrize(
    "equation", ["ij,jk->ik", "ij,jk", "ii->i", "...ij,...jk", "bij, bjk -> bik", "i,i"]
)
@pytest.mark.parametrize("dims", [(0, 0), (0, None), (None, 0)])
def test_einsum(equation: str, dims: tuple[Any, ...]) -> None:
    shapes = {
        "ij,jk->ik": ((3, 4), (4, 2)), "ij,jk": ((3, 4), (4, 2)), "ii->i": ((3, 3), (3, 3)),
        "...ij,...jk": ((2, 3, 4), (2, 4, 5)), "bij, bjk -> bik": ((2, 3, 4), (2, 4, 5)),
        "i,i": ((4,), (4,)),
    }[equation]  # fmt: skip
    a = _arr(5, *shapes[0]) if dims[0] == 0 else _arr(*shapes[0])
    b = _arr(5, *shapes[1], seed=1) if dims[1] == 0 else _arr(*shapes[1], seed=1)
    if equation == "ii->i":
        _both(lambda m: lambda x, y: m.einsum(equation, x), a, b, in_dims=dims)
        return
    _both(lambda m: lambda x, y: m.einsum(equation, x, y), a, b, in_dims=dims)


@pytest.mark.filterwarnings(
    "ignore:There is a performance drop:UserWarning"
)  # torch lacks linalg_lu
def test_lu_factor_unpack_and_solve() -> None:
    a, b = _spd(3, 4, 4), _arr(3, 4, 2, seed=1)
    _both(lambda m: lambda x: m.linalg.lu_factor(x), a)
    _both(lambda m: lambda x: m.linalg.lu(x), a)

    def solve(m: Any) -> Any:
        def f(x: Any, y: Any) -> Any:
            lu, piv = m.linalg.lu_factor(x)
            return m.linalg.lu_solve(lu, piv, y), m.lu_unpack(lu, piv)

        return f

    _both(solve, a, b)
    _both(solve, a[0], b, in_dims=(None, 0))


# ------------------------------------------------------------------ foreach


def test_foreach_ops_with_batched_list_elements() -> None:
    # against a loop in torch (torch.func.vmap has no rule nor fallback for them)
    a, b = _arr(3, 4), _arr(3, 2, 2, seed=1)

    def fn(m: Any) -> Any:
        def f(x: Any, y: Any) -> Any:
            added = m._foreach_add([x, y], [m.ones(4), y], alpha=2)
            fused = m._foreach_addcmul([x, y], [x, y], [x * 0 + 3, y], value=0.5)
            z = [x.clone(), y.clone()]
            m._foreach_mul_(z, 1.5)
            return (*added, *fused, *z, *m._foreach_exp([x]))

        return f

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = vmap(fn(ember))(*_lib(ember, (a, b)))
    assert not [w for w in caught if "batching rule" in str(w.message)]
    ta, tb = _lib(torch, (a, b))
    outs = [fn(torch)(ta[i], tb[i]) for i in range(3)]
    _close(got, tuple(torch.stack([o[k] for o in outs]) for k in range(len(outs[0]))))


@pytest.mark.parametrize("dims", [(0, 0), (None, 0), (0, None)])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_with_a_batched_index(dims: tuple[Any, ...], dim: int) -> None:
    x = _arr(3, 4, 5, 2)
    idx = np.random.default_rng(0).integers(0, 2, (3, 6))
    x = x if dims[0] == 0 else x[0]
    idx = idx if dims[1] == 0 else idx[0]
    _both(lambda m: lambda t, i: m.index_select(t, dim, i), x, idx, in_dims=dims)
    # a 0-dim index, against a loop: torch.func.vmap gives the unselected shape here
    got = vmap(lambda t, i: ember.index_select(t, dim, i[0]), in_dims=dims)(*_lib(ember, (x, idx)))
    tx, ti = _lib(torch, (x, idx))
    want = torch.stack([torch.index_select(tx if dims[0] is None else tx[b], dim,
                                           (ti if dims[1] is None else ti[b])[0])
                        for b in range(3)])  # fmt: skip
    _close(got, want)


def test_index_select_out_of_range_raises_under_vmap() -> None:
    with pytest.raises((IndexError, RuntimeError)):
        vmap(lambda i: ember.index_select(ember.ones(3), 0, i))(ember.tensor([[0], [-1]]))
    with pytest.raises((IndexError, RuntimeError)):
        vmap(lambda i: ember.index_select(ember.ones(3), 0, i))(ember.tensor([[0], [3]]))


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_ensembles_and_per_sample_grads(padding_idx: Any) -> None:
    w = _arr(3, 6, 4)
    idx = np.random.default_rng(0).integers(0, 6, (3, 2, 5))
    emb = lambda m: lambda ww, ii: m.nn.functional.embedding(ii, ww, padding_idx)  # noqa: E731
    _both(emb, w, idx)  # batched tables and indices
    _both(emb, w, idx[0], in_dims=(0, None))  # an ensemble of tables
    _both(emb, w[0], idx, in_dims=(None, 0))

    def grads(m: Any) -> Any:
        def loss(ww: Any, ii: Any) -> Any:
            out = m.nn.functional.embedding(ii, ww, padding_idx)
            return (out * m.arange(out.numel()).reshape(out.shape).cos()).sum()

        return m.func.grad(loss)

    _both(grads, w[0], idx, in_dims=(None, 0))  # per-sample gradients of the table
    _both(grads, w, idx)
