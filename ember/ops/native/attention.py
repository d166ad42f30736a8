"""PyTorch's fused CPU attention op and its backward (issue 18), and the test
``scaled_dot_product_attention`` runs to choose it over the math composition.

# NOTE [attention on CPU]
PyTorch's ``scaled_dot_product_attention`` on CPU runs one op,
``_scaled_dot_product_flash_attention_for_cpu`` (its backward one
``_scaled_dot_product_flash_attention_for_cpu_backward``), when ``flash_applies`` holds
(PyTorch's ``use_flash_attention_cpp``: 4-D query/key/value of one batch size and head
dim, equal head counts or ``enable_gqa`` groups, no dropout, a 2-D or broadcastable 4-D mask
that needs no gradient, non-empty sequences, unit last strides, a floating dtype), and the
math composition otherwise; a boolean mask is first made additive by ``where(mask, 0,
-inf)``. So a dispatch mode counts PyTorch's ops. The fused op's ``output`` has the query's
layout and its ``logsumexp`` (``(B, H, L)``, float32 for half inputs) and the backward's
gradients are laid out ``(B, L, H, D)`` and transposed, as PyTorch's; a query row whose
keys are all masked out gives 0 and a logsumexp of 0.

>>> q = ember.ones(1, 2, 3, 4)
>>> out, lse = ember.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, q, q)
>>> out.shape, lse.shape
(ember.Size([1, 2, 3, 4]), ember.Size([1, 2, 3]))
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember.ops.native._define import define
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_OPTS = "*, Tensor? attn_mask=None, float? scale=None"
define(
    "_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, "
    f"float dropout_p=0.0, bool is_causal=False, {_OPTS}) -> (Tensor output, Tensor logsumexp)",
    variants=("function",),
)
define(
    "_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, "
    "Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, "
    f"{_OPTS}) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)",
    variants=(),
)

# softmax whose rows of -inf only give 0, not NaN: the math path's softmax (PyTorch's)
define("_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", variants=())

_FLASH_DTYPES = frozenset(
    d  # bfloat16 only with the ml_dtypes extra
    for d in (dtypes.float32, dtypes.float64, dtypes.float16, getattr(dtypes, "bfloat16", None))
    if d is not None
)


def _mask_fits(mask: Tensor, b: int, h: int, lq: int, lk: int) -> bool:
    """PyTorch's ``check_attn_mask_shape``: a 2-D ``(L or 1, S or 1)`` mask, or a 4-D one
    whose leading sizes are the batch's and heads' or 1; not one that needs a gradient."""
    if mask.requires_grad or mask.ndim not in (2, 4):
        return False
    if mask.shape[-2] not in (lq, 1) or mask.shape[-1] not in (lk, 1):
        return False
    return mask.ndim == 2 or (mask.shape[0] in (1, b) and mask.shape[1] in (1, h))


def flash_applies(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float, gqa: bool
) -> bool:
    """Whether PyTorch's CPU ``scaled_dot_product_attention`` runs its fused op for these
    arguments (NOTE [attention on CPU])."""
    if dropout_p > 0.0 or not q.ndim == k.ndim == v.ndim == 4:
        return False
    if q.dtype not in _FLASH_DTYPES or not q.dtype is k.dtype is v.dtype:
        return False
    b, h, lq, d = q.shape
    if k.shape[0] != b or v.shape[0] != b or k.shape[-1] != d or v.shape[-1] != d:
        return False
    kh = k.shape[1]
    if v.shape[1] != kh or (kh != h and not (gqa and kh and h % kh == 0)):
        return False
    if lq == 0 or k.shape[2] == 0 or any(t.stride(-1) != 1 for t in (q, k, v)):
        return False
    return mask is None or _mask_fits(mask, b, h, lq, k.shape[2])


def check_flash(q: Tensor, k: Tensor, v: Tensor, dropout_p: float) -> None:
    """The fused op's own checks, shared by its CPU kernel and Meta rule."""
    if dropout_p > 0.0:
        raise RuntimeError(
            "scaled_dot_product_attention_flash_attention: Currently do not support dropout > 0"
        )
    if not q.ndim == k.ndim == v.ndim == 4:
        raise RuntimeError(
            "_scaled_dot_product_flash_attention_for_cpu: query, key and value must be 4-D "
            f"(batch, heads, length, head dim), got {tuple(q.shape)}, {tuple(k.shape)} and "
            f"{tuple(v.shape)}"
        )
    if not q.dtype is k.dtype is v.dtype or q.dtype not in _FLASH_DTYPES:
        raise RuntimeError(
            "_scaled_dot_product_flash_attention_for_cpu: query, key and value must have one "
            f"floating dtype, got {q.dtype}, {k.dtype} and {v.dtype}"
        )
    kh = k.shape[1]
    if k.shape[0] != q.shape[0] or kh == 0 or q.shape[1] % kh or v.shape[:3] != k.shape[:3]:
        raise RuntimeError(
            "_scaled_dot_product_flash_attention_for_cpu: key and value must have the query's "
            "batch size and a head count dividing its own, got query "
            f"{tuple(q.shape)}, key {tuple(k.shape)}, value {tuple(v.shape)}"
        )


def lse_dtype(q: Tensor) -> Any:
    """The logsumexp's dtype: float32 for half inputs (PyTorch's accumulate type)."""
    return dtypes.float32 if q.dtype.np.itemsize == 2 else q.dtype  # float16, bfloat16


def transposed_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides of a ``(B, H, L, ...)`` tensor stored as ``(B, L, H, ...)`` (PyTorch's
    ``empty({B, L, H, ...}).transpose(1, 2)``)."""
    b, h, n, *rest = shape
    inner = 1
    for r in rest:
        inner *= max(r, 1)
    return (n * h * inner, inner, h * inner, *([1] if rest else []))


aten = ops.aten


@impl(aten._safe_softmax.default, "CompositeExplicitAutograd")
def _safe_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``softmax`` over ``dim``, a slice whose every score is -inf giving 0 (a query row
    whose keys are all masked out attends to nothing), as PyTorch's."""
    x = self if dtype is None else aten._to_copy.default(self, dtype=dtype)
    out = aten._softmax.default(x, dim, False)
    dead = aten.all.dim(aten.eq.Scalar(x, -math.inf), dim, True)
    return aten.where.self(dead, aten.scalar_tensor.default(0.0, dtype=out.dtype), out)  # type: ignore[no-any-return]
