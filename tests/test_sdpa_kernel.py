"""``nn.attention.sdpa_kernel`` and ``SDPBackend``: which kernel
``scaled_dot_product_attention`` runs on the cpu (the fused op or the math composition) for
each allowed set, the ops a dispatch mode sees, the values, the refusal when no allowed
kernel takes the call, and the switches restored after the block, against PyTorch's."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember
from ember.utils._python_dispatch import TorchDispatchMode
from tests.conftest import requires_torch, torch

pytestmark = requires_torch

SETS = ["MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", ["MATH", "FLASH_ATTENTION"], []]
SHAPES = [(1, 2, 4, 8), (2, 4, 8)]  # 4-D: the fused op applies; 3-D: only the math path


def _run(lib: Any, mode_base: type, backends: Any, shape: tuple[int, ...]) -> Any:
    att = __import__(f"{lib.__name__}.nn.attention", fromlist=["SDPBackend"])
    chosen = (
        getattr(att.SDPBackend, backends)
        if isinstance(backends, str)
        else [getattr(att.SDPBackend, b) for b in backends]
    )
    q = lib.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    ops: list[str] = []

    class Log(mode_base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            ops.append(str(func))
            return func(*args, **(kwargs or {}))

    try:
        with att.sdpa_kernel(chosen), Log():
            out = lib.nn.functional.scaled_dot_product_attention(q, q, q)
    except RuntimeError:
        return "refused", lib.backends.cuda.flash_sdp_enabled()
    return ops, out.numpy(), lib.backends.cuda.flash_sdp_enabled()


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("backends", SETS, ids=str)
def test_the_kernel_chosen_matches_torch(backends: Any, shape: tuple[int, ...]) -> None:
    ours = _run(ember, TorchDispatchMode, backends, shape)
    with warnings.catch_warnings():  # torch's own notes on why its fused kernel is not used
        warnings.simplefilter("ignore")
        theirs = _run(torch, torch.utils._python_dispatch.TorchDispatchMode, backends, shape)
    assert ours[0] == theirs[0]  # the same ops, or both refuse
    assert ours[-1] is theirs[-1] is True  # the switches are back after the block
    if ours[0] != "refused":
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)


def test_refusals_name_the_fix() -> None:
    from ember.nn.attention import SDPBackend, sdpa_kernel

    with pytest.raises(AssertionError, match="instance of SDPBackend"):
        with sdpa_kernel("math"):  # type: ignore[arg-type]
            pass
    q = ember.ones(1, 1, 2, 2)
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        with pytest.raises(RuntimeError, match="allow SDPBackend.MATH"):
            ember.nn.functional.scaled_dot_product_attention(q, q, q)
    assert ember.backends.cuda.math_sdp_enabled()
