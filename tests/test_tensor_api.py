"""The everyday PyTorch API of issue 11, beyond what the op harness checks per op
(tests/test_ops.py, test_lazy.py, test_fake_tensor.py and test_overrides.py cover every op
through its samples): the Python-level functions (``unique``, ``meshgrid``, ``tensordot``,
``cdist``, ...), method forms, return structures, the random fills (by their statistics,
since ember's streams are not PyTorch's), exception types, einsum's gradients, and ops
composed into small programs. Every expectation is PyTorch 2.13's, run side by side."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember._subclasses.fake_tensor import DynamicOutputShapeException, FakeTensorMode

from .conftest import raises_as_torch, requires_torch, torch

pytestmark = requires_torch

RNG = np.random.default_rng(11)


def pair(arr: Any, grad: bool = False) -> tuple[Any, Any]:
    """The same values as an ember and a torch tensor."""
    a = np.asarray(arr)
    return ember.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def same(e: Any, t: Any, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    """An ember result (a tensor, a number, or tuples of them) equals PyTorch's."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"expected a Tensor, got {type(e)}"
        assert e.dtype.name == str(t.dtype).removeprefix("torch."), (e.dtype, t.dtype)
        assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
        np.testing.assert_allclose(
            e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True
        )
    elif isinstance(t, (tuple, list)):
        assert type(e) is type(t) or (isinstance(e, tuple) and isinstance(t, tuple)), (e, t)
        assert len(e) == len(t)
        for a, b in zip(e, t, strict=True):
            same(a, b, rtol, atol)
    else:
        assert e == t, (e, t)


def both(fn: Callable[[Any, Any], Any], *arrays: Any) -> None:
    """``fn(lib, *tensors)`` on ember and on torch gives the same result."""
    es = [ember.tensor(np.asarray(a)) for a in arrays]
    ts = [torch.tensor(np.asarray(a)) for a in arrays]
    same(fn(ember, *es), fn(torch, *ts))


def raises_alike(fn: Callable[[Any], Any]) -> None:
    """``fn(ember)`` raises the builtin exception type ``fn(torch)`` raises."""
    raises_as_torch(fn)


# --------------------------------------------------------------------------- unique


@pytest.mark.parametrize("sorted_", [True, False])
@pytest.mark.parametrize("inverse", [True, False])
@pytest.mark.parametrize("counts", [True, False])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_return_structure_matches_torch(
    sorted_: bool, inverse: bool, counts: bool, dim: int | None
) -> None:
    x = RNG.integers(0, 3, (6, 2))
    x[3] = x[0]
    both(lambda lib, t: lib.unique(t, sorted_, inverse, counts, dim), x)
    both(lambda lib, t: t.unique(sorted=sorted_, return_inverse=inverse,
                                 return_counts=counts, dim=dim), x)  # fmt: skip


@pytest.mark.parametrize("inverse", [True, False])
@pytest.mark.parametrize("counts", [True, False])
@pytest.mark.parametrize("dim", [None, 0])
def test_unique_consecutive_matches_torch(inverse: bool, counts: bool, dim: int | None) -> None:
    x = np.array([[1, 2], [1, 2], [0, 3], [1, 2], [1, 2]])
    # (keywords: PyTorch 2.13 picks the wrong results for positional flags, e.g.
    # unique_consecutive(x, True, False) returns the empty counts in place of the inverse;
    # ember returns what the signature says)
    both(lambda lib, t: lib.unique_consecutive(t, return_inverse=inverse,
                                               return_counts=counts, dim=dim), x)  # fmt: skip
    both(lambda lib, t: t.unique_consecutive(return_inverse=inverse, return_counts=counts,
                                             dim=dim), x)  # fmt: skip


def test_unique_of_floats_with_nan_and_signed_zeros() -> None:
    x = np.array([1.0, np.nan, -0.0, 2.0, np.nan, 0.0, 1.0])
    both(lambda lib, t: lib.unique(t, return_inverse=True, return_counts=True), x)


def test_unique_inverse_rebuilds_the_input_and_counts_sum_to_its_size() -> None:
    x = ember.tensor(RNG.integers(-5, 5, (4, 7)))
    values, inverse, counts = ember.unique(x, return_inverse=True, return_counts=True)
    assert ember.equal(values[inverse], x)
    assert int(counts.sum()) == x.numel()
    assert bool((values[1:] > values[:-1]).all())


def _mode_log(lib: Any, calls: Callable[[], None]) -> list[tuple[str, tuple[type, ...]]]:
    """(function name, types) of every call a TorchFunctionMode sees while ``calls`` runs."""
    seen: list[tuple[str, tuple[type, ...]]] = []

    class Log(lib.overrides.TorchFunctionMode):  # type: ignore[name-defined, misc]
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            seen.append((getattr(func, "__name__", str(func)), tuple(types)))
            return func(*args, **(kwargs or {}))

    with Log():
        calls()
    return seen


def test_unique_takes_the_python_route_of_torch_function() -> None:
    logs = []
    for lib in (ember, torch):
        x = lib.tensor([2, 1, 2])

        def calls(lib: Any = lib, x: Any = x) -> None:
            lib.unique(x)
            x.unique_consecutive()
            lib.meshgrid(lib.ones(2), lib.ones(3), indexing="ij")

        logs.append([(n, len(t)) for n, t in _mode_log(lib, calls)])
    assert logs[0] == logs[1]
    # plain tensors count on the Python route: the mode sees (Tensor,), not ()
    assert logs[0][0] == ("unique", 1)


def test_unique_of_a_tensor_that_requires_grad_raises_at_backward_as_torch() -> None:
    e, t = pair([3.0, 1.0, 3.0], grad=True)
    eu, tu = ember.unique(e * 2), torch.unique(t * 2)
    assert eu.requires_grad and tu.requires_grad
    with pytest.raises(NotImplementedError):
        tu.sum().backward()
    with pytest.raises(NotImplementedError, match="_unique2"):
        eu.sum().backward()


def test_unique_on_fake_tensors_has_no_shape() -> None:
    with FakeTensorMode(), pytest.raises(DynamicOutputShapeException):
        ember.unique(ember.ones(4))


def test_unique_on_the_lazy_device_runs_eagerly() -> None:
    x = ember.tensor([3, 1, 3, 2]).to("lazy")
    values, counts = ember.unique(x * 2, return_counts=True)
    assert values.device.type == "lazy"
    assert values.to("cpu").tolist() == [2, 4, 6] and counts.to("cpu").tolist() == [1, 1, 2]


# --------------------------------------------------------------------------- order statistics


def test_median_family_return_named_tuples() -> None:
    x = RNG.permutation(12).reshape(3, 4).astype(np.float64)
    for name in ("median", "nanmedian", "mode"):
        e = getattr(ember.tensor(x), name)(1)
        t = getattr(torch.tensor(x), name)(1)
        assert type(e).__name__ == name and type(e) is getattr(ember.return_types, name)
        assert e._fields == ("values", "indices")
        same(e.values, t.values)
        same(e.indices, t.indices)
    e = ember.kthvalue(ember.tensor(x), 2, 0, keepdim=True)
    t = torch.kthvalue(torch.tensor(x), 2, 0, keepdim=True)
    assert type(e) is ember.return_types.kthvalue
    same(tuple(e), tuple(t))


def test_median_values_with_ties_and_nan_match_torch() -> None:
    """Values always agree; with ties, which index is reported is the algorithm's (NOTE
    [ties in order statistics]), so only values are compared here."""
    x = np.array([[1.0, 1.0, 2.0, 2.0], [np.nan, 1.0, np.nan, 3.0], [np.nan] * 4, [5, 5, 5, 1.0]])
    for name in ("median", "nanmedian"):
        e = getattr(ember.tensor(x), name)(1)
        t = getattr(torch.tensor(x), name)(1)
        same(e.values, t.values)
        picked = np.take_along_axis(x, e.indices.numpy()[:, None], 1)[:, 0]
        np.testing.assert_array_equal(picked, e.values.numpy())  # the index holds the value
        same(getattr(ember.tensor(x), name)(), getattr(torch.tensor(x), name)())


def test_mode_picks_the_smallest_most_frequent_value_at_its_last_index() -> None:
    both(lambda lib, t: tuple(t.mode()), [3, 1, 2, 1, 3, 2, 2, 1])
    both(lambda lib, t: tuple(lib.mode(t, 0, True)), RNG.integers(0, 3, (7, 4)))


def test_median_gradient_shares_ties_evenly_as_torch() -> None:
    e, t = pair([1.0, 2.0, 2.0, 5.0, 2.0], grad=True)
    e.median().backward()
    t.median().backward()
    same(e.grad, t.grad)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_and_nanquantile_match_torch_with_gradients(interpolation: str) -> None:
    x = RNG.permutation(20).reshape(4, 5) * 0.5
    x[1, 2] = np.nan
    q = np.array([0.0, 0.3, 0.5, 1.0])
    for name in ("quantile", "nanquantile"):
        for dim, keepdim in ((None, False), (1, False), (0, True), (None, True)):
            e, t = pair(x, grad=True)
            eq, tq = pair(q)
            ev = getattr(ember, name)(e, eq, dim, keepdim, interpolation=interpolation)
            tv = getattr(torch, name)(t, tq, dim, keepdim, interpolation=interpolation)
            same(ev, tv)
            w = RNG.standard_normal(tuple(tv.shape))
            (ev * ember.tensor(w)).nan_to_num().sum().backward()
            (tv * torch.tensor(w)).nan_to_num().sum().backward()
            same(e.grad, t.grad)
            same(getattr(e, name)(0.25, dim), getattr(t, name)(0.25, dim))


# --------------------------------------------------------------------------- search, counts


def test_searchsorted_on_a_sorted_tensor_and_bucketize_agree_with_torch() -> None:
    data = RNG.standard_normal(50)
    values = RNG.standard_normal((3, 7))
    for right in (False, True):
        both(lambda lib, s, v, r=right: lib.searchsorted(s.sort()[0], v, right=r), data, values)
        both(lambda lib, s, v, r=right: lib.bucketize(v, s.sort()[0], right=r), data, values)
    both(lambda lib, s, v: lib.searchsorted(s, v, sorter=s.argsort(), side="right"), data, values)
    both(lambda lib, s: lib.searchsorted(s.sort()[0], 0.25, out_int32=True), data)


def test_searchsorted_inserts_keeping_order() -> None:
    seq = ember.tensor(np.sort(RNG.standard_normal(40)))
    v = ember.tensor(RNG.standard_normal(25))
    s, i = seq.numpy(), ember.searchsorted(seq, v).numpy()
    padded = np.concatenate([[-np.inf], s, [np.inf]])
    assert bool(((padded[i] < v.numpy()) & (v.numpy() <= padded[i + 1])).all())  # left side


def test_bincount_and_histc_match_torch() -> None:
    x = RNG.integers(0, 9, 100)
    w = RNG.random(100)
    both(lambda lib, t: lib.bincount(t, minlength=12), x)
    both(lambda lib, t, u: t.bincount(u), x, w)
    y = RNG.standard_normal(1000).astype(np.float32)
    both(lambda lib, t: lib.histc(t, bins=13), y)
    both(lambda lib, t: t.histc(7, -1.0, 1.0), y)


# --------------------------------------------------------------------------- joins, grids


def test_stack_helpers_match_torch() -> None:
    a, b = RNG.standard_normal(3), RNG.standard_normal(3)
    m = RNG.standard_normal((3, 2))
    for name in ("hstack", "vstack", "dstack", "column_stack"):
        both(lambda lib, x, y, n=name: getattr(lib, n)([x, y]), a, b)
        both(lambda lib, x, y, n=name: getattr(lib, n)((x, y)), m, m)
    both(lambda lib, x, y: lib.concat([x, y], 1), m, m)
    both(lambda lib, x, y: lib.concatenate((x, y), dim=-1), m, m)


@pytest.mark.parametrize("indexing", [None, "ij", "xy"])
def test_meshgrid_forms_match_torch(indexing: str | None) -> None:
    a, b, c = RNG.standard_normal(3), RNG.standard_normal(2), RNG.standard_normal(4)
    kw = {} if indexing is None else {"indexing": indexing}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda lib, x, y, z: lib.meshgrid(x, y, z, **kw), a, b, c)
        both(lambda lib, x, y: lib.meshgrid([x, y], **kw), a, b)


def test_meshgrid_without_indexing_warns_as_torch() -> None:
    with pytest.warns(UserWarning, match="indexing"):
        ember.meshgrid(ember.ones(2), ember.ones(3))


def test_cartesian_prod_block_diag_combinations_match_torch() -> None:
    a, b = RNG.standard_normal(3), RNG.standard_normal(2)
    both(lambda lib, x, y: lib.cartesian_prod(x, y), a, b)
    both(lambda lib, x: lib.cartesian_prod(x), a)
    both(lambda lib, x, y: lib.block_diag(x, y, x.reshape(3, 1)), a, b)
    both(lambda lib, x: lib.combinations(x, 2, with_replacement=True), a)
    e = ember.ones(3)
    assert ember.cartesian_prod(e) is e  # one tensor: itself, as PyTorch


def test_repeat_interleave_forms_match_torch() -> None:
    x = RNG.standard_normal((2, 3))
    both(lambda lib, t: t.repeat_interleave(2), x)
    both(lambda lib, t: lib.repeat_interleave(t, 3, dim=1), x)
    both(lambda lib, t: t.repeat_interleave(lib.tensor([1, 0, 2]), dim=1), x)
    both(lambda lib, t: lib.repeat_interleave(t), [2, 0, 1])


def test_repeat_interleave_with_output_size_has_a_meta_shape() -> None:
    r = ember.tensor([1, 0, 2], device="meta")
    assert tuple(ember.repeat_interleave(r, output_size=3).shape) == (3,)
    with pytest.raises(NotImplementedError, match="output_size"):
        ember.repeat_interleave(r)
    t = torch.repeat_interleave(torch.tensor([1, 0, 2], device="meta"), output_size=3)
    assert tuple(t.shape) == (3,)


def test_diff_with_prepend_and_append_and_gradients() -> None:
    x = RNG.standard_normal((3, 4))
    e, t = pair(x, grad=True)
    ep, tp = pair(RNG.standard_normal((3, 1)))
    ed = ember.diff(e, 2, 1, prepend=ep, append=ep)
    td = torch.diff(t, 2, 1, prepend=tp, append=tp)
    same(ed, td)
    ed.sum().backward()
    td.sum().backward()
    same(e.grad, t.grad)
    same(e.diff(dim=0), t.diff(dim=0))


# --------------------------------------------------------------------------- products


def test_tensordot_dims_forms_match_torch() -> None:
    a, b = RNG.standard_normal((3, 4, 5)), RNG.standard_normal((4, 5, 2))
    for dims in (2, ([1, 2], [0, 1]), [[2, 1], [1, 0]], ((1,), (0,)), 0):
        both(lambda lib, x, y, d=dims: lib.tensordot(x, y, dims=d), a, b)
    both(lambda lib, x, y: lib.tensordot(x, y, lib.tensor([[1, 2], [0, 1]])), a, b)
    raises_alike(lambda lib: lib.tensordot(lib.ones(2), lib.ones(2), dims=-1))
    raises_alike(lambda lib: lib.tensordot(lib.ones(2), lib.ones(2), dims=3))


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, math.inf])
@pytest.mark.parametrize(
    "mode", ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist"]
)  # fmt: skip
def test_cdist_values_and_gradients_match_torch(p: float, mode: str) -> None:
    x1 = RNG.standard_normal((2, 30, 4))
    x2 = RNG.standard_normal((6, 4))
    e1, t1 = pair(x1, grad=True)
    e2, t2 = pair(x2, grad=True)
    ed = ember.cdist(e1, e2, p, compute_mode=mode)
    td = torch.cdist(t1, t2, p, compute_mode=mode)
    same(ed, td, rtol=1e-9, atol=1e-9)
    w = RNG.standard_normal(tuple(td.shape))
    (ed * ember.tensor(w)).sum().backward()
    (td * torch.tensor(w)).sum().backward()
    same(e1.grad, t1.grad, rtol=1e-8, atol=1e-9)
    same(e2.grad, t2.grad, rtol=1e-8, atol=1e-9)
    assert type(ed.grad_fn).__name__ == type(td.grad_fn).__name__
    assert ed.grad_fn.name() == td.grad_fn.name()
    raises_alike(lambda lib: lib.cdist(lib.ones(2, 2), lib.ones(2, 2), compute_mode="fast"))


def test_trace_and_diag_gradients_match_torch() -> None:
    e, t = pair(RNG.standard_normal((3, 4)), grad=True)
    (ember.trace(e) + e.diag(1).sum() + ember.diag(e.diag()).sum()).backward()
    (torch.trace(t) + t.diag(1).sum() + torch.diag(t.diag()).sum()).backward()
    same(e.grad, t.grad)


# --------------------------------------------------------------------------- einsum


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ii->i", [(3, 3)]),
        ("ii", [(4, 4)]),
        ("iij->ij", [(2, 2, 3)]),
        ("iii->i", [(3, 3, 3)]),
        ("...ii->...i", [(2, 3, 3)]),
        ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]),
        ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
        ("bii,bj->bij", [(2, 3, 3), (2, 4)]),
        ("ab...,b...->a", [(2, 3, 4), (3, 1)]),
        ("...", [(2, 3)]),
        ("ij...->", [(2, 3, 4)]),
        ("ii,i->i", [(3, 3), (3,)]),
    ],
)
def test_einsum_ellipsis_and_repeated_subscripts_grads_match_torch(
    equation: str, shapes: list[tuple[int, ...]]
) -> None:
    arrays = [RNG.standard_normal(s) for s in shapes]
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    er, tr = ember.einsum(equation, *es), torch.einsum(equation, *ts)
    same(er, tr, rtol=1e-10)
    w = RNG.standard_normal(tuple(tr.shape))
    eg = ember.autograd.grad(er, es, ember.tensor(w), create_graph=True)
    tg = torch.autograd.grad(tr, ts, torch.tensor(w), create_graph=True)
    for a, b in zip(eg, tg, strict=True):
        same(a, b, rtol=1e-10)
    # and the second derivative, through the gradient's own einsum (a gradient that does not
    # depend on the inputs, as "ii->i"'s, requires no grad in either library)
    assert [g.requires_grad for g in eg] == [g.requires_grad for g in tg]
    if not any(g.requires_grad for g in tg):
        return
    e2 = ember.autograd.grad(
        sum((g * g).sum() for g in eg if g.requires_grad), es, allow_unused=True
    )
    t2 = torch.autograd.grad(
        sum((g * g).sum() for g in tg if g.requires_grad), ts, allow_unused=True
    )
    for a, b in zip(e2, t2, strict=True):
        if b is None:
            assert a is None or not a.numpy().any()
        else:
            same(a, b, rtol=1e-9)


# --------------------------------------------------------------------------- indexing


def test_index_ops_methods_in_place_and_gradients_match_torch() -> None:
    x = RNG.standard_normal((4, 3))
    src = RNG.standard_normal((2, 3))
    idx = [3, 1]
    e, t = pair(x, grad=True)
    es, ts = pair(src, grad=True)
    ei, ti = ember.tensor(idx), torch.tensor(idx)
    eo = (e.index_add(0, ei, es, alpha=2) + e.index_copy(0, ei, es)).index_fill(1, ei[1:], -1.0)
    to = (t.index_add(0, ti, ts, alpha=2) + t.index_copy(0, ti, ts)).index_fill(1, ti[1:], -1.0)
    mask = ember.tensor(x > 0), torch.tensor(x > 0)
    eo = eo.masked_scatter(mask[0], es.reshape(-1).repeat(2)) + e.take(ei).sum()
    to = to.masked_scatter(mask[1], ts.reshape(-1).repeat(2)) + t.take(ti).sum()
    same(eo, to)
    eo.pow(2).sum().backward()
    to.pow(2).sum().backward()
    same(e.grad, t.grad)
    same(es.grad, ts.grad)


def test_in_place_index_ops_return_self_and_bump_the_version() -> None:
    for name, args in (
        ("index_add_", (0, np.array([0]), np.array([[1.0, 2.0]]))),
        ("index_copy_", (0, np.array([1]), np.array([[1.0, 2.0]]))),
        ("index_fill_", (1, np.array([0]), 5.0)),
        ("masked_scatter_", (np.array([[True, False], [False, True]]), np.array([7.0, 8.0]))),
    ):
        e, t = pair(np.zeros((2, 2)))
        conv = [ember.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        tconv = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        v = e._version
        assert getattr(e, name)(*conv) is e
        assert e._version > v
        getattr(t, name)(*tconv)
        same(e, t)


def test_masked_select_and_take_along_dim_match_torch() -> None:
    x = RNG.standard_normal((3, 4))
    both(lambda lib, t: t.masked_select(t > 0), x)
    both(lambda lib, t: lib.masked_select(t, lib.tensor([True, False, True, False])), x)
    both(lambda lib, t: lib.take_along_dim(t, t.argsort(1), 1), x)
    both(lambda lib, t: t.take_along_dim(t.argmax().reshape(1)), x)


# --------------------------------------------------------------------------- small programs


def test_unique_then_index_then_sum() -> None:
    x = RNG.integers(0, 5, 30)
    w = RNG.standard_normal(30)

    def program(lib: Any, t: Any, u: Any) -> Any:
        values, inverse = lib.unique(t, return_inverse=True)
        totals = lib.zeros(values.shape[0], dtype=u.dtype).index_add(0, inverse, u)
        return values, totals, totals[inverse].sum(), lib.bincount(inverse, u)

    both(program, x, w)


def test_sort_then_searchsorted_then_gather() -> None:
    x = RNG.standard_normal((4, 10))
    probes = RNG.standard_normal((4, 3))

    def program(lib: Any, t: Any, p: Any) -> Any:
        ordered, order = t.sort(dim=1)
        where = lib.searchsorted(ordered, p).clamp(max=9)
        return order.gather(1, where), lib.take_along_dim(ordered, where, 1)

    both(program, x, probes)


def test_quantile_bins_then_histogram_of_the_buckets() -> None:
    x = RNG.standard_normal(200)

    def program(lib: Any, t: Any) -> Any:
        edges = lib.quantile(t, lib.linspace(0, 1, 5, dtype=t.dtype))
        buckets = lib.bucketize(t, edges[1:-1])
        return edges, lib.bincount(buckets, minlength=4), buckets.unique(return_counts=True)

    both(program, x)


def test_cdist_nearest_neighbour_then_mode_of_labels() -> None:
    pts, queries = RNG.standard_normal((40, 3)), RNG.standard_normal((7, 3))
    labels = RNG.integers(0, 3, 40)

    def program(lib: Any, p: Any, q: Any, lab: Any) -> Any:
        d = lib.cdist(q, p)
        near = d.topk(5, largest=False).indices
        return lab[near].mode(1).values, d.kthvalue(1, 1).values

    both(program, pts, queries, labels)


def test_meshgrid_diag_embed_and_rot90_compose() -> None:
    a, b = RNG.standard_normal(3), RNG.standard_normal(4)

    def program(lib: Any, x: Any, y: Any) -> Any:
        gx, gy = lib.meshgrid(x, y, indexing="xy")
        m = lib.rot90(gx * gy, 1, [0, 1])
        return lib.diag_embed(m).sum((1, 2)), m.diag(), lib.diag_embed(m, 1, 0, 2).sum(1)

    both(program, a, b)


# --------------------------------------------------------------------------- random fills

N = 200_000


def _stats(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.std())


@pytest.mark.parametrize(
    "name, args, mean, std",
    [
        ("uniform_", (2.0, 5.0), 3.5, 3 / math.sqrt(12)),
        ("normal_", (1.0, 2.0), 1.0, 2.0),
        ("exponential_", (2.0,), 0.5, 0.5),
        ("log_normal_", (0.0, 0.5), math.exp(0.125), math.exp(0.125) * math.sqrt(math.expm1(0.25))),
        ("geometric_", (0.25,), 4.0, math.sqrt(0.75) / 0.25),
        ("bernoulli_", (0.3,), 0.3, math.sqrt(0.21)),
        ("random_", (3, 9), 5.5, math.sqrt((6**2 - 1) / 12)),
    ],
)  # fmt: skip
def test_random_fills_have_torchs_distribution(
    name: str, args: tuple[Any, ...], mean: float, std: float
) -> None:
    e = getattr(ember.empty(N, dtype=ember.float64), name)(*args).numpy()
    t = getattr(torch.empty(N, dtype=torch.float64), name)(*args).numpy()
    for values in (e, t):
        m, s = _stats(values)
        assert abs(m - mean) < 6 * std / math.sqrt(N), (name, m, mean)
        assert abs(s - std) < 0.02 * std, (name, s, std)
    # the same support: the smallest and largest values fall alike
    lo, hi = {"uniform_": (2.0, 5.0), "geometric_": (1.0, math.inf), "bernoulli_": (0.0, 1.0),
              "random_": (3.0, 8.0), "exponential_": (0.0, math.inf),
              "log_normal_": (0.0, math.inf)}.get(name, (-math.inf, math.inf))  # fmt: skip
    assert lo <= e.min() and e.max() <= hi and lo <= t.min() and t.max() <= hi
    if name in ("geometric_", "bernoulli_", "random_"):  # whole numbers
        assert np.array_equal(e, np.round(e))


def test_cauchy_median_and_quartiles() -> None:
    e = ember.empty(N).cauchy_(1.0, 2.0).numpy()
    q = np.quantile(e, [0.25, 0.5, 0.75])
    np.testing.assert_allclose(q, [-1.0, 1.0, 3.0], atol=0.05)


def test_random_fill_ranges_and_dtypes_match_torch() -> None:
    for dtype in ("int8", "uint8", "int32", "int64", "float16", "float32", "bool"):
        e = ember.empty(5000, dtype=getattr(ember, dtype)).random_()
        t = torch.empty(5000, dtype=getattr(torch, dtype)).random_()
        assert e.dtype.name == dtype
        assert e.numpy().min() >= 0
        top = float(t.numpy().max()) if dtype != "bool" else 1
        bound = {"float16": 2**11, "float32": 2**24, "int8": 127, "uint8": 255, "bool": 1}
        assert float(e.numpy().max()) <= bound.get(dtype, 2**63)
        assert float(e.numpy().max()) >= 0.5 * min(top, bound.get(dtype, top))
    e = ember.empty(1000, dtype=ember.int8).random_(-5, 5).numpy()
    assert e.min() == -5 and e.max() == 4
    e = ember.empty(1000, dtype=ember.uint8).random_(250, None).numpy()
    assert e.min() >= 250


def test_normal_overloads_shapes_dtypes_and_statistics() -> None:
    cases = [
        lambda lib: lib.normal(lib.zeros(N, dtype=lib.float64), 2.0),
        lambda lib: lib.normal(1.0, lib.full((N,), 3.0, dtype=lib.float64)),
        lambda lib: lib.normal(lib.full((N // 2, 2), 1.0), lib.ones(2)),
        lambda lib: lib.normal(2.0, 0.5, (N,), dtype=lib.float64),
    ]
    for case in cases:
        e, t = case(ember), case(torch)
        assert e.dtype.name == str(t.dtype).removeprefix("torch.") and tuple(e.shape) == tuple(
            t.shape
        )
        (em, es), (tm, ts) = _stats(e.numpy()), _stats(t.numpy())
        assert abs(em - tm) < 0.05 and abs(es - ts) < 0.05 * ts


def test_bernoulli_forms_match_torch_statistically() -> None:
    p = np.linspace(0, 1, 11)
    e = ember.bernoulli(ember.tensor(np.tile(p, (20_000, 1)))).numpy().mean(0)
    np.testing.assert_allclose(e, p, atol=0.02)
    assert ember.bernoulli(ember.ones(100), 0.0).sum().item() == 0
    x = ember.zeros(4, 3, dtype=ember.int64)
    assert x.bernoulli_(ember.tensor([0.0, 1.0, 1.0])) is x
    assert x.tolist() == [[0, 1, 1]] * 4


def test_randperm_is_a_permutation_and_reproducible() -> None:
    ember.manual_seed(3)
    a = ember.randperm(50)
    ember.manual_seed(3)
    b = ember.randperm(50)
    assert ember.equal(a, b) and a.dtype == ember.int64
    assert sorted(a.tolist()) == list(range(50))
    assert ember.randperm(5, dtype=ember.float32).dtype == ember.float32
    g = ember.Generator().manual_seed(1)
    assert ember.equal(
        ember.randperm(9, generator=g), ember.randperm(9, generator=g.manual_seed(1))
    )


@pytest.mark.parametrize(
    "fill",
    [
        lambda x: x.uniform_(),
        lambda x: x.normal_(),
        lambda x: x.bernoulli_(0.5),
        lambda x: x.random_(0, 100),
        lambda x: x.exponential_(),
        lambda x: x.geometric_(0.5),
        lambda x: x.log_normal_(),
        lambda x: x.cauchy_(),
        lambda x: x.bernoulli_(ember.full((5,), 0.5)),
    ],
)
def test_random_fills_are_reproducible_in_place_and_return_self(fill: Callable[..., Any]) -> None:
    ember.manual_seed(42)
    x = ember.zeros(5)
    v = x._version
    assert fill(x) is x
    assert x._version > v
    first = x.clone()
    ember.manual_seed(42)
    assert ember.equal(fill(ember.zeros(5)), first)


def test_random_fill_of_a_non_leaf_routes_zero_gradient_as_torch() -> None:
    for lib in (ember, torch):
        w = lib.ones(3, requires_grad=True)
        for fill in ("uniform_", "normal_", "exponential_", "cauchy_", "log_normal_"):
            y = w * 2
            getattr(y, fill)()
            (y * 3).sum().backward()
            assert w.grad.tolist() == [0.0, 0.0, 0.0], (lib.__name__, fill)
            w.grad = None
        y = w * 2
        y.bernoulli_(0.5)
        names = (lib.__name__, y.grad_fn.name())
        assert names[1] == "BernoulliBackward2", names
        y = lib.normal(w, 1.0)
        assert y.grad_fn.name() == "NormalBackward1"


def test_random_fill_errors_match_torch() -> None:
    for fill in (
        lambda lib: lib.ones(3).uniform_(2, 1),
        lambda lib: lib.ones(3, dtype=lib.int64).uniform_(),
        lambda lib: lib.ones(3).normal_(0, -1),
        lambda lib: lib.ones(3).exponential_(0),
        lambda lib: lib.ones(3, dtype=lib.int64).exponential_(),
        lambda lib: lib.ones(3).geometric_(1.5),
        lambda lib: lib.ones(3).log_normal_(0, 0),
        lambda lib: lib.ones(3, dtype=lib.int64).cauchy_(),
        lambda lib: lib.ones(3).bernoulli_(1.5),
        lambda lib: lib.ones(3).random_(5, 5),
        lambda lib: lib.ones(3, dtype=lib.uint8).random_(-1, 5),
        lambda lib: lib.ones(3, dtype=lib.complex64).random_(),
        lambda lib: lib.ones(3, requires_grad=True).uniform_(),
        lambda lib: lib.bernoulli(lib.full((2,), 1.5)),
        lambda lib: lib.normal(0.0, -lib.ones(2)),
        lambda lib: lib.randperm(-1),
    ):
        raises_alike(fill)


# --------------------------------------------------------------------------- Tensor methods


def test_small_tensor_members_match_torch() -> None:
    for dtype in ("float32", "float64", "int8", "complex128", "bool"):
        e, t = (
            ember.ones(2, 3, dtype=getattr(ember, dtype)),
            torch.ones(2, 3, dtype=getattr(torch, dtype)),
        )
        assert (e.nbytes, e.itemsize, e[:, :2].nbytes) == (t.nbytes, t.itemsize, t[:, :2].nbytes)
        assert e.get_device() == t.get_device() == -1
        assert e.is_cuda is t.is_cuda is False
        assert ember.is_floating_point(e) == torch.is_floating_point(t)
        assert ember.numel(e) == torch.numel(t) == 6
    assert ember.is_tensor(ember.ones(1)) and not ember.is_tensor(np.ones(1))
    assert ember.ones(1, device="meta").get_device() == -1


def test_view_as_reshape_as_expand_as_type_as_match_torch() -> None:
    x, y = RNG.standard_normal((2, 6)), RNG.integers(0, 3, (3, 4))
    both(lambda lib, a, b: (a.view_as(b), a.t().reshape_as(b), a[:1].expand_as(a),
                            a.type_as(b), b.type_as(a)), x, y)  # fmt: skip
    e = ember.ones(2, 6)
    assert e.view_as(ember.ones(3, 4))._base is e


def test_new_tensor_copies_with_selfs_dtype_and_warns_for_a_tensor() -> None:
    e, t = ember.ones(2, dtype=ember.float64), torch.ones(2, dtype=torch.float64)
    same(e.new_tensor([1, 2]), t.new_tensor([1, 2]))
    same(e.new_tensor([1, 2], dtype=ember.int32), t.new_tensor([1, 2], dtype=torch.int32))
    src = ember.tensor([3, 4])
    with pytest.warns(UserWarning, match="detach"):
        copy = e.new_tensor(src)
    assert copy.dtype == ember.float64 and copy.tolist() == [3.0, 4.0]
    src[0] = 9
    assert copy.tolist() == [3.0, 4.0]
    r = e.new_tensor([1.0], requires_grad=True)
    assert r.requires_grad and r.is_leaf


def test_cuda_raises_what_a_cpu_build_of_torch_raises() -> None:
    for call in (lambda x: x.cuda(), lambda x: x.cuda("cuda"), lambda x: x.cuda(0),
                 lambda x: x.cuda("cpu")):  # fmt: skip
        raises_alike(lambda lib, call=call: call(lib.ones(2)))
    x = ember.ones(2)
    assert x.cpu() is x


def test_apply_and_map_match_torch() -> None:
    results = []
    for lib in (ember, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t()
        assert x.apply_(lambda v: v * 10 + 1) is x
        y = lib.tensor([1, 2, 3])
        y.apply_(lambda v: v // 2)
        z = lib.ones(2, 2)
        assert z.map_(lib.tensor([3.0, 4.0]), lambda a, b: a + b) is z
        results.append((x.tolist(), y.tolist(), z.tolist()))
    assert results[0] == results[1]
    for bad in (
        lambda lib: lib.ones(2, requires_grad=True).apply_(lambda v: v),
        lambda lib: lib.ones(2).map_(lib.ones(2, dtype=lib.int64), lambda a, b: a),
        lambda lib: lib.ones(2).map_(lib.ones(3), lambda a, b: a),
        lambda lib: lib.ones(2).apply_(lambda v: "a"),
    ):
        raises_alike(bad)


def test_apply_bumps_the_version_unlike_torch() -> None:
    """NOTE [apply_ and map_]: a tensor saved for backward and changed by apply_ makes backward
    raise in ember, where PyTorch computes a wrong gradient silently."""
    w = ember.ones(2, requires_grad=True)
    y = ember.ones(2)
    z = (w * y).sum()
    y.apply_(lambda v: 5.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_allclose_and_equal_return_python_bools_like_torch() -> None:
    x = RNG.standard_normal(5)
    for lib in (ember, torch):
        a = lib.tensor(x)
        assert lib.allclose(a, a + 1e-9) is True and a.allclose(a + 1, atol=2) is True
        assert lib.equal(a, a.clone()) is True and a.equal(a + 1) is False
    raises_alike(lambda lib: lib.allclose(lib.ones(2), lib.ones(2, dtype=lib.float64)))


def test_clip_forms_match_torch() -> None:
    x = RNG.standard_normal(6)
    both(lambda lib, t: (t.clip(-0.5, 0.5), lib.clip(t, max=0.1), t.clone().clip_(min=0)), x)
    e = ember.tensor(x)
    assert ember.clip_(e, 0, 0.2) is e and float(e.max()) <= 0.2


def test_grad_fn_names_match_torch() -> None:
    x = RNG.permutation(12).reshape(3, 4).astype(np.float64)
    calls = [
        lambda lib, t: t.median(),
        lambda lib, t: t.median(1).values,
        lambda lib, t: t.nanmedian(0).values,
        lambda lib, t: t.mode(1).values,
        lambda lib, t: t.kthvalue(2).values,
        lambda lib, t: t.take(lib.tensor([0, 5])),
        lambda lib, t: t.masked_select(t > 3),
        lambda lib, t: t.index_add(0, lib.tensor([1]), t[:1]),
        lambda lib, t: t.index_copy(0, lib.tensor([1]), t[:1]),
        lambda lib, t: t.index_fill(1, lib.tensor([0]), 2.0),
        lambda lib, t: t.masked_scatter(t > 3, t),
        lambda lib, t: lib.rot90(t),
        lambda lib, t: lib.block_diag(t, t),
        lambda lib, t: lib.diag_embed(t),
        lambda lib, t: lib.trace(t),
        lambda lib, t: lib.cdist(t, t),
        lambda lib, t: lib.unique(t),
    ]
    for call in calls:
        e, t = pair(x, grad=True)
        assert call(ember, e).grad_fn.name() == call(torch, t).grad_fn.name()


def test_python_functions_on_plain_tensors_reach_a_mode_as_themselves() -> None:
    logs = []
    for lib in (ember, torch):
        a = lib.ones(2, 3)

        def calls(lib: Any = lib, a: Any = a) -> None:
            lib.tensordot(a, a, dims=([1], [1]))
            lib.cdist(a, a)
            lib.block_diag(a, a)
            lib.cartesian_prod(lib.ones(2), lib.ones(2))

        logs.append([n for n, _ in _mode_log(lib, calls)])
    assert logs[0] == logs[1]
    assert [n for n in logs[0] if n != "ones"] == [
        "tensordot", "cdist", "block_diag", "cartesian_prod"
    ]  # fmt: skip
