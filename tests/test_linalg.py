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
