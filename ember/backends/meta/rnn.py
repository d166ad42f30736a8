"""Meta rules of the fused LSTM layer and its backward, from the checks the CPU kernels run
(the geometry functions in ``ember/ops/native/nn_geometry.py``)."""

from __future__ import annotations

from ember.backends.meta._derive import meta_rule
from ember.ops.native import nn_geometry
from ember.ops.registry import ops

aten = ops.aten

meta_rule(aten.mkldnn_rnn_layer.default, nn_geometry.mkldnn_rnn_layer)
meta_rule(aten.mkldnn_rnn_layer_backward.default, nn_geometry.mkldnn_rnn_layer_backward)
