"""Meta rules of the fused LSTM layer and its backward, from the checks the CPU kernels run."""

from __future__ import annotations

from collections.abc import Sequence

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype
from ember.library import impl
from ember.ops.native.rnn import check_rnn_layer
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: Sequence[int], d: dtype) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), d.np))


@impl(aten.mkldnn_rnn_layer.default, Meta)
def mkldnn_rnn_layer(
    input: Tensor,
    weight0: Tensor,
    weight1: Tensor,
    weight2: Tensor,
    weight3: Tensor,
    hx_: Tensor,
    cx_: Tensor,
    reverse: bool,
    batch_sizes: Sequence[int],
    mode: int,
    hidden_size: int,
    num_layers: int,
    has_biases: bool,
    bidirectional: bool,
    batch_first: bool,
    train: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    t, b, _, h = check_rnn_layer(
        input, weight0, weight1, hx_, cx_, batch_sizes, mode, hidden_size, batch_first
    )
    d = input.dtype
    out = (b, t, h) if batch_first else (t, b, h)
    return _new(out, d), _new((b, h), d), _new((b, h), d), _new((5 * t * b * h,), d)


@impl(aten.mkldnn_rnn_layer_backward.default, Meta)
def mkldnn_rnn_layer_backward(
    input: Tensor,
    weight1: Tensor,
    weight2: Tensor,
    weight3: Tensor,
    weight4: Tensor,
    hx_: Tensor,
    cx_tmp: Tensor,
    output: Tensor,
    hy_: Tensor,
    cy_: Tensor,
    grad_output: Tensor | None,
    grad_hy: Tensor | None,
    grad_cy: Tensor | None,
    reverse: bool,
    mode: int,
    hidden_size: int,
    num_layers: int,
    has_biases: bool,
    train: bool,
    bidirectional: bool,
    batch_sizes: Sequence[int],
    batch_first: bool,
    workspace: Tensor,
) -> tuple[Tensor, ...]:
    check_rnn_layer(
        input, weight1, weight2, hx_, cx_tmp, batch_sizes, mode, hidden_size, batch_first
    )
    return tuple(
        _new(t.shape, input.dtype) for t in (input, weight1, weight2, weight3, weight4, hx_, cx_tmp)
    )
