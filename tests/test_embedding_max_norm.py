"""``F.embedding(max_norm=)`` / ``nn.Embedding(max_norm=)``: the looked-up rows of the weight
are renormalised in place by ``aten.embedding_renorm_`` (outside autograd), then read by
``aten.embedding``, as on PyTorch. Values, gradients and the weight after the call are
compared with PyTorch; a logging dispatch mode sees PyTorch's op list."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.utils._python_dispatch import TorchDispatchMode

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")

NORMS = (2.0, 1.0, float("inf"), 3.0, 0.5)
INDICES = ([[0, 5, 2], [2, 2, 1]], [3, 3, 3, 0], [4], [[1]])


def _weight(seed: int = 0, shape: tuple[int, int] = (6, 4)) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, shape)


@pytest.mark.parametrize("norm_type", NORMS)
@pytest.mark.parametrize("indices", INDICES, ids=str)
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_values_gradients_and_weight_match_torch(
    norm_type: float, indices: Any, dtype: str
) -> None:
    w0 = _weight().astype(dtype)
    idx = np.asarray(indices, np.int64)
    g = np.random.default_rng(1).standard_normal((*idx.shape, 4)).astype(dtype)
    ew = ember.tensor(w0, requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    ey = F.embedding(ember.tensor(idx), ew, max_norm=1.5, norm_type=norm_type)
    ty = torch.nn.functional.embedding(torch.tensor(idx), tw, max_norm=1.5, norm_type=norm_type)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ew.detach().numpy(), tw.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=tol, atol=tol)
    too_long = np.linalg.norm(w0[idx.reshape(-1)], ord=norm_type, axis=-1) > 1.5
    assert np.array_equal(ew.detach().numpy(), w0) == (not too_long.any())


def test_repeated_index_is_renormalised_once() -> None:
    w0 = np.array([[3.0, 4.0], [0.3, 0.4]])
    w = ember.tensor(w0)
    F.embedding(ember.tensor([0, 0, 0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(w.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    tw = torch.tensor(w0)
    torch.nn.functional.embedding(torch.tensor([0, 0, 0, 1]), tw, max_norm=1.0)
    np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-12)


def test_module_max_norm_and_padding_idx_match_torch() -> None:
    ember.manual_seed(0)
    torch.manual_seed(0)
    em = ember.nn.Embedding(7, 3, max_norm=0.5, norm_type=1.0, padding_idx=2)
    tm = torch.nn.Embedding(7, 3, max_norm=0.5, norm_type=1.0, padding_idx=2)
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(em.weight.detach().numpy()))
    idx = np.array([[2, 0, 6], [6, 6, 1]])
    ey, ty = em(ember.tensor(idx)), tm(torch.tensor(idx))
    (ey * ey).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-6)
    assert "max_norm=0.5" in repr(em)


def test_renorm_bumps_the_version_and_stays_out_of_autograd() -> None:
    w = ember.tensor(_weight(), requires_grad=True)  # a leaf: an in-place op on it would raise
    v = w._version
    y = F.embedding(ember.tensor([0, 1]), w, max_norm=0.1)
    assert w._version > v
    assert y.grad_fn is not None and "Embedding" in type(y.grad_fn).__name__
    assert w.grad_fn is None


class _Log(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def _torch_ops(fn: Any) -> list[str]:
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    class Log(TorchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: list[str] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log() as log:
        fn()
    return log.ops


@pytest.mark.parametrize("transposed", (False, True), ids=("contiguous", "transposed indices"))
def test_dispatch_mode_sees_torchs_ops(transposed: bool) -> None:
    idx = np.array([[0, 1], [1, 4]])

    def run(lib: Any, w: Any) -> None:
        i = lib.tensor(idx)
        y = lib.nn.functional.embedding(i.t() if transposed else i, w, max_norm=1.0)
        y.sum().backward()

    ew = ember.tensor(_weight(shape=(5, 3)), requires_grad=True)
    tw = torch.tensor(_weight(shape=(5, 3)), requires_grad=True)
    with _Log() as log:
        run(ember, ew)
    expected = _torch_ops(lambda: run(torch, tw))
    assert "aten.embedding_renorm_.default" in expected
    assert log.ops == expected


def test_embedding_renorm_is_a_function_like_torchs() -> None:
    assert hasattr(ember, "embedding_renorm_") and not hasattr(ember.Tensor, "embedding_renorm_")
    w0 = _weight()
    ew, tw = ember.tensor(w0), torch.tensor(w0)
    er = ember.embedding_renorm_(ew, ember.tensor([[1, 1], [-1, 0]]), 1.0, float("inf"))
    tr = torch.embedding_renorm_(tw, torch.tensor([[1, 1], [-1, 0]]), 1.0, float("inf"))
    assert er is ew and tr is tw
    np.testing.assert_allclose(ew.numpy(), tw.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    ("weight", "indices", "error", "words"),
    [
        ((6,), [0], RuntimeError, ("embedding_renorm_", "2-D", "[6]")),
        ((6, 4), [6], IndexError, ("embedding_renorm_", "6", "[6, 4]")),
        ((6, 4), [-7], IndexError, ("embedding_renorm_", "-7")),
    ],
)
def test_bad_input_names_the_op(weight: Any, indices: Any, error: Any, words: Any) -> None:
    with pytest.raises(error) as e:
        F.embedding(ember.tensor(indices), ember.ones(weight), max_norm=1.0)
    for word in words:
        assert word in str(e.value)


def test_float_indices_and_integer_weight_raise() -> None:
    with pytest.raises(RuntimeError, match="embedding_renorm_.*Long, Int"):
        ember.embedding_renorm_(ember.ones(3, 2), ember.tensor([0.0]), 1.0, 2.0)
    with pytest.raises(RuntimeError, match="embedding_renorm_.*floating point"):
        ember.embedding_renorm_(ember.ones(3, 2, dtype=ember.int64), ember.tensor([0]), 1.0, 2.0)


def test_embedding_bag_max_norm_matches_torch() -> None:
    w0 = _weight()
    ew, tw = ember.tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    idx, off = [1, 2, 4, 5, 4, 3], [0, 2]
    ey = F.embedding_bag(ember.tensor(idx), ew, ember.tensor(off), max_norm=1.0, mode="sum")
    ty = torch.nn.functional.embedding_bag(
        torch.tensor(idx), tw, torch.tensor(off), max_norm=1.0, mode="sum"
    )
    ey.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ew.detach().numpy(), tw.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=1e-12)
