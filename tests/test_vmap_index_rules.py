"""Batching rules of the indexing and lookup ops (``ember/_batched/indexed.py``,
``search.py``) and of the small ops that left the slow fallback with them (``copy``,
``fill.Tensor``, ``frexp``, ``ldexp_``...). Each case runs under ``vmap`` without the
fallback's warning and equals ``torch.func.vmap`` on the same inputs, over in_dims other
than 0 and nested vmaps too."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest

import ember
from ember.func import vmap

from ._vmap_compare import arr as _arr
from ._vmap_compare import close
from ._vmap_compare import idx as _idx
from ._vmap_compare import to_lib as _lib
from .conftest import requires_torch, torch

pytestmark = requires_torch

_close = partial(close, tol=1e-5)


def _no_fallback(run: Callable[[], Any]) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run()
    fallback = [str(w.message) for w in caught if "batching rule" in str(w.message)]
    assert not fallback, fallback
    return out


def _both(fn: Callable[[Any], Any], *inputs: Any, in_dims: Any = 0, nest: Any = None) -> None:
    """``vmap(fn(lib))`` (or, with ``nest``, ``vmap(vmap(fn(lib), in_dims), nest)``) on
    ``inputs`` in ember, without the fallback, equals it in torch."""

    def run(lib: Any) -> Any:
        f = lib.func.vmap(fn(lib), in_dims=in_dims)
        if nest is not None:
            f = lib.func.vmap(f, in_dims=nest)
        return f(*_lib(lib, inputs))

    got = _no_fallback(lambda: run(ember))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's own fallback, for some of these ops)
        want = run(torch)
    _close(got, want)


#: PyTorch's in-place error under vmap (its wording varies by op: "inplace arithmetic" or
#: the op's name)
_INPLACE = "vmap: .* is not possible because there exists a Tensor `other` in extra_args"


def _loop(fn: Callable[[Any], Any], *inputs: Any, in_dims: Any) -> None:
    """``vmap(fn(ember))`` without the fallback equals a loop of ``fn(torch)`` over the
    batch (where ``torch.func.vmap`` itself is wrong)."""
    got = _no_fallback(lambda: vmap(fn(ember), in_dims=in_dims)(*_lib(ember, inputs)))
    ts = _lib(torch, inputs)
    size = next(t.shape[d] for t, d in zip(ts, in_dims, strict=True) if d is not None)
    pick = lambda t, d, b: t if d is None else t.select(d, b)  # noqa: E731
    want = torch.stack([fn(torch)(*(pick(t, d, b) for t, d in zip(ts, in_dims, strict=True)))
                        for b in range(size)])  # fmt: skip
    _close(got, want)


# ------------------------------------------------------------------ along a dimension

_DIMS = [(0, 0, 0), (None, 0, None), (None, 0, 0), (1, 0, 2), (0, None, 0)]


@pytest.mark.parametrize("dims", _DIMS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_add_and_copy(dims: tuple[Any, ...], dim: int) -> None:
    b = 3
    x, src = _arr(4, 5, seed=1), _arr(4, 5, seed=2)
    k = 2
    index = np.stack([np.random.default_rng(i).permutation(x.shape[dim])[:k] for i in range(b)])
    xs = x if dims[0] is None else np.stack([x + i for i in range(b)], dims[0])
    ix = index[0] if dims[1] is None else index
    sshape = list(x.shape)
    sshape[dim] = k
    s = _arr(*sshape, seed=3)
    ss = s if dims[2] is None else np.stack([s * (i + 1) for i in range(b)], dims[2])
    if all(d is None for d in (dims[0], dims[2])) and dims[1] is None:
        pytest.skip("nothing batched")
    del src
    _both(lambda m: lambda a, i, c: m.index_add(a, dim, i, c, alpha=2), xs, ix, ss, in_dims=dims)
    _both(lambda m: lambda a, i, c: m.index_copy(a, dim, i, c), xs, ix, ss, in_dims=dims)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_with_a_batched_index(reduce: str, include_self: bool) -> None:
    x, src = _arr(3, 4, 5, seed=1), _arr(3, 6, 5, seed=2)
    index = _idx(4, 3, 6, seed=3)  # repeated indices: several sources reduce into one row

    def fn(m: Any) -> Any:
        return lambda a, i, c: a.index_reduce(0, i, c, reduce, include_self=include_self)

    _both(fn, x, index, src)
    _both(fn, x[0], index, src, in_dims=(None, 0, 0))
    _both(fn, x, index[0], src[0], in_dims=(0, None, None))


def test_index_fill_with_batched_index_and_value() -> None:
    x, index = _arr(3, 4, 5), _idx(5, 3, 2, seed=1)
    value = np.array([1.5, -2.0, 7.0], np.float32)

    def scalar(m: Any) -> Any:
        return lambda a, i: m.index_fill(a, 1, i, -1.0)

    def tensor(m: Any) -> Any:
        return lambda a, i, v: m.index_fill(a, 1, i, v)

    _both(scalar, x, index)
    _both(scalar, x[0], index, in_dims=(None, 0))
    _both(tensor, x, index, value)
    # with self unbatched, torch.func.vmap writes every example's value into one shared
    # tensor (PyTorch 2.13): the loop is the oracle
    _loop(tensor, x[0], index, value, in_dims=(None, 0, 0))
    _loop(tensor, x[0], index[0], value, in_dims=(None, None, 0))
    _both(tensor, x, index[0], value[0], in_dims=(0, None, None))


def test_index_fill_with_batched_negative_indices_matches_a_loop() -> None:
    """torch.func.vmap's index_fill shifts a batched negative index into the previous
    example's slice (PyTorch 2.13); ember's result is the loop's."""
    x, index = _arr(3, 4, 5), np.array([[-2, 1], [0, -1], [2, -5]], np.int64)
    value = np.array([1.5, -2.0, 7.0], np.float32)
    _loop(lambda m: lambda a, i: m.index_fill(a, 1, i, -1.0), x, index, in_dims=(0, 0))
    _loop(lambda m: lambda a, i, v: m.index_fill(a, 1, i, v), x[0], index, value,
          in_dims=(None, 0, 0))  # fmt: skip


def test_index_ops_on_a_0_dim_self() -> None:
    x, index = np.array([1.0, 2.0, 3.0], np.float32), np.zeros((3, 1), np.int64)
    _both(lambda m: lambda a, i: m.index_fill(a, 0, i, 5.0), x, index)
    _both(lambda m: lambda a, i, s: m.index_add(a, 0, i, s), x, index[0], x * 2,
          in_dims=(0, None, 0))  # fmt: skip


def test_nested_vmap_of_index_add() -> None:
    x, src = _arr(2, 3, 4, 5, seed=1), _arr(2, 3, 2, 5, seed=2)
    index = np.stack([np.stack([np.random.default_rng(10 * i + j).permutation(4)[:2]
                                for j in range(3)]) for i in range(2)])  # fmt: skip

    def fn(m: Any) -> Any:
        return lambda a, i, c: m.index_add(a, 0, i, c)

    _both(fn, x, index, src, nest=0)
    _both(fn, x[0, 0], index.transpose(1, 0, 2), src, in_dims=(None, 0, 0),
          nest=(None, 1, 0))  # fmt: skip


def test_index_add_out_of_range_in_a_batched_index_raises() -> None:
    """Example 0's index 4 is out of its own range: not example 1's row 0."""
    x, src = np.zeros((2, 4, 3), np.float32), _arr(2, 1, 3)
    index = np.array([[4], [0]], np.int64)
    for lib in (ember, torch):
        with pytest.raises((IndexError, RuntimeError)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.func.vmap(lambda a, i, c, m=lib: m.index_add(a, 0, i, c))(
                *_lib(lib, (x, index, src))
            )
    index = np.array([[-1], [0]], np.int64)  # negative: index_add refuses, index_fill wraps
    with pytest.raises((IndexError, RuntimeError)), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vmap(lambda a, i, c: ember.index_add(a, 0, i, c))(*_lib(ember, (x, index, src)))
    _loop(lambda m: lambda a, i: m.index_fill(a, 0, i, 1.0), x, index, in_dims=(0, 0))


@pytest.mark.parametrize(
    "name, call",
    [
        ("index_add_", lambda a, i, s: a.index_add_(0, i, s)),
        ("index_copy_", lambda a, i, s: a.index_copy_(0, i, s)),
        ("index_reduce_", lambda a, i, s: a.index_reduce_(0, i, s, "amax")),
        ("index_fill_", lambda a, i, s: a.index_fill_(0, i, s[0, 0])),
    ],
)
def test_in_place_index_ops_into_unbatched_self_raise(name: str, call: Any) -> None:
    x, src = _arr(4, 3), _arr(2, 1, 3, seed=1)
    index = np.array([[1], [2]], np.int64)
    for lib in (ember, torch):
        a, i, s = _lib(lib, (x, index, src))
        with pytest.raises(RuntimeError, match=_INPLACE), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch's fallback, on its way to the error)
            lib.func.vmap(lambda ii, ss, a=a: call(a, ii, ss))(i, s)
    a, i, s = _lib(ember, (np.stack([x, x]), index, src))  # batched self: written in place
    want = _lib(torch, (np.stack([x, x]), index, src))
    _no_fallback(lambda: vmap(call)(a, i, s))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's fallback)
        torch.func.vmap(call)(*want)
    _close(a, want[0])


# ------------------------------------------------------------------ take, put, masks


@pytest.mark.parametrize("dims", [(0, 0), (None, 0), (0, None), (1, 0)])
def test_take(dims: tuple[Any, ...]) -> None:
    x, index = _arr(3, 4, 5), _idx(20, 3, 2, 3, seed=1) - 10  # negative indices wrap
    xs = x if dims[0] != 1 else x.transpose(1, 0, 2)
    xs = xs if dims[0] is not None else x[0]
    ix = index if dims[1] is not None else index[0]
    _both(lambda m: lambda a, i: m.take(a, i), xs, ix, in_dims=dims)


def test_take_nested_and_out_of_range() -> None:
    x, index = _arr(2, 3, 4), _idx(4, 2, 3, 5, seed=1)
    _both(lambda m: lambda a, i: m.take(a, i), x, index, nest=0)
    bad = np.array([[4], [0]], np.int64)  # example 0 reads past its own 4 elements
    for lib in (ember, torch):
        with pytest.raises((IndexError, RuntimeError)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.func.vmap(lambda a, i, m=lib: m.take(a, i))(*_lib(lib, (x[:, 0], bad)))


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize(
    "dims", [(0, 0, 0), (None, 0, 0), (0, None, 0), (None, None, 0), (2, 0, 1)]
)
def test_put(accumulate: bool, dims: tuple[Any, ...]) -> None:
    x, src = _arr(3, 2, 5), _arr(3, 4, seed=2)
    index = _idx(10, 3, 4, seed=1)  # repeats: accumulate adds them up
    if not accumulate:  # (a repeated index without accumulate writes an unspecified one)
        index = np.stack([np.random.default_rng(i).permutation(10)[:4] for i in range(3)])
    xs = x if dims[0] in (0, None) else np.moveaxis(x, 0, dims[0])
    xs = xs if dims[0] is not None else x[0]
    ix = index if dims[1] is not None else index[0]
    ss = src if dims[2] != 1 else src.T
    _both(lambda m: lambda a, i, s: a.put(i, s, accumulate), xs, ix, ss, in_dims=dims)


def test_put_in_place_on_a_batched_self() -> None:
    x, src, index = _arr(3, 2, 5), _arr(3, 4, seed=2), _idx(10, 3, 4, seed=1)
    got, want = _lib(ember, (x, index, src)), _lib(torch, (x, index, src))
    _no_fallback(lambda: vmap(lambda a, i, s: a.put_(i, s, accumulate=True))(*got))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's fallback)
        torch.func.vmap(lambda a, i, s: a.put_(i, s, accumulate=True))(*want)
    _close(got[0], want[0])


@pytest.mark.parametrize(
    "dims", [(0, 0, 0), (None, 0, 0), (0, 0, None), (None, 0, None), (0, None, 0)]
)
def test_masked_scatter_with_per_example_counts(dims: tuple[Any, ...]) -> None:
    x, src = _arr(3, 4, 5), _arr(3, 20, seed=2)
    mask = np.random.default_rng(1).random((3, 4, 5)) > 0.5  # a different count per example
    xs = x if dims[0] is not None else x[0]
    ms = mask if dims[1] is not None else mask[0]
    ss = src if dims[2] is not None else src[0]
    _both(lambda m: lambda a, k, s: a.masked_scatter(k, s), xs, ms, ss, in_dims=dims)
    # a mask that broadcasts over self's rows
    _both(lambda m: lambda a, k, s: a.masked_scatter(k, s), x, mask[:, :1], src)


def test_masked_scatter_with_too_short_a_source_raises() -> None:
    x, src = np.zeros((2, 4), np.float32), _arr(2, 2)
    mask = np.array([[True, False, False, False], [True, True, True, False]])
    for lib in (ember, torch):
        with pytest.raises(RuntimeError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.func.vmap(lambda a, k, s: a.masked_scatter(k, s))(*_lib(lib, (x, mask, src)))


def test_masked_scatter_in_place() -> None:
    x, src = _arr(3, 4, 5), _arr(3, 20, seed=2)
    mask = np.random.default_rng(1).random((3, 4, 5)) > 0.5
    got, want = _lib(ember, (x, mask, src)), _lib(torch, (x, mask, src))
    _no_fallback(lambda: vmap(lambda a, k, s: a.masked_scatter_(k, s))(*got))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's fallback)
        torch.func.vmap(lambda a, k, s: a.masked_scatter_(k, s))(*want)
    _close(got[0], want[0])
    a, k, s = _lib(ember, (x[0], mask, src))
    with pytest.raises(RuntimeError, match=_INPLACE):
        vmap(lambda kk, ss: a.masked_scatter_(kk, ss))(k, s)


# ------------------------------------------------------------------ small ops


def test_copy_and_fill_with_batched_values_into_an_unbatched_self() -> None:
    x, src, value = _arr(3, 4), _arr(2, 3, 4, seed=1), _arr(2, seed=2)
    aten = {ember: ember.ops.aten, torch: torch.ops.aten}
    _both(lambda m: lambda s: aten[m].copy.default(m.from_numpy(x.copy()), s), src)
    _both(lambda m: lambda s: aten[m].copy.default(m.from_numpy(x.copy()), s), src[:, 0])
    _both(lambda m: lambda v: aten[m].fill.Tensor(m.from_numpy(x.copy()), v), value)
    xi = np.arange(12).reshape(3, 4)  # an integer self: the value is cast to it
    _both(lambda m: lambda v: aten[m].fill.Tensor(m.from_numpy(xi.copy()), v), value * 3)
    _both(lambda m: lambda a, v: aten[m].fill.Tensor(a, v), np.moveaxis(src, 0, 1), value,
          in_dims=(1, 0))  # fmt: skip


def test_frexp_ldexp_renorm_conj_physical_in_place() -> None:
    x, e = _arr(3, 4, 5) * 10, _idx(5, 3, 4, 5, seed=1)
    _both(lambda m: lambda a: m.frexp(a), x, in_dims=1)
    _both(lambda m: lambda a, k: a.clone().ldexp_(k), x, e)
    _both(lambda m: lambda a, k: a.clone().ldexp_(k), x, e[0], in_dims=(0, None))
    _both(lambda m: lambda a: a.clone().renorm_(2, 0, 1.0), x, in_dims=2)
    _both(lambda m: lambda a: a.clone().conj_physical_(), x)
    c = (x + 1j * x[::-1]).astype(np.complex64)
    _both(lambda m: lambda a: a.clone().conj_physical_(), c)
    a = ember.from_numpy(x[0].copy())
    with pytest.raises(RuntimeError, match=_INPLACE):
        vmap(lambda k: a.ldexp_(k))(ember.from_numpy(e))


# ------------------------------------------------------------------ lookups


def test_isin() -> None:
    x, test = _idx(6, 3, 4, 5).astype(np.float32), _idx(6, 3, 3, seed=1).astype(np.float32)
    _both(lambda m: lambda a: m.isin(a, m.tensor([1.0, 4.0])), x)
    _both(lambda m: lambda a, t: m.isin(a, t), x, test)
    _both(lambda m: lambda a, t: m.isin(a, t, invert=True), x[0], test, in_dims=(None, 0))
    _both(lambda m: lambda t: m.isin(3.0, t), test)
    _both(lambda m: lambda a: m.isin(a, 2), x, in_dims=2)
    ints = _idx(6, 3, 4, seed=2)  # an integer 0-dim element against float test elements
    _both(lambda m: lambda a, t: m.isin(a, t), ints[:, 0], test)


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_and_searchsorted(right: bool) -> None:
    x = np.round(_arr(3, 4, 5) * 2) / 2  # values on the boundaries too
    bounds = np.sort(np.round(_arr(3, 6, seed=1) * 2) / 2, axis=-1)
    _both(lambda m: lambda a: m.bucketize(a, m.tensor([-1.0, 0.0, 1.0]), right=right), x)
    _both(lambda m: lambda a, b: m.bucketize(a, b, right=right), x, bounds)
    _both(lambda m: lambda a, b: m.bucketize(a, b, out_int32=True, right=right), x[0], bounds,
          in_dims=(None, 0))  # fmt: skip
    _both(lambda m: lambda b: m.bucketize(0.5, b, right=right), bounds)
    _both(lambda m: lambda b, a: m.searchsorted(b, a, right=right), bounds, np.moveaxis(x, 0, 1),
          in_dims=(0, 1))  # fmt: skip
    _both(lambda m: lambda b: m.searchsorted(b, 0.5, right=right), bounds)
    rows = np.sort(_arr(3, 4, 6, seed=2), axis=-1)  # an N-D sequence: one row per value row
    _both(lambda m: lambda b, a: m.searchsorted(b, a, right=right), rows, x)
    _both(lambda m: lambda b, a: m.searchsorted(b, a, right=right), rows[0], x, in_dims=(None, 0))
    _both(lambda m: lambda b, a: m.searchsorted(b, a, right=right), rows, x[0], in_dims=(0, None))
    nested = np.sort(_arr(2, 3, 6, seed=3), axis=-1)
    _both(lambda m: lambda b, a: m.bucketize(a, b), nested, _arr(2, 3, 5), nest=0)


def test_searchsorted_with_a_batched_sorter() -> None:
    seq = _arr(3, 6, seed=1)
    sorter = np.argsort(seq, axis=-1).astype(np.int64)
    x = _arr(3, 4)
    _both(lambda m: lambda s, a, o: m.searchsorted(s, a, sorter=o), seq, x, sorter)
    _both(lambda m: lambda s, a, o: m.searchsorted(s, a, sorter=o, side="right"), seq[0], x,
          sorter[0], in_dims=(None, 0, None))  # fmt: skip


# ------------------------------------------------------------------ per-example gradients


def test_vmap_of_grad_through_masked_scatter_with_per_example_masks() -> None:
    """The source's gradient is a scatter by rank, not ``masked_select`` (whose size would
    differ between the examples)."""
    x, src = _arr(3, 4, 5), _arr(3, 25, seed=2)
    mask = np.random.default_rng(1).random((3, 4, 5)) > 0.5

    def fn(m: Any) -> Any:
        def loss(a: Any, k: Any, s: Any) -> Any:
            y = a.masked_scatter(k, s)
            return (y * y * m.arange(20.0).reshape(4, 5)).sum()

        return m.func.grad(loss, argnums=(0, 2))

    _both(fn, x, mask, src)
    _both(fn, x[0], mask, src[0], in_dims=(None, 0, None))


def test_vmap_of_grad_through_index_fill_with_a_batched_index() -> None:
    """The fill value's gradient counts each filled position once (repeats too), from a mask
    of the positions rather than ``_unique2`` of the index."""
    x, value = _arr(3, 4, 5), np.array([1.5, -2.0, 0.5], np.float32)
    index = np.array([[1, 1, 3], [0, 2, 2], [4, 0, 4]], np.int64)

    def fn(m: Any) -> Any:
        def loss(a: Any, i: Any, v: Any) -> Any:
            y = m.index_fill(a, 1, i, v)
            return (y * y * m.arange(20.0).reshape(4, 5)).sum()

        return m.func.grad(loss, argnums=(0, 2))

    _both(fn, x, index, value)


# ------------------------------------------------------------------ embedding_renorm


def _renorm(m: Any) -> Callable[..., Any]:
    return lambda w, i: m.embedding_renorm_(w.clone(), i, 1.0, 2.0)


@pytest.mark.parametrize("dims", [(0, 0), (1, 0), (0, None), (2, 1)])
def test_embedding_renorm_per_example_rows(dims: tuple[Any, ...]) -> None:
    """Each example renormalises its own rows, each once (repeated and negative indices)."""
    shape = [5, 4]
    if dims[0] is not None:
        shape.insert(dims[0], 3)
    w = _arr(*shape) * 2  # most rows' norms above max_norm
    i = np.array([[0, 2, 2, -1], [1, 1, 3, -5], [4, 0, 0, 0]], np.int64)
    if dims[1] is None:
        i = i[0]
    elif dims[1] == 1:
        i = i.T.copy()
    _both(_renorm, w, i, in_dims=dims)


def test_embedding_renorm_nested_and_functional_with_unbatched_weight() -> None:
    w, i = _arr(2, 3, 5, 4) * 2, _idx(5, 3, 2, seed=2)
    _both(_renorm, w, i, in_dims=(0, 1), nest=(1, None))
    # an unbatched weight renormalised per example (the functional op; PyTorch has only the
    # in-place one, which a loop runs on copies)
    w1 = _arr(5, 4) * 2
    got = _no_fallback(
        lambda: vmap(lambda a, j: ember.ops.aten.embedding_renorm.default(a, j, 1.0, 2.0),
                     in_dims=(None, 0))(*_lib(ember, (w1, i[:, 0])))
    )  # fmt: skip
    tw, ti = _lib(torch, (w1, i[:, 0]))
    want = torch.stack([torch.embedding_renorm_(tw.clone(), ti[b], 1.0, 2.0) for b in range(3)])
    _close(got, want)


def test_embedding_renorm_out_of_range_in_one_example_raises() -> None:
    """Example 0's index 5 is past its 5 rows: an error, not example 1's row 0."""
    w, i = _arr(2, 5, 4), np.array([[5], [0]], np.int64)
    for lib in (ember, torch):
        with pytest.raises((IndexError, RuntimeError)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.func.vmap(_renorm(lib))(*_lib(lib, (w, i)))
