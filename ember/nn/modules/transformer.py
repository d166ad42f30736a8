"""``Transformer``, ``TransformerEncoder``/``Decoder`` and their layers, as PyTorch's: the same
submodules and parameter names (so state_dicts load across libraries), post-norm or
``norm_first``, masks (bool or additive float, attention and key padding) and the causal
hint, all built on ``MultiheadAttention``.

PyTorch's inference fast path (a fused kernel, and nested tensors that give padded positions
zeros in eval mode with ``src_key_padding_mask``) is not reproduced: ember always runs the
layers as written, which is what PyTorch computes in training and whenever grad is needed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn._functional_attention import _canonical_mask
from ember.nn.init import xavier_uniform_
from ember.nn.modules.activation import MultiheadAttention
from ember.nn.modules.container import ModuleList
from ember.nn.modules.dropout import Dropout
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]

Activation = str | Callable[[Tensor], Tensor]


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """The ``(sz, sz)`` additive causal mask: -inf above the diagonal, 0 elsewhere."""
    dtype = ember.get_default_dtype() if dtype is None else dtype
    return ember.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)


def _activation(activation: Activation) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if isinstance(activation, str):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _seq_len(src: Tensor, batch_first: bool) -> int | None:
    if src.dim() == 2:  # unbatched: (S, E)
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(
    mask: Tensor | None, is_causal: bool | None = None, size: int | None = None
) -> bool:
    """``is_causal`` if given, else whether ``mask`` is the causal mask (PyTorch's rule)."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.shape[-2]
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    if tuple(mask.shape) != tuple(causal.shape):
        return False
    return bool((mask == causal).all())


def _clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _canonical_pair(
    mask: Tensor | None, padding: Tensor | None, names: tuple[str, str], dtype: Any
) -> tuple[Tensor | None, Tensor | None]:
    """Both masks made additive float masks of ``dtype`` (bool: -inf where True)."""
    padding = _canonical_mask(
        padding, names[1], None if mask is None else mask.dtype, names[0], dtype
    )
    mask = _canonical_mask(mask, names[0], None, "", dtype, check_other=False)
    return mask, padding


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: PyTorch's constructor, which makes their
    submodules in PyTorch's order (so parameters, state_dict keys and a seeded
    initialization match): self-attention, with ``_cross_attention`` (the decoder) the
    attention over the encoder's output (``multihead_attn``), the feed-forward block
    (``linear1``, ``dropout``, ``linear2``), then a norm and a dropout per sub-layer; and the
    attention and feed-forward blocks."""

    _cross_attention = False

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        cross = self._cross_attention
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        if cross:
            self.multihead_attn = MultiheadAttention(
                d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw
            )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        if cross:
            self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if cross:
            self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)
        if not cross:  # PyTorch's encoder layer records which of its fast-path activations
            fn = self.activation
            self.activation_relu_or_gelu = 1 if fn is F.relu else 2 if fn is F.gelu else 0

    def _attention_block(
        self,
        attn: Module,
        dropout: Module,
        x: Tensor,
        mem: Tensor,
        mask: Tensor | None,
        padding: Tensor | None,
        is_causal: bool,
    ) -> Tensor:
        """``attn`` of ``x`` over ``mem`` (keys and values), then ``dropout``."""
        x = attn(
            x, mem, mem, attn_mask=mask, key_padding_mask=padding, need_weights=False,
            is_causal=is_causal,
        )[0]  # fmt: skip
        return dropout(x)  # type: ignore[no-any-return]

    def _sa_block(
        self, x: Tensor, mask: Tensor | None, padding: Tensor | None, is_causal: bool
    ) -> Tensor:
        """Self-attention over ``x`` and its dropout."""
        return self._attention_block(self.self_attn, self.dropout1, x, x, mask, padding, is_causal)

    def _ff_block(self, x: Tensor) -> Tensor:
        """The feed-forward block and its dropout (the layer's last)."""
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        last = self.dropout3 if self._cross_attention else self.dropout2
        return last(x)  # type: ignore[no-any-return]


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then a feed-forward block, each with a residual connection and layer
    norm (after, or before with ``norm_first``).

    >>> layer = ember.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    >>> layer(ember.ones(2, 5, 8)).shape
    ember.Size([2, 5, 8])
    """

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        src_mask, src_key_padding_mask = _canonical_pair(
            src_mask, src_key_padding_mask, ("src_mask", "src_key_padding_mask"), src.dtype
        )
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, attention over the encoder's output (``memory``), then a feed-forward
    block, each with a residual connection and layer norm.

    >>> layer = ember.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    >>> layer(ember.ones(4, 2, 8), ember.ones(6, 2, 8)).shape
    ember.Size([4, 2, 8])
    """

    _cross_attention = True

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            )  # fmt: skip
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(
        self, x: Tensor, mem: Tensor, mask: Tensor | None, padding: Tensor | None, is_causal: bool
    ) -> Tensor:
        """Attention of ``x`` over the encoder's output ``mem``, and its dropout."""
        return self._attention_block(
            self.multihead_attn, self.dropout2, x, mem, mask, padding, is_causal
        )


class _LayerStack(Module):
    """What ``TransformerEncoder`` and ``TransformerDecoder`` share: ``num_layers`` deep
    copies of a layer, an optional final norm, and running an input through them."""

    def __init__(self, layer: Module, num_layers: int, norm: Module | None) -> None:
        super().__init__()
        self.layers = _clones(layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def _is_causal(self, mask: Tensor | None, is_causal: bool | None, x: Tensor) -> bool:
        """``is_causal`` if given, else whether ``mask`` is the causal mask of ``x``'s sequence
        length (read with the first layer's ``batch_first``)."""
        first = self.layers[0]
        batch_first = first.self_attn.batch_first if hasattr(first, "self_attn") else False
        return _detect_is_causal_mask(mask, is_causal, _seq_len(x, batch_first))

    def _run(self, x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        """``x`` through every layer (``layer(x, *args, **kwargs)``), then the norm if any."""
        for mod in self.layers:
            x = mod(x, *args, **kwargs)
        if self.norm is not None:
            x = self.norm(x)
        return x


class TransformerEncoder(_LayerStack):
    """``num_layers`` copies of an encoder layer, then an optional norm.

    >>> layer = ember.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    >>> ember.nn.TransformerEncoder(layer, 2)(ember.ones(5, 2, 8)).shape
    ember.Size([5, 2, 8])
    """

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__(encoder_layer, num_layers, norm)
        self.enable_nested_tensor = enable_nested_tensor  # accepted; ember has no nested tensors
        self.use_nested_tensor = False
        self.mask_check = mask_check

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        mask, src_key_padding_mask = _canonical_pair(
            mask, src_key_padding_mask, ("mask", "src_key_padding_mask"), src.dtype
        )
        causal = self._is_causal(mask, is_causal, src)
        return self._run(
            src, src_mask=mask, is_causal=causal, src_key_padding_mask=src_key_padding_mask
        )


class TransformerDecoder(_LayerStack):
    """``num_layers`` copies of a decoder layer, then an optional norm.

    >>> layer = ember.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    >>> ember.nn.TransformerDecoder(layer, 2)(ember.ones(4, 2, 8), ember.ones(6, 2, 8)).shape
    ember.Size([4, 2, 8])
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__(decoder_layer, num_layers, norm)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        return self._run(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=self._is_causal(tgt_mask, tgt_is_causal, tgt),
            memory_is_causal=memory_is_causal,
        )


class Transformer(Module):
    """An encoder-decoder transformer (Vaswani et al.) with PyTorch's defaults and layout.

    >>> model = ember.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)
    >>> model(ember.ones(5, 2, 8), ember.ones(4, 2, 8)).shape
    ember.Size([4, 2, 8])
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        common = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                  batch_first, norm_first, bias)  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            enc = TransformerEncoderLayer(*common, **kw)
            enc_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(enc, num_encoder_layers, enc_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            dec = TransformerDecoderLayer(*common, **kw)
            dec_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(dec, num_decoder_layers, dec_norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        batched = src.dim() == 3
        b = 0 if self.batch_first else 1
        if batched and src.shape[b] != tgt.shape[b]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(  # type: ignore[no-any-return]
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The ``(sz, sz)`` causal mask: -inf above the diagonal, 0 elsewhere.

        >>> ember.nn.Transformer.generate_square_subsequent_mask(2)
        tensor([[0., -inf],
                [0., 0.]])
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)
