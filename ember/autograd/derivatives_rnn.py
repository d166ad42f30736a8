"""Derivative line of the fused LSTM layer (format: ``function_table.py``); the cells and the
multi-layer ops are compositions, differentiated through their parts.

As PyTorch's: the layer's backward op when the backward itself is not recorded, and under
``create_graph`` a differentiable backward, here the layer recomputed step by step with
ember ops and differentiated with ``create_graph`` (PyTorch's
``mkldnn_rnn_layer_differentiable_backward``).
"""

from __future__ import annotations

from typing import Any

from ember.autograd.api import grad
from ember.autograd.function_table import defvjp
from ember.autograd.grad_mode import is_grad_enabled
from ember.ops.native.rnn import Weights, _full_layer, _lstm_step
from ember.ops.registry import ops

aten = ops.aten


def _differentiable(
    g: Any, inputs: tuple[Any, ...], reverse: bool, has_biases: bool, batch_first: bool
) -> tuple[Any, ...]:
    x, w_ih, w_hh, b_ih, b_hh, hx, cx = inputs
    params = [w_ih, w_hh, b_ih, b_hh] if has_biases else [w_ih, w_hh]
    seq = x.transpose(0, 1) if batch_first else x
    out, (h, c) = _full_layer(_lstm_step, seq, (hx, cx), Weights(params, has_biases, False),
                              reverse)  # fmt: skip
    outs = [out.transpose(0, 1) if batch_first else out, h, c]
    pairs = [(o, gi) for o, gi in zip(outs, g[:3], strict=True) if gi is not None]
    wrt = [t for t in inputs if t.requires_grad]
    grads = grad(
        [o for o, _ in pairs], wrt, [gi for _, gi in pairs], create_graph=True, allow_unused=True
    )
    found = dict(zip((id(t) for t in wrt), grads, strict=True))
    return tuple(found.get(id(t)) for t in inputs)


def _mkldnn_rnn_layer(
    g: Any,
    input: Any,  # noqa: A002
    weight0: Any,
    weight1: Any,
    weight2: Any,
    weight3: Any,
    hx_: Any,
    cx_: Any,
    reverse: bool,
    batch_sizes: list[int],
    mode: int,
    hidden_size: int,
    num_layers: int,
    has_biases: bool,
    bidirectional: bool,
    batch_first: bool,
    train: bool,
    *,
    result: Any,
) -> tuple[Any, ...]:
    inputs = (input, weight0, weight1, weight2, weight3, hx_, cx_)
    if is_grad_enabled():
        return _differentiable(g, inputs, reverse, has_biases, batch_first)
    return aten.mkldnn_rnn_layer_backward.default(  # type: ignore[no-any-return]
        input, weight0, weight1, weight2, weight3, hx_, cx_, result[0], result[1], result[2],
        g[0], g[1], g[2], reverse, mode, hidden_size, num_layers, has_biases, train,
        bidirectional, batch_sizes, batch_first, result[3],
    )  # fmt: skip


defvjp(
    aten.mkldnn_rnn_layer.default,
    _mkldnn_rnn_layer,
    outputs=(True, True, True, False),  # the workspace carries no gradient, as in PyTorch
)
