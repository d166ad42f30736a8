"""The sparse COO layout (the SparseCPU key) against PyTorch: construction, coalescing,
conversions, elementwise ops, products, sums, printing, errors, autograd, and training an
``Embedding(sparse=True)`` with ``SGD`` and ``SparseAdam``."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch

pytestmark = [
    requires_torch,
    # PyTorch warns once that it skips its sparse invariant checks by default, and that its
    # sparse x sparse product (through CSR) is beta
    pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning"),
    pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta:UserWarning"),
]

LIBS = ("torch", "ember")


def _lib(name: str) -> Any:
    return torch if name == "torch" else ember


def _uncoalesced(lib: Any, dtype: Any = None) -> Any:
    """A 3x4 tensor with a duplicate entry, indices out of order."""
    i = lib.tensor([[2, 0, 2, 1, 0], [1, 3, 1, 0, 0]])
    v = lib.tensor([1.0, 2.0, 3.0, -4.0, 5.0], dtype=dtype or lib.float32)
    return lib.sparse_coo_tensor(i, v, (3, 4))


def _random(lib: Any, seed: int, shape: tuple[int, ...] = (6, 5), nnz: int = 12) -> Any:
    """A random uncoalesced 2-d tensor (duplicates likely), the same in both libraries."""
    rng = np.random.default_rng(seed)
    i = np.stack([rng.integers(0, n, nnz) for n in shape[:2]])
    v = rng.standard_normal((nnz, *shape[2:])).astype(np.float32)
    return lib.sparse_coo_tensor(lib.tensor(i), lib.tensor(v), shape)


def _parts(s: Any) -> tuple[np.ndarray, np.ndarray, tuple[int, ...], bool]:
    return (s._indices().numpy(), s._values().detach().numpy(), tuple(s.shape),
            s.is_coalesced())  # fmt: skip


def _dense(x: Any) -> np.ndarray:
    x = x.detach()
    return (x.to_dense() if x.is_sparse else x).numpy()


def _same_sparse(e: Any, t: Any, flags: bool = True) -> None:
    """Same indices, values, size (and coalesced flag) as PyTorch's."""
    assert e.is_sparse and t.is_sparse
    ei, ev, es, ec = _parts(e)
    ti, tv, ts, tc = _parts(t)
    assert es == ts
    assert ev.dtype == tv.dtype
    np.testing.assert_array_equal(ei, ti)
    np.testing.assert_allclose(ev, tv, rtol=1e-6, atol=1e-6)
    if flags:
        assert ec == tc


# --------------------------------------------------------------------------- construction


def test_constructor_layout_metadata_and_key() -> None:
    e, t = _uncoalesced(ember), _uncoalesced(torch)
    assert e.layout is ember.sparse_coo and e.is_sparse and not ember.ones(2).is_sparse
    assert repr(e.layout) == "ember.sparse_coo"
    for name in ("sparse_dim", "dense_dim", "_nnz", "is_coalesced", "dim"):
        assert getattr(e, name)() == getattr(t, name)(), name
    assert tuple(e.shape) == tuple(t.shape) and e.dtype is ember.float32
    assert e.device == ember.device("cpu")
    assert "SparseCPU" in e._dispatch_keys() and "CPU," not in e._dispatch_keys()
    _same_sparse(e, t)


@pytest.mark.parametrize(
    "build",
    [
        lambda L: L.sparse_coo_tensor([[0, 2], [1, 0]], [1, 2]),  # size inferred, int values
        lambda L: L.sparse_coo_tensor([[0, 2], [1, 0]], [1.0, 2.0], (4, 3), dtype=L.float64),
        lambda L: L.sparse_coo_tensor([[1, 0, 1]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
        lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0), (2, 3)),
        lambda L: L.sparse_coo_tensor([[0]], [7.0], (3,)),  # one entry: coalesced
        lambda L: L.sparse_coo_tensor([[0, 1]], [1.0, 2.0], is_coalesced=True),
    ],
)
def test_constructor_matches_torch(build: Callable[[Any], Any]) -> None:
    _same_sparse(build(ember), build(torch))
    np.testing.assert_array_equal(_dense(build(ember)), _dense(build(torch)))


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([[0, 1, 1], [2, 0, 2]], [1.0, 2.0]), "indices and values must have same nnz"),
        (([[0, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], (1, 3)), "size is inconsistent with indices"),
        (([0, 1], [1.0, 2.0]), "indices must be sparse_dim x nnz"),
    ],
)
def test_constructor_errors_match_torch(args: tuple[Any, ...], match: str) -> None:
    def call(lib: Any) -> Any:
        return lib.sparse_coo_tensor(*args, check_invariants=True)

    with pytest.raises(RuntimeError, match=match):
        call(torch)
    with pytest.raises(RuntimeError, match=match):
        call(ember)


def test_constructor_always_checks_bounds() -> None:
    """PyTorch skips the index checks by default (invalid memory later); ember refuses."""
    with pytest.raises(RuntimeError, match="found negative index -1 for dim 0"):
        ember.sparse_coo_tensor([[-1, 0]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="for dim 1, size is 2 but found index 5"):
        ember.sparse_coo_tensor([[0], [5]], [1.0], (3, 2))
    with pytest.raises(RuntimeError, match="values has incorrect size"):
        ember.sparse_coo_tensor([[0]], [[1.0, 2.0]], (3, 3))


def test_meta_and_other_devices_are_refused_clearly() -> None:
    i = ember.zeros(1, 2, dtype=ember.long, device="meta")
    v = ember.zeros(2, device="meta")
    with pytest.raises(RuntimeError, match="meta and fake sparse tensors are not supported"):
        ember.sparse_coo_tensor(i, v, (3,))
    with pytest.raises(RuntimeError, match="cpu device"):
        ember.sparse_coo_tensor([[0]], [1.0], (2,), device="meta")


def test_requires_grad_and_reading_as_array() -> None:
    e = ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,), requires_grad=True)
    assert e.requires_grad and e.is_leaf and e.grad_fn is None
    with pytest.raises(TypeError, match="Use Tensor.to_dense"):
        e.detach().numpy()
    with pytest.raises(TypeError, match="can't convert Sparse layout tensor to numpy"):
        torch.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,)).numpy()


# --------------------------------------------------------------------------- coalescing


@pytest.mark.parametrize("seed", range(3))
def test_coalesce_matches_torch(seed: int) -> None:
    e, t = _random(ember, seed), _random(torch, seed)
    assert not e.is_coalesced() and not t.is_coalesced()
    ec, tc = e.coalesce(), t.coalesce()
    _same_sparse(ec, tc)
    np.testing.assert_array_equal(ec.indices().numpy(), tc.indices().numpy())
    np.testing.assert_allclose(ec.values().numpy(), tc.values().numpy(), rtol=1e-6)
    assert ec.coalesce() is ec  # a coalesced tensor is its own coalesce, as PyTorch's
    np.testing.assert_allclose(_dense(e), _dense(t), rtol=1e-6)


def test_indices_and_values_need_a_coalesced_tensor() -> None:
    for lib in (torch, ember):
        s = _uncoalesced(lib)
        for what in ("indices", "values"):
            with pytest.raises(RuntimeError, match=f"Cannot get {what} on an uncoalesced tensor"):
                getattr(s, what)()
        assert s._values().shape[0] == 5  # the raw accessors do not care


# --------------------------------------------------------------------------- conversions


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, 0.0]]).to_sparse(),
        lambda L: L.tensor([[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]).to_sparse(1),
        lambda L: L.tensor([[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]).to_sparse(dense_dim=1),
        lambda L: L.tensor([[0, 3], [4, 0]], dtype=L.int32).to_sparse(),
        lambda L: L.zeros(2, 3).to_sparse(),
    ],
)
def test_to_sparse_matches_torch(make: Callable[[Any], Any]) -> None:
    e, t = make(ember), make(torch)
    _same_sparse(e, t)
    assert e.sparse_dim() == t.sparse_dim() and e.dense_dim() == t.dense_dim()
    np.testing.assert_array_equal(_dense(e), _dense(t))
    assert e.to_dense().dtype == ember.from_numpy(_dense(t)).dtype


def test_to_dense_of_strided_and_to_sparse_of_sparse_are_identity() -> None:
    x = ember.ones(2)
    assert x.to_dense() is x
    s = x.to_sparse()
    assert s.to_sparse() is s and x.sparse_dim() == 0 and x.dense_dim() == 1


def test_to_dtype_clone_and_detach() -> None:
    e, t = _uncoalesced(ember), _uncoalesced(torch)
    _same_sparse(e.to(ember.float64), t.to(torch.float64))
    _same_sparse(e.double(), t.double())
    c = e.clone()
    _same_sparse(c, t)
    c.mul_(2)  # the clone has its own arrays
    _same_sparse(e, t)
    assert e.detach().is_sparse and not e.detach().requires_grad


# --------------------------------------------------------------------------- elementwise


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "add_alpha": lambda a, b: a.add(b, alpha=0.5),
    "mul": lambda a, b: a * b,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("coalesced", [True, False])
def test_binary_of_two_sparse_matches_torch(name: str, coalesced: bool) -> None:
    def run(lib: Any) -> Any:
        a, b = _random(lib, 0), _random(lib, 1)
        if coalesced:
            a, b = a.coalesce(), b.coalesce()
        return BINARY[name](a, b)

    e, t = run(ember), run(torch)
    assert e.is_sparse and t.is_sparse
    np.testing.assert_allclose(_dense(e), _dense(t), rtol=1e-6, atol=1e-6)
    if coalesced or name != "mul":  # sums merge entry by entry as PyTorch's (duplicates
        _same_sparse(e, t)  # too); an uncoalesced product is coalesced (values equal)


@pytest.mark.parametrize("pair", ["ab", "aa", "aB", "Ab", "AB"])
def test_sum_of_uncoalesced_keeps_torch_entries(pair: str) -> None:
    """PyTorch's merge of two entry lists: equal indices met side by side add up, others
    stay apart (a capital letter: the operand coalesced first)."""

    def run(lib: Any) -> Any:
        ops = {
            "a": lib.sparse_coo_tensor([[3, 1, 3, 0]], [1.0, 2, 3, 4], (5,)),
            "b": lib.sparse_coo_tensor([[1, 1, 4]], [10.0, 20, 30], (5,)),
        }
        x, y = (ops[c.lower()].coalesce() if c.isupper() else ops[c] for c in pair)
        return x + y

    _same_sparse(run(ember), run(torch))


UNARY = {
    "neg": lambda s: -s,
    "mul_scalar": lambda s: s * 2.5,
    "rmul_scalar": lambda s: 3 * s,
    "div_scalar": lambda s: s / 4,
    "abs": lambda s: s.abs(),
    "sqrt": lambda s: s.abs().sqrt(),
    "sin": lambda s: s.sin(),
    "tanh": lambda s: s.tanh(),
    "expm1": lambda s: s.expm1(),
    "floor": lambda s: s.floor(),
    "sign": lambda s: s.sign(),
    "pow2": lambda s: s.pow(2),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("coalesced", [True, False])
def test_unary_and_scalar_ops_match_torch(name: str, coalesced: bool) -> None:
    def run(lib: Any) -> Any:
        s = _uncoalesced(lib)
        return UNARY[name](s.coalesce() if coalesced else s)

    e, t = run(ember), run(torch)
    np.testing.assert_allclose(_dense(e), _dense(t), rtol=1e-6)
    _same_sparse(e, t)  # entries and flag: linear ops keep duplicates, others coalesce


def test_int_values_follow_torch_promotion() -> None:
    e = _uncoalesced(ember, ember.int64).coalesce()
    t = _uncoalesced(torch, torch.int64).coalesce()
    _same_sparse(e.abs().sqrt(), t.abs().sqrt())  # sqrt of integers is float
    _same_sparse(e * 2, t * 2)
    _same_sparse(e * 0.5, t * 0.5)


def test_dense_and_sparse_mixed() -> None:
    for lib in LIBS:
        L = _lib(lib)
        s, d = _uncoalesced(L), L.arange(12.0).reshape(3, 4)
        r = d + s
        assert r.layout is L.strided
    e, t = _uncoalesced(ember), _uncoalesced(torch)
    de, dt = ember.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(_dense(de + e), _dense(dt + t))
    np.testing.assert_allclose(_dense(de - e), _dense(dt - t))
    np.testing.assert_allclose(_dense(de.add(e, alpha=2)), _dense(dt.add(t, alpha=2)))
    _same_sparse(de * e, dt * t)
    _same_sparse(e * ember.tensor(2.0), t * torch.tensor(2.0))
    _same_sparse(e * de, t * dt)
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
            _uncoalesced(lib) + lib.ones(3, 4)
        with pytest.raises(RuntimeError, match="to match"):
            _uncoalesced(lib) + lib.sparse_coo_tensor([[0]], [1.0], (5,))


def test_in_place_ops_match_torch() -> None:
    def run(lib: Any) -> tuple[Any, Any]:
        s = _uncoalesced(lib).coalesce()
        s.mul_(2).add_(_random(lib, 3, (3, 4), 4).coalesce())
        d = lib.ones(3, 4)
        d.add_(s, alpha=-1)
        return s, d

    (es, ed), (ts, td) = run(ember), run(torch)
    _same_sparse(es, ts, flags=False)  # PyTorch's add_ leaves the flag off; ember's sets it
    np.testing.assert_allclose(ed.numpy(), td.numpy(), rtol=1e-6)


def test_zero_and_zero_grad_without_none() -> None:
    for lib in (torch, ember):
        s = _uncoalesced(lib)
        assert s.zero_() is s and s._nnz() == 0 and s.is_coalesced() and s.shape == (3, 4)
        emb = lib.nn.Embedding(4, 2, sparse=True)
        emb(lib.tensor([1, 1])).sum().backward()
        lib.optim.SGD(emb.parameters(), lr=0.1).zero_grad(set_to_none=False)
        assert emb.weight.grad.is_sparse and emb.weight.grad._nnz() == 0


def test_unsupported_uses_say_so() -> None:
    s = _uncoalesced(ember)
    with pytest.raises(RuntimeError, match="sparse COO tensors cannot be saved yet"):
        ember.save(s, __import__("io").BytesIO())
    with pytest.raises(RuntimeError, match="cannot be batched"):
        ember.func.vmap(lambda x: x.to_dense())(s)
    with pytest.raises(RuntimeError, match="live on the cpu device only"):
        s.to("meta")


def test_an_op_without_a_sparse_kernel_names_op_and_backend() -> None:
    for lib in (torch, ember):
        s = _uncoalesced(lib)
        with pytest.raises(NotImplementedError, match=r"Could not run 'aten::exp' with "
                           r"arguments from the 'SparseCPU' backend"):  # fmt: skip
            lib.exp(s)


# --------------------------------------------------------------------------- products


PRODUCTS = {
    "sparse.mm": lambda L, s, d: L.sparse.mm(s, d),
    "mm": lambda L, s, d: L.mm(s, d),
    "matmul": lambda L, s, d: s @ d,
    "mv": lambda L, s, d: L.mv(s, d[:, 0].contiguous()),
    "matmul_vec": lambda L, s, d: L.matmul(s, d[:, 1].contiguous()),
    "addmm": lambda L, s, d: L.addmm(L.ones(3, 2), s, d, beta=0.5, alpha=2.0),
    "sparse.addmm": lambda L, s, d: L.sparse.addmm(L.ones(3, 2), s, d, beta=2.0),
    "dense_mm_sparse": lambda L, s, d: L.mm(d.t(), s.t()),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_with_dense_match_torch(name: str) -> None:
    def run(lib: Any) -> Any:
        d = lib.tensor(np.random.default_rng(5).standard_normal((4, 2)).astype(np.float32))
        return PRODUCTS[name](lib, _uncoalesced(lib), d)

    e, t = run(ember), run(torch)
    assert e.layout is ember.strided and e.dtype is ember.float32
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_sparse_times_sparse_is_sparse() -> None:
    e = ember.mm(_uncoalesced(ember), _random(ember, 2, (4, 3), 5))
    t = torch.mm(_uncoalesced(torch), _random(torch, 2, (4, 3), 5))
    assert e.is_sparse and t.is_sparse
    np.testing.assert_allclose(_dense(e), _dense(t), rtol=1e-5, atol=1e-6)


def test_product_errors() -> None:
    s = _uncoalesced(ember)
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(3x4 and 3x2\)"):
        ember.sparse.mm(s, ember.ones(3, 2))
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.mm(s, ember.ones(4, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="hybrid"):
        ember.mm(ember.ones(3, 2).to_sparse(1), ember.ones(2, 2))


# --------------------------------------------------------------------------- sums and views


@pytest.mark.parametrize(
    "reduce",
    [
        lambda L, s: L.sparse.sum(s),
        lambda L, s: L.sparse.sum(s, 0),
        lambda L, s: L.sparse.sum(s, 1),
        lambda L, s: L.sparse.sum(s, (0, 1)),
        lambda L, s: L.sparse.sum(s, -1),
        lambda L, s: s.sum(),
        lambda L, s: s.sum(0),
    ],
)
def test_sums_match_torch(reduce: Callable[[Any, Any], Any]) -> None:
    e, t = reduce(ember, _uncoalesced(ember)), reduce(torch, _uncoalesced(torch))
    assert e.is_sparse == t.is_sparse and tuple(e.shape) == tuple(t.shape)
    if t.is_sparse:
        _same_sparse(e, t)
    np.testing.assert_allclose(_dense(e), _dense(t), rtol=1e-6)


def test_sums_over_hybrid_and_int_tensors() -> None:
    def hybrid(L: Any) -> Any:
        return L.tensor([[1.0, 2.0], [0.0, 0.0], [3.0, 4.0]]).to_sparse(1)

    for dim in (0, 1, (0, 1)):
        e, t = ember.sparse.sum(hybrid(ember), dim), torch.sparse.sum(hybrid(torch), dim)
        assert e.is_sparse == t.is_sparse
        np.testing.assert_allclose(_dense(e), _dense(t))
    e = ember.sparse.sum(_uncoalesced(ember, ember.int32))
    t = torch.sparse.sum(_uncoalesced(torch, torch.int32))
    assert repr(e.dtype).split(".")[1] == repr(t.dtype).split(".")[1] == "int64"
    assert e.item() == t.item()


def test_transpose_matches_torch() -> None:
    for f in (lambda s: s.t(), lambda s: s.transpose(0, 1), lambda s: s.coalesce().t()):
        _same_sparse(f(_uncoalesced(ember)), f(_uncoalesced(torch)))
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="transposed dimensions must be sparse"):
            lib.ones(2, 2, 3).to_sparse(1).transpose(1, 2)


# --------------------------------------------------------------------------- printing


@pytest.mark.parametrize(
    "make",
    [
        lambda L: _uncoalesced(L),
        lambda L: _uncoalesced(L, L.float64).coalesce(),
        lambda L: L.tensor([[1.0, 2.0], [0.0, 0.0], [3.0, 4.0]]).to_sparse(1),
        lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0, 2), (2, 3, 2)),
        lambda L: L.sparse_coo_tensor([[0, 1]], [1, 2], (3,), dtype=L.int32),
        lambda L: L.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,), requires_grad=True),
    ],
)
def test_repr_matches_torch(make: Callable[[Any], Any]) -> None:
    assert repr(make(ember)).replace("ember.", "torch.") == repr(make(torch))


# --------------------------------------------------------------------------- autograd


def test_to_dense_gradient_is_the_masked_sparse_gradient() -> None:
    def run(lib: Any) -> Any:
        s = _uncoalesced(lib).requires_grad_()
        weight = lib.arange(12.0).reshape(3, 4)
        (s.to_dense() * weight).sum().backward()
        return s

    e, t = run(ember), run(torch)
    assert e.grad.is_sparse and t.grad.is_sparse
    _same_sparse(e.grad, t.grad, flags=False)
    assert type(e.to_dense().grad_fn).__name__ == type(t.to_dense().grad_fn).__name__


def test_values_gradient_through_the_constructor() -> None:
    def run(lib: Any, use: Callable[[Any, Any], Any]) -> Any:
        v = lib.tensor([1.0, 2.0, 3.0, -4.0, 5.0], requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor([[2, 0, 2, 1, 0], [1, 3, 1, 0, 0]]), v, (3, 4))
        assert type(s.grad_fn).__name__ == "SparseCooTensorWithDimsAndTensorsBackward0"
        use(lib, s).backward()
        return v.grad.numpy()

    uses: list[Callable[[Any, Any], Any]] = [
        lambda L, s: (s.to_dense() * L.arange(12.0).reshape(3, 4)).sum(),
        lambda L, s: (L.sparse.mm(s, L.arange(8.0).reshape(4, 2)) ** 2).sum(),
        lambda L, s: (s.coalesce().values() * L.tensor([1.0, 2.0, 3.0, 4.0])).sum(),
        lambda L, s: (L.sparse.sum(s, 1).to_dense() ** 2).sum(),
    ]
    for use in uses:
        np.testing.assert_allclose(run(ember, use), run(torch, use), rtol=1e-6)


def test_sparse_mm_gradients_match_torch() -> None:
    def run(lib: Any, mm: str) -> tuple[Any, Any]:
        s = _uncoalesced(lib).requires_grad_()
        d = lib.arange(8.0).reshape(4, 2).requires_grad_()
        r = lib.sparse.mm(s, d) if mm == "sparse" else lib.mm(s, d)
        (r * lib.tensor([[1.0, -1.0], [2.0, 0.5], [0.0, 3.0]])).sum().backward()
        return s.grad, d.grad

    (es, ed), (ts, td) = run(ember, "sparse"), run(torch, "sparse")
    assert es.is_sparse and ts.is_sparse  # sparse.mm keeps the sparse pattern
    _same_sparse(es, ts, flags=False)
    np.testing.assert_allclose(ed.numpy(), td.numpy())
    (es, ed), (ts, td) = run(ember, "mm"), run(torch, "mm")
    assert not es.is_sparse and not ts.is_sparse  # mm gives a dense gradient, as PyTorch's
    np.testing.assert_allclose(es.numpy(), ts.numpy())
    np.testing.assert_allclose(ed.numpy(), td.numpy())


def test_grad_fn_names_match_torch() -> None:
    def names(lib: Any) -> list[str]:
        s = _uncoalesced(lib).requires_grad_()
        c = s.coalesce()
        d = lib.ones(4, 2)
        outs = [c, c.values(), s.to_dense(), lib.sparse.mm(s, d), lib.sparse.sum(s, 0)]
        outs.append(lib.ones(3, 4, requires_grad=True).to_sparse())
        outs.append(lib.ones(3, 4, requires_grad=True).to_sparse(1))
        return [type(o.grad_fn).__name__ for o in outs]

    assert names(ember) == names(torch)
    assert ember.tensor([1.0], requires_grad=True).to_sparse()._values().requires_grad is False


def test_to_sparse_gradient_is_dense() -> None:
    def run(lib: Any) -> np.ndarray:
        x = lib.tensor([[0.0, 2.0], [3.0, 0.0]], requires_grad=True)
        (x.to_sparse().to_dense() * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return x.grad.numpy()

    np.testing.assert_array_equal(run(ember), run(torch))


# --------------------------------------------------------------------------- embedding


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_sparse_gradient_matches_torch(padding_idx: int | None) -> None:
    def run(lib: Any) -> Any:
        w = lib.tensor(np.arange(24.0, dtype=np.float32).reshape(6, 4), requires_grad=True)
        idx = lib.tensor([[1, 2, 1], [5, 0, 2]])
        out = lib.nn.functional.embedding(idx, w, padding_idx=padding_idx, sparse=True)
        (out * lib.arange(24.0).reshape(2, 3, 4)).sum().backward()
        return w.grad

    e, t = run(ember), run(torch)
    _same_sparse(e, t)  # uncoalesced, one row per looked-up index, padding rows left out


EMBEDDING_BAG = [
    ("sum", False, None), ("sum", False, 2), ("sum", True, None), ("sum", True, 2),
    ("mean", False, None), ("mean", False, 2),
]  # fmt: skip


@pytest.mark.parametrize(("mode", "weighted", "padding_idx"), EMBEDDING_BAG)
def test_embedding_bag_sparse_gradient_matches_torch(
    mode: str, weighted: bool, padding_idx: int | None
) -> None:
    def run(lib: Any) -> Any:
        w = lib.tensor(np.arange(24.0, dtype=np.float32).reshape(6, 4), requires_grad=True)
        kw = {"per_sample_weights": lib.tensor([1.0, 2, 3, 4, 5, 6, 7])} if weighted else {}
        out = lib.nn.functional.embedding_bag(
            lib.tensor([1, 2, 1, 5, 0, 2, 3]), w, lib.tensor([0, 3, 5]), mode=mode,
            sparse=True, padding_idx=padding_idx, **kw,
        )  # fmt: skip
        (out * lib.arange(12.0).reshape(3, 4)).sum().backward()
        return w.grad

    _same_sparse(run(ember), run(torch))


def test_sparse_embedding_refusals_match_torch() -> None:
    for lib in (torch, ember):
        w = lib.ones(5, 2, requires_grad=True)
        F = lib.nn.functional
        with pytest.raises(ValueError, match="max mode does not support sparse weights"):
            F.embedding_bag(lib.tensor([[1, 2]]), w, mode="max", sparse=True)
        out = F.embedding(lib.tensor([1, 1, 3]), w, sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
            out.sum().backward()
        out = F.embedding(lib.tensor([1, 3]), w, sparse=True)
        out.sum().backward()
        with pytest.raises(NotImplementedError, match="linalg_vector_norm"):
            lib.nn.utils.clip_grad_norm_([w], 1.0)  # neither has a sparse norm


def _train(lib: Any, opt_name: str, kwargs: dict[str, Any], steps: int = 4) -> np.ndarray:
    w0 = np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32)
    emb = lib.nn.Embedding(10, 4, sparse=True)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(w0))
    opt = getattr(lib.optim, opt_name)(emb.parameters(), **kwargs)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        idx = lib.tensor(rng.integers(0, 10, (3, 5)))
        target = lib.tensor(rng.standard_normal((3, 5, 4)).astype(np.float32))
        opt.zero_grad()
        ((emb(idx) - target) ** 2).mean().backward()
        assert emb.weight.grad.is_sparse
        opt.step()
    return emb.weight.detach().numpy().copy()  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("opt_name", "kwargs"),
    [
        ("SGD", {"lr": 0.1}),
        ("SGD", {"lr": 0.1, "momentum": 0.9}),
        ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.2, "maximize": True}),
        ("SparseAdam", {"lr": 0.05}),
        ("SparseAdam", {"lr": 0.05, "betas": (0.8, 0.99), "maximize": True}),
    ],
)
def test_embedding_training_matches_torch(opt_name: str, kwargs: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = _train(ember, opt_name, dict(kwargs))
        t = _train(torch, opt_name, dict(kwargs))
    np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


def test_sparse_guide_examples_run() -> None:
    """The ``>>>`` examples of docs/sparse.md print what they say."""
    import doctest
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "docs" / "sparse.md"
    test = doctest.DocTestParser().get_doctest(
        doc.read_text(encoding="utf-8"), {"ember": ember}, doc.name, str(doc), 0
    )
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0


W = [[1.0, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
THROUGH = {
    "sum": lambda L, s: s.sum(),
    "sparse.sum": lambda L, s: L.sparse.sum(s),
    "mul_scalar": lambda L, s: (s * 2).to_dense().mul(L.tensor(W)).sum(),
    "neg": lambda L, s: (-s).to_dense().mul(L.tensor(W)).sum(),
    "add": lambda L, s: (s + s).to_dense().mul(L.tensor(W)).sum(),
    "abs": lambda L, s: s.abs().to_dense().mul(L.tensor(W)).sum(),
    "mul_sparse": lambda L, s: (s * s).to_dense().mul(L.tensor(W)).sum(),
    "t": lambda L, s: s.t().to_dense().mul(L.tensor(W).t()).sum(),
    "dense_plus": lambda L, s: (L.ones(3, 4) + s).mul(L.tensor(W)).sum(),
    "double": lambda L, s: s.double().to_dense().sum(),
    "clone": lambda L, s: s.clone().to_dense().mul(L.tensor(W)).sum(),
    "sqrt": lambda L, s: s.abs().sqrt().to_dense().sum(),  # both refuse: sparse / sparse
    "tanh": lambda L, s: s.tanh().to_dense().sum(),  # both refuse: no sparse tanh_backward
}


@pytest.mark.parametrize("name", sorted(THROUGH))
def test_gradients_through_sparse_ops_match_torch(name: str) -> None:
    def run(lib: Any) -> Any:
        s = lib.sparse_coo_tensor([[2, 0, 2, 1, 0], [1, 3, 1, 0, 0]], [1.0, 2, -3, 4, 5],
                                  (3, 4), requires_grad=True)  # fmt: skip
        try:
            THROUGH[name](lib, s).backward()
        except (RuntimeError, NotImplementedError) as e:
            return type(e)
        return s.grad

    e, t = run(ember), run(torch)
    if isinstance(t, type):
        assert e is t
        return
    assert e.is_sparse == t.is_sparse
    np.testing.assert_allclose(_dense(e), _dense(t))


@pytest.mark.parametrize("dtype", ["bool", "float16"])
def test_sums_of_bool_and_half_values_are_refused_as_torch(dtype: str) -> None:
    for lib in (torch, ember):
        a = _uncoalesced(lib).to(getattr(lib, dtype))
        with pytest.raises(NotImplementedError, match='"cadd_sparse" not implemented for'):
            a + a


def _hybrid(lib: Any) -> Any:
    return lib.tensor([[1.0, 2.0], [0.0, 0.0], [3.0, 4.0]]).to_sparse(1)


PICK_AND_JOIN = {
    "select_sparse": lambda L: _uncoalesced(L).select(0, 2),
    "select_sparse_neg": lambda L: _uncoalesced(L).select(1, -3),
    "select_last_sparse": lambda L: L.sparse_coo_tensor([[2, 0, 2]], [1.0, 2, 3], (4,)).select(
        0, 2
    ),
    "select_hybrid_dense": lambda L: _hybrid(L).select(1, 1),
    "select_hybrid_sparse": lambda L: _hybrid(L).select(0, 2),
    "index_select": lambda L: _uncoalesced(L).index_select(0, L.tensor([2, 2, 0])),
    "index_select_1": lambda L: _uncoalesced(L).index_select(1, L.tensor([1, 3])),
    "index_select_dense": lambda L: _hybrid(L).index_select(1, L.tensor([1, 0, 1])),
    "cat": lambda L: L.cat([_uncoalesced(L), _uncoalesced(L).coalesce()]),
    "cat_1": lambda L: L.cat([_uncoalesced(L), _random(L, 7, (3, 2), 3)], 1),
    "cat_dense_dim": lambda L: L.cat([_hybrid(L), _hybrid(L) * 2], 1),
    "stack": lambda L: L.stack([_uncoalesced(L), _uncoalesced(L)]),
    "stack_2": lambda L: L.stack([_uncoalesced(L), _uncoalesced(L)], 2),
    "unsqueeze": lambda L: _uncoalesced(L).unsqueeze(1),
    "unsqueeze_dense": lambda L: _hybrid(L).unsqueeze(2),
    "permute": lambda L: L.sparse_coo_tensor(
        [[2, 0, 2, 1], [1, 3, 1, 0], [0, 1, 0, 1]], [1.0, 2, -3, 4], (3, 4, 2)
    ).permute(2, 0, 1),
    "permute_same": lambda L: _uncoalesced(L).coalesce().permute(0, 1),
    "permute_dense": lambda L: L.ones(2, 3, 4).to_sparse(1).permute(0, 2, 1),
    "T": lambda L: _uncoalesced(L).T,
    "new_zeros": lambda L: _uncoalesced(L).new_zeros(2, 5),
    "t_": lambda L: _uncoalesced(L).t_(),
    "transpose_": lambda L: _uncoalesced(L).coalesce().transpose_(0, 1),
    "nan_to_num": lambda L: (_uncoalesced(L) / 0).nan_to_num(posinf=7.0),
    "isnan": lambda L: (_uncoalesced(L) * float("nan")).isnan(),
    "isinf": lambda L: (_uncoalesced(L) / 0).isinf(),
}


@pytest.mark.parametrize("name", sorted(PICK_AND_JOIN))
def test_picking_and_joining_match_torch(name: str) -> None:
    e, t = PICK_AND_JOIN[name](ember), PICK_AND_JOIN[name](torch)
    assert e.is_sparse == t.is_sparse
    if t.is_sparse:
        _same_sparse(e, t)
    else:
        np.testing.assert_array_equal(e.numpy(), t.numpy())
