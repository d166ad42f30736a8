"""``ember.linalg`` against ``torch.linalg``: what the op harness (tests/test_ops.py) cannot
say. Named tuples, batches of every function, exception types and messages, gradients
(gradcheck in float64, PyTorch's gradients, complex inputs, singular matrices, gauge-free
losses of svd/eigh on any shape), what ``__torch_dispatch__`` sees, the lazy device, and
small programs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from .conftest import dispatched_ops, raises_as_torch, requires_torch, torch

pytestmark = requires_torch
RNG = np.random.default_rng(20)


def rand(*shape: int, complex_: bool = False) -> np.ndarray:
    a = RNG.standard_normal(shape)
    return a + 1j * RNG.standard_normal(shape) if complex_ else a


def well(*shape: int, complex_: bool = False) -> np.ndarray:
    """Well conditioned: random values plus n on the diagonal."""
    return rand(*shape, complex_=complex_) + shape[-1] * np.eye(shape[-1])


def spd(*shape: int, complex_: bool = False) -> np.ndarray:
    a = rand(*shape, complex_=complex_)
    return a @ np.swapaxes(a, -1, -2).conj() + shape[-1] * np.eye(shape[-1])


def both(*arrays: np.ndarray, grad: bool = False) -> tuple[list[Any], list[Any]]:
    """The same arrays as ember and torch tensors (leaves requiring grad, if asked)."""
    e = [ember.from_numpy(a.copy()).requires_grad_(grad) for a in arrays]
    t = [torch.from_numpy(a.copy()).requires_grad_(grad) for a in arrays]
    return e, t


def close(e: Any, t: Any, atol: float = 1e-8, rtol: float = 1e-6) -> None:
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t, strict=True):
            close(a, b, atol, rtol)
        return
    assert tuple(e.shape) == tuple(t.shape)
    assert e.dtype.name == str(t.dtype).removeprefix("torch.")
    np.testing.assert_allclose(
        e.detach().numpy(), t.detach().resolve_conj().numpy(), atol=atol, rtol=rtol, equal_nan=True
    )


def grads_agree(
    ef: Callable[..., Any], tf: Callable[..., Any], *arrays: np.ndarray, atol: float = 1e-8
) -> None:
    """The values and the gradients (for one random cotangent per output) agree."""
    e, t = both(*arrays, grad=True)
    eo, to = ef(*e), tf(*t)
    eo = list(eo) if isinstance(eo, (tuple, list)) else [eo]
    to = list(to) if isinstance(to, (tuple, list)) else [to]
    close(eo, to, atol=atol)
    eo = [o for o in eo if o.requires_grad]  # (integer outputs: matrix_rank)
    to = [o for o in to if o.requires_grad]
    if not to:
        return
    rng = np.random.default_rng(5)
    cots = []
    for o in to:
        c = rng.standard_normal(tuple(o.shape))
        if o.is_complex():
            c = c + 1j * rng.standard_normal(tuple(o.shape))
        cots.append(np.asarray(c, o.detach().resolve_conj().numpy().dtype))
    eg = ember.autograd.grad(eo, e, [ember.from_numpy(c) for c in cots], allow_unused=True)
    tg = torch.autograd.grad(to, t, [torch.from_numpy(c) for c in cots], allow_unused=True)
    for a, b in zip(eg, tg, strict=True):
        if b is None:
            assert a is None or not a.numpy().any()
            continue
        close(a, b, atol=atol, rtol=1e-6)


# --------------------------------------------------------------------------- the namespace

LINALG_NAMES = (
    "cholesky cholesky_ex cross det diagonal eigh eigvalsh inv inv_ex lstsq matmul matrix_norm "
    "matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd "
    "svdvals vecdot vector_norm"
).split()


def test_namespace_mirrors_torch_linalg() -> None:
    for name in LINALG_NAMES:
        assert hasattr(torch.linalg, name), name
        f = getattr(ember.linalg, name)
        assert f.__name__ == getattr(torch.linalg, name).__name__  # linalg_inv, as PyTorch
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    assert not hasattr(ember, "linalg_inv")  # python_module: linalg, as PyTorch


@pytest.mark.parametrize("module", ["linalg", "fft", "special"])
def test_namespace_functions_are_overridable_and_named(module: str) -> None:
    mod = getattr(ember, module)
    overridable = ember.overrides.get_overridable_functions()[mod]
    for name in mod.__all__:
        f = getattr(mod, name)
        if isinstance(f, type):
            continue
        assert f in overridable, name
        assert ember.overrides.resolve_name(f) == f"ember.{module}.{name}"

    class Catch:
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            return func

    first = next(n for n in mod.__all__ if not isinstance(getattr(mod, n), type))
    f = getattr(mod, first)
    assert f(Catch()) is f  # a tensor-like reaches its handler with the namespace function


# --------------------------------------------------------------------------- return structures


def test_named_tuples_match_torch() -> None:
    a, s = well(3, 3), spd(3, 3)
    cases = [
        ("cholesky_ex", (s,), ["L", "info"]),
        ("inv_ex", (a,), ["inverse", "info"]),
        ("solve_ex", (a, rand(3, 2)), ["result", "info"]),
        ("slogdet", (a,), ["sign", "logabsdet"]),
        ("svd", (a,), ["U", "S", "Vh"]),
        ("qr", (a,), ["Q", "R"]),
        ("eigh", (s,), ["eigenvalues", "eigenvectors"]),
        ("lstsq", (rand(5, 3), rand(5, 2)), ["solution", "residuals", "rank", "singular_values"]),
    ]
    for name, arrays, fields in cases:
        e, t = both(*arrays)
        er, tr = getattr(ember.linalg, name)(*e), getattr(torch.linalg, name)(*t)
        assert list(er._fields) == fields, name
        assert all(getattr(tr, f) is tr[i] for i, f in enumerate(fields)), name  # torch's
        assert type(er).__name__ == type(tr).__name__ == f"linalg_{name}"
        assert type(er) is getattr(ember.return_types, f"linalg_{name}")
    e, t = both(a)
    assert ember.slogdet(e[0])._fields == ("sign", "logabsdet")
    assert type(ember.slogdet(e[0])).__name__ == type(torch.slogdet(t[0])).__name__
    assert list(ember.svd(e[0])._fields) == ["U", "S", "V"]
    assert type(ember.svd(e[0])).__name__ == type(torch.svd(t[0])).__name__


def test_lstsq_driver_outputs_follow_torch() -> None:
    A, B = rand(2, 6, 3), rand(2, 6, 2)
    for driver in (None, "gelsy", "gelsd", "gelss", "gels"):
        (ea, eb), (ta, tb) = both(A, B)
        close(ember.linalg.lstsq(ea, eb, driver=driver), torch.linalg.lstsq(ta, tb, driver=driver))
    rank2 = np.concatenate([A[..., :2], A[..., :1]], -1)  # rank 2: no residuals
    (ea, eb), (ta, tb) = both(rank2, B)
    close(
        ember.linalg.lstsq(ea, eb, driver="gelsd"),
        torch.linalg.lstsq(ta, tb, driver="gelsd"),
        atol=1e-7,
    )


@pytest.mark.parametrize("shapes", [((1, 6, 3), (2, 6, 2)), ((3, 1, 6, 3), (1, 2, 6, 2))], ids=str)
def test_lstsq_broadcast_batches_follow_torch(shapes: Any) -> None:
    """Batches that broadcast: the solution and residuals have the broadcast batch shape,
    the rank and singular values ``A``'s own (on the cpu and meta devices)."""
    for driver in ("gelsy", "gelsd", "gelss", "gels"):
        (ea, eb), (ta, tb) = both(rand(*shapes[0]), rand(*shapes[1]))
        want = torch.linalg.lstsq(ta, tb, driver=driver)
        close(ember.linalg.lstsq(ea, eb, driver=driver), want)
        meta = ember.linalg.lstsq(ea.to("meta"), eb.to("meta"), driver=driver)
        assert [tuple(t.shape) for t in meta] == [tuple(t.shape) for t in want]


# --------------------------------------------------------------------------- batches


BATCHED: list[tuple[str, Callable[[Any], Any], Callable[[], list[np.ndarray]]]] = [
    ("inv", lambda m: m.linalg.inv, lambda: [well(2, 3, 4, 4)]),
    ("det", lambda m: m.linalg.det, lambda: [rand(2, 3, 4, 4)]),
    ("slogdet", lambda m: m.linalg.slogdet, lambda: [rand(3, 2, 5, 5)]),
    ("cholesky", lambda m: m.linalg.cholesky, lambda: [spd(2, 3, 4, 4)]),
    ("solve", lambda m: m.linalg.solve, lambda: [well(2, 1, 3, 3), rand(4, 3, 2)]),
    ("solve vec", lambda m: m.linalg.solve, lambda: [well(2, 3, 3), rand(3)]),
    ("solve_triangular", lambda m: lambda a, b: m.linalg.solve_triangular(a, b, upper=False),
     lambda: [well(2, 3, 3), rand(5, 1, 3, 2)]),
    ("svdvals", lambda m: m.linalg.svdvals, lambda: [rand(2, 3, 5, 4)]),
    ("eigvalsh", lambda m: m.linalg.eigvalsh, lambda: [spd(2, 3, 5, 5)]),
    ("pinv", lambda m: m.linalg.pinv, lambda: [rand(2, 3, 5, 4)]),
    ("matrix_rank", lambda m: m.linalg.matrix_rank, lambda: [rand(2, 3, 5, 4)]),
    ("matrix_power", lambda m: lambda a: m.linalg.matrix_power(a, -3), lambda: [well(2, 3, 3, 3)]),
    ("matrix_norm nuc", lambda m: lambda a: m.linalg.matrix_norm(a, "nuc"),
     lambda: [rand(2, 3, 4, 5)]),
    ("matrix_norm -2", lambda m: lambda a: m.linalg.matrix_norm(a, -2, dim=(0, 2)),
     lambda: [rand(4, 3, 5)]),
    ("norm", lambda m: lambda a: m.linalg.norm(a, 2, (-1, -2)), lambda: [rand(3, 4, 5)]),
    ("cross", lambda m: lambda a, b: m.linalg.cross(a, b), lambda: [rand(2, 1, 3), rand(1, 4, 3)]),
    ("vecdot", lambda m: m.linalg.vecdot, lambda: [rand(2, 3, 4), rand(3, 4)]),
    ("lstsq", lambda m: lambda a, b: m.linalg.lstsq(a, b, driver="gelsd").solution,
     lambda: [rand(2, 6, 3), rand(1, 6, 2)]),
    ("svd recon", lambda m: lambda a: (lambda r: r.U @ (r.S.unsqueeze(-1) * r.Vh))(
        m.linalg.svd(a, full_matrices=False)), lambda: [rand(2, 3, 5, 4)]),
    ("qr recon", lambda m: lambda a: (lambda r: r.Q @ r.R)(m.linalg.qr(a)),
     lambda: [rand(2, 3, 5, 4)]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fn", "arrays"), BATCHED, ids=[b[0] for b in BATCHED])
def test_batched_values_and_gradients(name: str, fn: Any, arrays: Any) -> None:
    grads_agree(fn(ember), fn(torch), *arrays(), atol=1e-7)


@pytest.mark.parametrize(
    "name", ["inv", "det", "solve", "cholesky", "svdvals", "pinv", "qr recon", "svd recon"]
)
def test_complex_values_and_gradients(name: str) -> None:
    fn, arrays = next((f, a) for n, f, a in BATCHED if n == name)
    first = spd if name == "cholesky" else well if name in ("inv", "solve") else rand
    complex_arrays = [
        (first if i == 0 else rand)(*a.shape, complex_=True) for i, a in enumerate(arrays())
    ]
    grads_agree(fn(ember), fn(torch), *complex_arrays, atol=1e-7)


@pytest.mark.parametrize(
    "loss",
    [
        lambda r: (r.U.abs() ** 2 * 1.5).sum() + (r.Vh.abs() ** 3).sum() + r.S.sum(),
        lambda r: ((r.U * r.S.unsqueeze(-2)) @ r.Vh).pow(2).sum(),
    ],
)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("complex_", [False, True])
def test_svd_gradients_of_gauge_free_losses(
    loss: Any, shape: tuple[int, ...], complex_: bool
) -> None:
    """Any shape (NOTE [gauge of singular and eigen vectors]): losses that do not depend on
    the singular vectors' signs or phases have PyTorch's gradients."""
    a = rand(*shape, complex_=complex_)
    grads_agree(
        lambda x: loss(ember.linalg.svd(x, full_matrices=False)),
        lambda x: loss(torch.linalg.svd(x, full_matrices=False)),
        a,
    )


@pytest.mark.parametrize("complex_", [False, True])
def test_eigh_gradients_of_gauge_free_losses(complex_: bool) -> None:
    a = spd(2, 5, 5, complex_=complex_)

    def loss(r: Any) -> Any:
        v = r.eigenvectors
        return (v.abs() ** 2 * ember_or_torch_arange(v)).sum() + (r.eigenvalues**2).sum()

    grads_agree(lambda x: loss(ember.linalg.eigh(x)), lambda x: loss(torch.linalg.eigh(x)), a)


def ember_or_torch_arange(v: Any) -> Any:
    n = v.shape[-1]
    lib = ember if isinstance(v, ember.Tensor) else torch
    return lib.arange(n * n, dtype=lib.float64).reshape(n, n)


# --------------------------------------------------------------------------- gradcheck


GRADCHECK: list[tuple[str, Callable[..., Any], Callable[[], list[np.ndarray]]]] = [
    ("inv", ember.linalg.inv, lambda: [well(2, 3, 3)]),
    ("solve", ember.linalg.solve, lambda: [well(3, 3), rand(3, 2)]),
    ("solve left=False", lambda a, b: ember.linalg.solve(a, b, left=False),
     lambda: [well(3, 3), rand(2, 3)]),
    ("solve_triangular", lambda a, b: ember.linalg.solve_triangular(a, b, upper=True),
     lambda: [well(3, 3), rand(3, 2)]),
    ("det", ember.linalg.det, lambda: [rand(2, 3, 3)]),
    ("slogdet", lambda a: ember.linalg.slogdet(a).logabsdet, lambda: [well(3, 3)]),
    ("cholesky", lambda a: ember.linalg.cholesky(a + a.mT), lambda: [spd(3, 3) / 2]),
    ("cholesky upper", lambda a: ember.linalg.cholesky(a + a.mT, upper=True),
     lambda: [spd(3, 3) / 2]),
    ("svdvals", ember.linalg.svdvals, lambda: [rand(3, 4)]),
    ("svd", lambda a: (lambda r: (r.U**2, r.S, r.Vh**2))(ember.linalg.svd(a, False)),
     lambda: [rand(4, 3)]),
    ("eigh", lambda a: (lambda r: (r.eigenvalues, r.eigenvectors**2))(ember.linalg.eigh(a + a.mT)),
     lambda: [spd(3, 3) / 2]),
    ("qr", ember.linalg.qr, lambda: [rand(4, 3)]),
    ("qr wide", ember.linalg.qr, lambda: [rand(2, 4)]),
    ("pinv", ember.linalg.pinv, lambda: [rand(4, 3)]),
    ("lstsq", lambda a, b: ember.linalg.lstsq(a, b, driver="gelsd")[:2],
     lambda: [rand(5, 3), rand(5, 2)]),
    ("matrix_norm 2", lambda a: ember.linalg.matrix_norm(a, 2), lambda: [rand(3, 4)]),
    ("matrix_norm nuc", lambda a: ember.linalg.matrix_norm(a, "nuc"), lambda: [rand(3, 4)]),
    ("matrix_norm inf", lambda a: ember.linalg.matrix_norm(a, math.inf), lambda: [rand(3, 4)]),
    ("cross", ember.linalg.cross, lambda: [rand(4, 3), rand(4, 3)]),
    ("multi_dot", lambda a, b, c: ember.linalg.multi_dot([a, b, c]),
     lambda: [rand(3), rand(3, 4), rand(4, 2)]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fn", "arrays"), GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck_float64(name: str, fn: Any, arrays: Any) -> None:
    inputs = [ember.from_numpy(a).requires_grad_() for a in arrays()]
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5)


@pytest.mark.parametrize(
    ("name", "fn"),
    [
        ("inv", ember.linalg.inv),
        ("det", ember.linalg.det),
        ("cholesky", lambda a: ember.linalg.cholesky(a + a.mT)),  # (reads one triangle)
    ],
)
def test_gradgradcheck_float64(name: str, fn: Any) -> None:
    a = ember.from_numpy(spd(3, 3)).requires_grad_()
    assert gradgradcheck(fn, [a], eps=1e-6, atol=1e-4)


SINGULAR = [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]],
            [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[0.0]]]  # fmt: skip


@pytest.mark.parametrize("m", SINGULAR)
@pytest.mark.parametrize("create_graph", [False, True])
def test_det_gradient_at_singular_matrices(m: list[Any], create_graph: bool) -> None:
    """PyTorch's two paths (NOTE [linalg derivatives]): zero without create_graph, the
    adjugate with it (and the 1x1 derivative 1 in both)."""
    e, t = both(np.array(m), grad=True)
    (eg,) = ember.autograd.grad(ember.linalg.det(e[0]), e, create_graph=create_graph)
    (tg,) = torch.autograd.grad(torch.linalg.det(t[0]), t, create_graph=create_graph)
    close(eg, tg, atol=1e-10)


def test_qr_backward_refuses_what_torch_refuses() -> None:
    for mode, shape in (("complete", (4, 3)), ("r", (3, 3))):
        a = ember.from_numpy(rand(*shape)).requires_grad_()
        q, r = ember.linalg.qr(a, mode=mode)
        with pytest.raises(RuntimeError, match="linalg.qr|not differentiable"):
            r.sum().backward()
        t = torch.from_numpy(rand(*shape)).requires_grad_()
        with pytest.raises(RuntimeError):
            torch.linalg.qr(t, mode=mode)[1].sum().backward()


# --------------------------------------------------------------------------- errors


ERRORS = [
    ("inv singular", lambda m: m.linalg.inv(m.zeros(2, 3, 3, dtype=m.float64))),
    ("inv singular matrix", lambda m: m.linalg.inv(m.zeros(3, 3, dtype=m.float64))),
    ("inverse singular", lambda m: m.inverse(m.zeros(3, 3))),
    ("solve singular", lambda m: m.linalg.solve(m.zeros(3, 3), m.ones(3))),
    ("cholesky not PD", lambda m: m.linalg.cholesky(-m.eye(3).expand(2, 3, 3))),
    ("cholesky_ex check_errors", lambda m: m.linalg.cholesky_ex(-m.eye(3), check_errors=True)),
    ("inv_ex check_errors", lambda m: m.linalg.inv_ex(m.zeros(2, 2, 2), check_errors=True)),
    ("cholesky nan", lambda m: m.linalg.cholesky(m.full((3, 3), float("nan")))),
    ("eigh nan", lambda m: m.linalg.eigh(m.full((3, 3), float("nan")))),
    ("svd nan", lambda m: m.linalg.svd(m.full((3, 3), float("nan")))),
    ("non-square", lambda m: m.linalg.inv(m.ones(2, 3))),
    ("1-D", lambda m: m.linalg.det(m.ones(3))),
    ("integers", lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.int64))),
    ("float16 inv", lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.float16))),
    ("float16 cholesky", lambda m: m.linalg.cholesky(m.eye(3, dtype=m.float16))),
    ("solve dtypes", lambda m: m.linalg.solve(m.eye(3), m.ones(3, dtype=m.float64))),
    ("solve shapes", lambda m: m.linalg.solve(m.eye(3), m.ones(4))),
    ("eigh UPLO", lambda m: m.linalg.eigh(m.eye(3), UPLO="X")),
    ("qr mode", lambda m: m.linalg.qr(m.eye(3), mode="full")),
    ("matrix_norm ord", lambda m: m.linalg.matrix_norm(m.eye(3), 3)),
    ("cross size", lambda m: m.linalg.cross(m.ones(2), m.ones(2))),
    ("lstsq driver", lambda m: m.linalg.lstsq(m.eye(3), m.eye(3), driver="bad")),
    ("multi_dot one", lambda m: m.linalg.multi_dot([m.eye(3)])),
    ("pinv 1-D", lambda m: m.linalg.pinv(m.ones(3))),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name: str, call: Any) -> None:
    t_exc, e_exc = raises_as_torch(call)
    if isinstance(t_exc, torch.linalg.LinAlgError):
        assert isinstance(e_exc, ember.linalg.LinAlgError)
        assert str(e_exc) == str(t_exc)  # the same message, batch element and all


# --------------------------------------------------------------------------- what handlers see


DISPATCHED = [
    ("inv", lambda m, a, b: m.linalg.inv(a)),
    ("inverse", lambda m, a, b: m.inverse(a)),
    ("cholesky", lambda m, a, b: m.linalg.cholesky(a)),
    ("solve", lambda m, a, b: m.linalg.solve(a, b)),
    ("solve_ex", lambda m, a, b: m.linalg.solve_ex(a, b)),
    ("det", lambda m, a, b: m.linalg.det(a)),
    ("slogdet", lambda m, a, b: m.linalg.slogdet(a)),
    ("logdet", lambda m, a, b: m.logdet(a)),
    ("svd", lambda m, a, b: m.linalg.svd(a)),
    ("svdvals", lambda m, a, b: m.linalg.svdvals(a)),
    ("eigh", lambda m, a, b: m.linalg.eigh(a)),
    ("eigvalsh", lambda m, a, b: m.linalg.eigvalsh(a)),
    ("qr", lambda m, a, b: m.linalg.qr(a)),
    ("pinv", lambda m, a, b: m.linalg.pinv(a)),
    ("pinv rtol", lambda m, a, b: m.linalg.pinv(a, rtol=0.1)),
    ("lstsq", lambda m, a, b: m.linalg.lstsq(a, b)),
    ("matrix_rank", lambda m, a, b: m.linalg.matrix_rank(a, atol=1.0, rtol=0.1)),
    ("matrix_norm nuc", lambda m, a, b: m.linalg.matrix_norm(a, "nuc")),
    ("matrix_norm 1", lambda m, a, b: m.linalg.matrix_norm(a, 1)),
    ("matrix_norm inf keepdim", lambda m, a, b: m.linalg.matrix_norm(a, -math.inf, keepdim=True)),
    ("norm fro", lambda m, a, b: m.linalg.norm(a, "fro")),
    ("torch.norm nuc", lambda m, a, b: m.norm(a, "nuc")),
    ("torch.norm 3", lambda m, a, b: m.norm(a, 3)),
    ("cross", lambda m, a, b: m.linalg.cross(a, a)),
    ("matrix_power 3", lambda m, a, b: m.linalg.matrix_power(a, 3)),
    ("matrix_power -2", lambda m, a, b: m.linalg.matrix_power(a, -2)),
    ("multi_dot", lambda m, a, b: m.linalg.multi_dot([a, a, b])),
    ("solve_triangular", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True)),
]


@pytest.mark.parametrize(("name", "call"), DISPATCHED, ids=[d[0] for d in DISPATCHED])
def test_torch_dispatch_sees_torchs_ops(name: str, call: Any) -> None:
    """A ``TorchDispatchMode`` sees the ops PyTorch shows it (NOTE [linalg decompositions])."""
    a, b = spd(3, 3), rand(3, 2)
    (ea, eb), (ta, tb) = both(a, b)
    expected = dispatched_ops(torch, lambda: call(torch, ta, tb))
    if name == "matrix_rank":
        expected = [o for o in expected if o != "aten.empty.memory_format"]  # (an unused out)
    assert dispatched_ops(ember, lambda: call(ember, ea, eb)) == expected


def test_lazy_device_raises_and_computes() -> None:
    a = ember.from_numpy(well(2, 3, 3)).to("lazy")
    b = ember.from_numpy(rand(2, 3, 1)).to("lazy")
    x = ember.linalg.solve(a, b)
    np.testing.assert_allclose(
        x.to("cpu").numpy(), np.linalg.solve(a.to("cpu").numpy(), b.to("cpu").numpy())
    )
    with pytest.raises(ember.linalg.LinAlgError, match="Batch element 1"):
        ember.linalg.inv(ember.stack([ember.eye(3), ember.zeros(3, 3)]).to("lazy"))


# --------------------------------------------------------------------------- programs


def test_program_solve_norm_backward() -> None:
    """Solve a batch of systems, take the norm of the residual-weighted solution, backward."""
    A, B, w = well(4, 3, 3), rand(4, 3, 2), rand(2)

    def program(m: Any, a: Any, b: Any) -> Any:
        x = m.linalg.solve(a, b)
        n = m.linalg.matrix_norm(x * m.from_numpy(w) if m is ember else x * torch.from_numpy(w))
        return m.linalg.vector_norm(n, 3) + m.linalg.det(a).sum() + m.norm(x, "fro")

    grads_agree(lambda a, b: program(ember, a, b), lambda a, b: program(torch, a, b), A, B)


def test_program_least_squares_fit() -> None:
    """Fit a polynomial by lstsq, check it with pinv and the normal equations (cholesky)."""
    x = np.linspace(-1, 1, 20)
    V = np.stack([x**k for k in range(4)], -1)
    y = 1 + 2 * x - x**3 + 0.01 * np.sin(7 * x)

    def program(m: Any, v: Any, yy: Any) -> Any:
        sol = m.linalg.lstsq(v, yy.unsqueeze(-1), driver="gelsd").solution
        via_pinv = m.linalg.pinv(v) @ yy
        g = v.mT @ v
        L = m.linalg.cholesky(g)
        z = m.linalg.solve_triangular(L, (v.mT @ yy).unsqueeze(-1), upper=False)
        normal = m.linalg.solve_triangular(L.mT, z, upper=True)
        return sol.squeeze(-1), via_pinv, normal.squeeze(-1)

    grads_agree(lambda v, yy: program(ember, v, yy), lambda v, yy: program(torch, v, yy), V, y)


def test_vander_dispatches_torch_ops_and_refuses_as_torch() -> None:
    """A dispatch mode sees PyTorch's composition (unsqueeze, expand, cumprod, new_ones,
    cat); N below 2 and bool inputs raise in both."""

    def run(lib: Any) -> Any:
        return lambda: lib.linalg.vander(lib.tensor([1.0, 2.0, 3.0]), N=4)

    assert dispatched_ops(ember, run(ember)) == dispatched_ops(torch, run(torch))
    for lib in (ember, torch):
        for bad in (lambda m: m.linalg.vander(m.ones(3), N=1),
                    lambda m: m.linalg.vander(m.tensor([True]))):  # fmt: skip
            with pytest.raises(RuntimeError):
                bad(lib)
