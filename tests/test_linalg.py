"""Linear algebra behaviour the op harness can't express: which parts ``matmul`` decomposes
into (NOTE [matmul decomposition]), its fast path honouring kernel overrides, and errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import ember
from ember.ops.registry import ops

aten = ops.aten


def t(*shape: int, dtype: Any = np.float32) -> ember.Tensor:
    n = int(np.prod(shape))
    return ember.from_numpy((np.arange(n) % 7 - 3).astype(dtype).reshape(shape))


@pytest.fixture
def calls() -> Iterator[list[str]]:
    """Record the matrix-product ops that reach the CPU kernels while the test runs."""
    seen: list[str] = []
    lib = ember.library.Library("aten", "IMPL")
    for name in ("mm.default", "bmm.default", "mv.default", "dot.default"):
        packet, _, overload = name.partition(".")
        op = getattr(getattr(aten, packet), overload)
        kernel = op._kernels[ember.DispatchKey.CPU][0]

        def spy(*args: Any, _k: Any = kernel, _n: str = name, **kwargs: Any) -> Any:
            seen.append(_n)
            return _k(*args, **kwargs)

        lib.impl(name, spy, "CPU")
    with lib:
        yield seen


@pytest.mark.parametrize(
    ("a", "b", "parts"),
    [
        ((2, 3), (3, 4), ["mm.default"]),
        ((3,), (3,), ["dot.default"]),
        ((2, 3), (3,), ["mv.default"]),
        ((3,), (3, 4), ["mm.default"]),
        ((2, 3, 4), (4, 5), ["mm.default"]),  # folded
        ((2, 3, 4), (4,), ["mv.default"]),  # folded
        ((2, 3, 4), (2, 4, 5), ["bmm.default"]),
        ((5, 1, 3, 4), (2, 4, 5), ["bmm.default"]),
    ],
)
def test_matmul_decomposes(
    calls: list[str], a: tuple[int, ...], b: tuple[int, ...], parts: list[str]
) -> None:
    x, y = t(*a), t(*b)
    r = x @ y
    assert calls == parts
    np.testing.assert_allclose(r.numpy(), np.matmul(x.numpy(), y.numpy()), rtol=1e-6)


def test_matmul_of_transposed_batch_does_not_fold(calls: list[str]) -> None:
    x = t(2, 3, 4).transpose(0, 1)
    r = x @ t(4, 5)
    assert calls == ["bmm.default"] and r.shape == (3, 2, 5)


def test_matmul_is_composite() -> None:
    """A decomposition and nothing else, but autocast's cast (PyTorch's matmul has an
    AutocastCPU kernel too)."""
    keys = aten.matmul.default.kernel_keys()
    assert keys == [ember.DispatchKey.CompositeImplicitAutograd, ember.DispatchKey.AutocastCPU]


def test_mm_errors_name_shapes_and_dtypes() -> None:
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"
    ):
        t(2, 3) @ t(4, 5)
    with pytest.raises(RuntimeError, match="same dtype"):
        ember.mm(t(2, 3), t(3, 2, dtype=np.float64))
    with pytest.raises(RuntimeError, match="at least 1D"):
        ember.matmul(t(2), ember.from_numpy(np.ones((), np.float32)))
    with pytest.raises(NotImplementedError):
        t(2, 2, dtype=np.bool_) @ t(2, 2, dtype=np.bool_)


def test_integer_matmul() -> None:
    x, y = t(3, 4, dtype=np.int64), t(4, 2, dtype=np.int64)
    r = x @ y
    assert r.dtype is ember.int64
    assert r.tolist() == (x.numpy() @ y.numpy()).tolist()


def test_addmm_scales_and_ignores_self_when_beta_is_zero() -> None:
    s = ember.from_numpy(np.full((2, 2), np.nan, np.float32))
    r = ember.addmm(s, t(2, 3), t(3, 2), beta=0, alpha=2)
    np.testing.assert_allclose(r.numpy(), 2 * (t(2, 3).numpy() @ t(3, 2).numpy()))


def test_einsum_matches_numpy() -> None:
    a, b = t(2, 3), t(3, 4)
    np.testing.assert_allclose(ember.einsum("ij,jk->ik", [a, b]).numpy(), a.numpy() @ b.numpy())
    with pytest.raises(RuntimeError, match="does not broadcast"):
        ember.einsum("ij,jk->ik", [a, t(4, 4)])


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("ij->j", [(2, 3)]),
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("...ij->ij", [(2, 3, 4)]),
        ("...ij->j", [(5, 2, 3, 4)]),
        ("i...j,j->i", [(2, 5, 3), (3,)]),
        ("... i j -> j", [(2, 3, 4)]),
    ],
)
def test_einsum_takes_operands_as_torch_does(equation: str, shapes: list[tuple[int, ...]]) -> None:
    """Operands as varargs or one list; an ellipsis the output leaves out is summed (NumPy
    refuses such equations, PyTorch sums them)."""
    torch = pytest.importorskip("torch")
    arrays = [np.random.default_rng(i).standard_normal(s) for i, s in enumerate(shapes)]
    expected = torch.einsum(equation, *[torch.from_numpy(a) for a in arrays]).numpy()
    tensors = [ember.from_numpy(a) for a in arrays]
    for got in (ember.einsum(equation, *tensors), ember.einsum(equation, tensors)):
        assert tuple(got.shape) == expected.shape
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_meta_matmul_shapes() -> None:
    a = ember.empty(5, 1, 3, 4, device="meta")
    b = ember.empty(2, 4, 6, device="meta")
    assert (a @ b).shape == (5, 2, 3, 6)
    assert (ember.empty(3, device="meta") @ ember.empty(3, 2, device="meta")).shape == (2,)


def test_vdot_conjugates_self_as_torch() -> None:
    """Function, method and ``out=``: ``sum(conj(self) * other)``, PyTorch's value and
    gradients (``conj(g) * other`` for ``self``, ``g * self`` for ``other``)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(4) + 1j * rng.standard_normal(4) for _ in range(2))
    ea, eb = ember.from_numpy(a).requires_grad_(), ember.from_numpy(b).requires_grad_()
    ta, tb = torch.from_numpy(a).requires_grad_(), torch.from_numpy(b).requires_grad_()
    want = torch.vdot(ta, tb)
    for got in (ember.vdot(ea, eb), ea.vdot(eb)):
        assert got.shape == () and got.dtype is ember.complex128
        assert complex(got.item()) == pytest.approx(complex(want.item()), rel=1e-12)
    out = ember.empty((), dtype=ember.complex128)
    assert ember.vdot(ea.detach(), eb.detach(), out=out) is out
    assert complex(out.item()) == pytest.approx(complex(want.item()), rel=1e-12)
    g = 0.5 - 2j
    e_grads = ember.autograd.grad(ember.vdot(ea, eb), [ea, eb], ember.tensor(g))
    t_grads = torch.autograd.grad(want, [ta, tb], torch.tensor(g, dtype=torch.complex128))
    for e, w in zip(e_grads, t_grads, strict=True):
        np.testing.assert_allclose(e.numpy(), w.numpy(), rtol=1e-12)
    np.testing.assert_allclose(e_grads[0].numpy(), np.conj(g) * b, rtol=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "error", "words"),
    [
        ((2, 2), (2, 2), RuntimeError, ["vdot", "1D tensors expected", "[2, 2]", "flatten"]),
        ((2,), (3,), RuntimeError, ["vdot", "inconsistent tensor size", "[2]", "[3]"]),
        ((2,), (2,), RuntimeError, ["vdot", "same dtype", "Float and Double", ".to("]),
        ((0,), (0,), NotImplementedError, ['"vdot"', "'Bool'", ".int()"]),
    ],
)
def test_vdot_errors_name_op_shapes_and_fix(
    a: tuple[int, ...], b: tuple[int, ...], error: type[Exception], words: list[str]
) -> None:
    """PyTorch's checks (1-D, one dtype, one length, no bool even when empty), in ember's
    words; PyTorch raises the same type, on CPU and Meta alike."""
    torch = pytest.importorskip("torch")
    dts = {"same dtype": ("float32", "float64"), "'Bool'": ("bool", "bool")}
    da, db = next((v for k, v in dts.items() if k in words), ("float32", "float32"))
    for device in ("cpu", "meta"):
        if device == "meta" and error is NotImplementedError:
            continue  # PyTorch's Meta kernel does not look at the dtype; ember's refuses it
        x = ember.ones(a, dtype=getattr(ember, da), device=device)
        y = ember.ones(b, dtype=getattr(ember, db), device=device)
        with pytest.raises(error) as caught:
            ember.vdot(x, y)
        assert all(w in str(caught.value) for w in words), caught.value
        tx = torch.ones(a, dtype=getattr(torch, da), device=device)
        with pytest.raises(error):
            torch.vdot(tx, torch.ones(b, dtype=getattr(torch, db), device=device))
