"""``scaled_dot_product_attention`` runs PyTorch's fused CPU op exactly when PyTorch's CPU
build does (NOTE [attention on CPU]): the ops a dispatch mode sees are compared with
PyTorch's for each case, and the fused op's values and gradients with PyTorch's."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

FUSED = "_scaled_dot_product_flash_attention_for_cpu.default"


def _r(lib: Any, *shape: int, seed: int = 0, **kw: Any) -> Any:
    a = np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)
    t = lib.from_numpy(a)
    return t.requires_grad_() if kw.get("requires_grad") else t


#: name -> (shapes of q, k, v, keyword arguments as a function of the library)
CASES: dict[str, Any] = {
    "plain": ((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), lambda lib: {}),
    "dropout": ((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), lambda lib: {"dropout_p": 0.1}),
    "causal": ((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), lambda lib: {"is_causal": True}),
    "bool mask": (
        (2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8),
        lambda lib: {"attn_mask": _r(lib, 5, 6) > 0},
    ),
    "float 4-d mask": (
        (2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), lambda lib: {"attn_mask": _r(lib, 2, 1, 5, 6)},
    ),
    "3-d mask": (
        (2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), lambda lib: {"attn_mask": _r(lib, 4, 5, 6)},
    ),
    "mask needing grad": (
        (2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8),
        lambda lib: {"attn_mask": _r(lib, 5, 6, requires_grad=True)},
    ),
    "3-d inputs": ((4, 5, 8), (4, 6, 8), (4, 6, 8), lambda lib: {}),
    "value head dim differs": ((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 3), lambda lib: {}),
    "gqa": ((2, 4, 5, 8), (2, 2, 6, 8), (2, 2, 6, 8), lambda lib: {"enable_gqa": True}),
    "scale": ((2, 4, 5, 8), (2, 4, 6, 8), (2, 4, 6, 8), lambda lib: {"scale": 0.3}),
}  # fmt: skip


def _ops(lib: Any, case: str, backward: bool) -> list[str]:
    mode = importlib.import_module(f"{lib.__name__}.utils._python_dispatch").TorchDispatchMode
    qs, ks, vs, kwargs = CASES[case]
    q, k, v = (_r(lib, *s, requires_grad=backward) for s in (qs, ks, vs))
    kw = kwargs(lib)
    seen: list[str] = []

    class Log(mode):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Log():
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
        if backward:
            out.sum().backward()
    return seen


@pytest.mark.parametrize("case", list(CASES))
def test_choice_matches_torch(case: str) -> None:
    """Fused op or math, as PyTorch chooses; either way PyTorch's forward ops (the math
    path's: mul.Scalar of query and key, bmm, add, _safe_softmax, dropout's ops)."""
    ours, theirs = _ops(ember, case, False), _ops(torch, case, False)
    assert (FUSED in ours) == (FUSED in theirs)
    assert ours == theirs


@pytest.mark.parametrize("case", ["plain", "causal", "bool mask", "gqa"])
def test_fused_backward_ops_match_torch(case: str) -> None:
    """Forward and backward give PyTorch's ops up to the leaves' first gradients, which
    PyTorch copies into the leaves' layout with new_empty_strided + copy_ and ember with a
    clone (ember has no new_empty_strided yet; docs/fidelity.md)."""
    ours, theirs = _ops(ember, case, True), _ops(torch, case, True)
    cut = theirs.index(FUSED.replace(".default", "_backward.default")) + 1
    assert ours[:cut] == theirs[:cut]
    assert ours[cut:] == ["clone.default"] * 3
    assert theirs[cut:] == ["new_empty_strided.default", "copy_.default"] * 3


@pytest.mark.parametrize("case", ["plain", "causal", "bool mask", "gqa", "float 4-d mask"])
def test_fused_values_and_gradients_match_torch(case: str) -> None:
    qs, ks, vs, kwargs = CASES[case]
    res = []
    for lib in (ember, torch):
        q, k, v = (_r(lib, *s, requires_grad=True) for s in (qs, ks, vs))
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs(lib))
        (out * out).sum().backward()
        res.append([t.detach().numpy() for t in (out, q.grad, k.grad, v.grad)])
    for a, b in zip(*res, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_fused_op_refuses_dropout() -> None:
    q = ember.ones(1, 1, 2, 4)
    with pytest.raises(RuntimeError, match="do not support dropout > 0"):
        ember.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, q, q, 0.5)
