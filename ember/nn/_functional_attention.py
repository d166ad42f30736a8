"""``multi_head_attention_forward`` of ``ember.nn.functional`` (re-exported there), as PyTorch's:
the same shape checks, mask canonicalization (bool masks become additive -inf masks), the
``is_causal`` hint, ``bias_k``/``bias_v``, ``add_zero_attn``, ``static_k``/``static_v``, and
the two paths: explicit weights (``need_weights=True``) or ``scaled_dot_product_attention``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ember._tensor import Tensor
from ember.dtypes import bool_
from ember.nn.functional import dropout, linear, scaled_dot_product_attention
from ember.ops.registry import ops
from ember.overrides import python_route

aten = ops.aten

__all__ = ["multi_head_attention_forward"]


def query_is_batched(query: Tensor) -> bool:
    """Whether an attention ``query`` is batched (3-D) or not (2-D); AssertionError, as
    PyTorch's, for any other rank."""
    if query.dim() not in (2, 3):
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{query.dim()}-D query tensor"
        )
    return query.dim() == 3


def _mha_shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Whether the inputs are batched; AssertionError (as PyTorch) for inconsistent ranks."""
    batched = query_is_batched(query)
    rank = query.dim()
    which = f"{'batched' if batched else 'unbatched'} ({rank}-D) `query`"
    if key.dim() != rank or value.dim() != rank:
        raise AssertionError(
            f"For {which}, expected `key` and `value` to be {rank}-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != rank - 1:
        raise AssertionError(
            f"For {which}, expected `key_padding_mask` to be `None` or {rank - 1}-D "
            f"but found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {which}, expected `attn_mask` to be `None`, 2-D or 3-D "
                f"but found {attn_mask.dim()}-D tensor instead"
            )
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(
                f"Expected `attn_mask` shape to be {expected} but got {tuple(attn_mask.shape)}"
            )
    return batched


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    """A bool mask as an additive float mask of ``target_type`` (-inf where True)."""
    if mask is None:
        return None
    floating = mask.dtype.is_floating_point
    if mask.dtype is not bool_ and not floating:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type "
            "for both instead.",
            stacklevel=3,
        )
    if floating:
        return mask
    zeros = aten.zeros.default(list(mask.shape), dtype=target_type, device=mask.device)
    return zeros.masked_fill(mask, float("-inf"))  # type: ignore[no-any-return]


def _in_projection_packed(
    q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v through the packed ``(3E, E)`` projection: one matmul for self-attention."""
    e = q.shape[-1]
    if k is v:
        # the packed result split as PyTorch's (unflatten, then one contiguous copy with
        # q, k and v leading), so a dispatch mode sees its ops
        if q is k:
            qkv = _split_packed(linear(q, w, b), 3, e)
            return qkv[0], qkv[1], qkv[2]
        w_q, w_kv = w.split([e, 2 * e])
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])
        q_proj = linear(q, w_q, b_q)
        kv = _split_packed(linear(k, w_kv, b_kv), 2, e)
        return q_proj, kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _split_packed(proj: Tensor, n: int, e: int) -> Tensor:
    """``(..., n * E)`` → ``(n, ..., E)``, contiguous."""
    return proj.unflatten(-1, (n, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()


def _heads(t: Tensor, length: int, bsz_heads: int, head_dim: int) -> Tensor:
    """``(L, N, E)`` → ``(N * H, L, D)``."""
    return t.reshape(length, bsz_heads, head_dim).transpose(0, 1)


@python_route(
    "query", "key", "value", "in_proj_weight", "in_proj_bias", "bias_k", "bias_v",
    "out_proj_weight", "out_proj_bias", "key_padding_mask", "attn_mask", "q_proj_weight",
    "k_proj_weight", "v_proj_weight", "static_k", "static_v",
)  # fmt: skip
def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first ``(L, N, E)`` (or unbatched ``(L, E)``) inputs;
    returns the output and, with ``need_weights``, the attention weights.

    >>> import ember.nn.functional as F
    >>> w, o = ember.ones(12, 4), ember.ones(4, 4)
    >>> q, kv = ember.ones(2, 1, 4), ember.ones(3, 1, 4)
    >>> F.multi_head_attention_forward(q, kv, kv,
    ...     4, 2, w, None, None, None, False, 0.0, o, None)[0].shape
    ember.Size([2, 1, 4])
    """
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        same_kv, same_qk = key is value, query is key
        query = query.unsqueeze(1)
        key = query if same_qk else key.unsqueeze(1)
        value = key if same_kv else value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask",
        None if attn_mask is None else attn_mask.dtype, "attn_mask", query.dtype,
    )  # fmt: skip
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint stands for the mask: SDPA applies it
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                f"{tuple(value.shape[:2])}"
            )
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but a projection is None")
        bq, bk, bv = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q = linear(query, q_proj_weight, bq)
        k = linear(key, k_proj_weight, bk)
        v = linear(value, v_proj_weight, bv)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(
                f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"
            )
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            want = (bsz * num_heads, tgt_len, src_len)
            if tuple(attn_mask.shape) != want:
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                    f"{want}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    pad = aten.constant_pad_nd.default
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value.")
        k = aten.cat.default([k, bias_k.repeat(1, bsz, 1)])
        v = aten.cat.default([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, [0, 1])
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, [0, 1])
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must be given together")
    heads = bsz * num_heads
    q = _heads(q, tgt_len, heads, head_dim)
    for name, static in (("static_k", static_k), ("static_v", static_v)):
        if static is not None and (static.shape[0] != heads or static.shape[2] != head_dim):
            raise AssertionError(
                f"expecting {name} of shape ({heads}, *, {head_dim}), got {tuple(static.shape)}"
            )
    k = _heads(k, k.shape[0], heads, head_dim) if static_k is None else static_k
    v = _heads(v, v.shape[0], heads, head_dim) if static_v is None else static_v
    if add_zero_attn:
        zeros = aten.zeros.default([heads, 1, head_dim], dtype=k.dtype, device=k.device)
        k = aten.cat.default([k, zeros], 1)
        v = aten.cat.default([v, zeros], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, [0, 1])
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, [0, 1])
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                f"{tuple(key_padding_mask.shape)}"
            )
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        scores = q_scaled.bmm(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.bmm(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            return out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    return (out if batched else out.squeeze(1)), None
