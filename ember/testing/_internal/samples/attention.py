"""Sample inputs for PyTorch's fused CPU attention op and its backward (see opinfo.py and
NOTE [attention on CPU] in ember/ops/native/attention.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import SampleInput, samples

F32_64 = (dtypes.float32, dtypes.float64)


def _qkv(make: Any, kv_heads: int = 3) -> tuple[Any, Any, Any]:
    return (
        make((2, 3, 4, 8), low=-1, high=1),
        make((2, kv_heads, 5, 8), low=-1, high=1),
        make((2, kv_heads, 5, 8)),
    )


@samples("_scaled_dot_product_flash_attention_for_cpu.default", dtypes=F32_64, atol=1e-5,
         rtol=1e-5)  # fmt: skip
def flash_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    q, k, v = _qkv(make)
    yield SampleInput(q, k, v)
    yield SampleInput(q, k, v, scale=0.3)
    yield SampleInput(q, k, v, is_causal=True, name="causal, top-left aligned")
    yield SampleInput(q, k, v, attn_mask=make((4, 5), low=-1, high=1), name="2-d mask")
    yield SampleInput(q, k, v, attn_mask=make((2, 1, 1, 5), low=-1, high=1), name="4-d mask")
    dead = ember.zeros(4, 5, dtype=dtype)
    dead[1] = float("-inf")
    yield SampleInput(q, k, v, attn_mask=dead, name="a row with every key masked: zeros")
    yield SampleInput(q, *_qkv(make, 1)[1:], name="grouped heads")
    qt = make((2, 4, 3, 8)).transpose(1, 2)
    yield SampleInput(qt, k, v, name="query laid out (B, L, H, D): so is the output")
    yield SampleInput(q, k, v, 0.1, name="dropout raises")
    yield SampleInput(make((3, 4, 8)), make((3, 5, 8)), make((3, 5, 8)), name="3-d raises")


@samples("_scaled_dot_product_flash_attention_for_cpu_backward.default", dtypes=F32_64,
         atol=1e-5, rtol=1e-5)  # fmt: skip
def flash_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    op = ember.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    for kv_heads, causal, mask in ((3, False, None), (3, True, None), (1, False, "mask")):
        q, k, v = _qkv(make, kv_heads)
        m = None if mask is None else make((4, 5), low=-1, high=1)
        out, lse = op(q, k, v, 0.0, causal, attn_mask=m)
        go = make(tuple(out.shape))
        yield SampleInput(go, q, k, v, out, lse, 0.0, causal, attn_mask=m)


@samples("_safe_softmax.default", dtypes=F32_64, atol=1e-6, rtol=1e-6)
def safe_softmax_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 5), low=-2, high=2)
    yield SampleInput(x, -1)
    yield SampleInput(x, 0)
    dead = make((3, 5))
    dead[1] = float("-inf")
    yield SampleInput(dead, -1, name="a row of -inf only: zeros")
    yield SampleInput(make((2, 3, 4), noncontiguous=True), 1)
