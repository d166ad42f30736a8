"""CPU kernel of a whole LSTM layer, ``mkldnn_rnn_layer``, and its backward.

# NOTE [fused lstm layer]
PyTorch runs a float32 LSTM on the CPU through ``mkldnn_rnn_layer``: one op per layer and
direction, with its own backward, instead of a dozen small ops per time step. ember's kernel
is the same idea in NumPy. The forward multiplies the input by ``W_ih`` for every time step
in one matmul, then per step adds ``h @ W_hh^T`` and applies the gates in place (about a dozen
NumPy calls on ``(B, 4H)`` arrays), keeping the gate activations and cell states in the
workspace ``(T, B, 5H)``: ``[i, f, g, o, c]``. The backward walks the steps in reverse,
forming the gates' gradients ``(T, B, 4H)`` with one matmul by ``W_hh`` per step, then gets
the input's and both weights' gradients from three matmuls over every step at once.
(PyTorch's workspace is an opaque MKL-DNN buffer; ember's is this float tensor.)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.rnn import check_rnn_layer
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU


def _time_major(x: np.ndarray, batch_first: bool) -> np.ndarray:
    return x.transpose(1, 0, 2) if batch_first else x


def _sigmoid_into(src: np.ndarray, dst: np.ndarray) -> None:
    """``dst = sigmoid(src)`` as ``tanh(x / 2) / 2 + 1/2`` (no overflow), four ufunc calls."""
    np.multiply(src, 0.5, out=dst)
    np.tanh(dst, out=dst)
    np.multiply(dst, 0.5, out=dst)
    np.add(dst, 0.5, out=dst)


@impl(aten.mkldnn_rnn_layer.default, CPU)
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
    t_max, b, _, h = check_rnn_layer(
        input, weight0, weight1, hx_, cx_, batch_sizes, mode, hidden_size, batch_first
    )
    dt = input.dtype.np
    x = _time_major(input._data, batch_first)
    xp = np.matmul(x.reshape(t_max * b, -1), weight0._data.T)  # every step's input gates
    if has_biases:
        xp += weight2._data + weight3._data
    xp = xp.reshape(t_max, b, 4 * h)
    whh_t = np.ascontiguousarray(weight1._data.T)
    ws = np.empty((t_max, b, 5 * h), dt)
    out = np.empty((t_max, b, h), dt)
    buf = np.empty((b, 4 * h), dt)
    prod = np.empty((b, h), dt)
    hcur, ccur = hx_._data, cx_._data
    h1, h2, h3 = h, 2 * h, 3 * h
    with quiet_block():
        for t in range(t_max - 1, -1, -1) if reverse else range(t_max):
            np.matmul(hcur, whh_t, out=buf)
            buf += xp[t]
            act = ws[t, :, : 4 * h]
            _sigmoid_into(buf, act)  # i, f, o (g is overwritten next)
            np.tanh(buf[:, h2:h3], out=act[:, h2:h3])
            cnew = ws[t, :, 4 * h :]
            np.multiply(act[:, h1:h2], ccur, out=cnew)
            np.multiply(act[:, :h1], act[:, h2:h3], out=prod)
            cnew += prod
            hnew = out[t]
            np.tanh(cnew, out=hnew)
            hnew *= act[:, h3:]
            hcur, ccur = hnew, cnew
    output = np.ascontiguousarray(_time_major(out, batch_first))
    return wrap(output), wrap(np.array(hcur, dt)), wrap(np.array(ccur, dt)), wrap(ws)


@impl(aten.mkldnn_rnn_layer_backward.default, CPU)
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
    t_max, b, _, h = check_rnn_layer(
        input, weight1, weight2, hx_, cx_tmp, batch_sizes, mode, hidden_size, batch_first
    )
    dt = input.dtype.np
    x = _time_major(input._data, batch_first)
    out = _time_major(output._data, batch_first)
    go = None if grad_output is None else _time_major(grad_output._data, batch_first)
    ws = workspace._data
    whh = weight2._data
    dgates = np.empty((t_max, b, 4 * h), dt)
    dh = np.zeros((b, h), dt) if grad_hy is None else grad_hy._data.astype(dt, copy=True)
    dc_next = np.zeros((b, h), dt) if grad_cy is None else grad_cy._data.astype(dt, copy=True)
    deriv = np.empty((b, 4 * h), dt)
    tc = np.empty((b, h), dt)
    dc = np.empty((b, h), dt)
    h1, h2, h3 = h, 2 * h, 3 * h
    steps = list(range(t_max - 1, -1, -1) if reverse else range(t_max))
    with quiet_block():
        for k in range(len(steps) - 1, -1, -1):  # the processing order, backwards
            t = steps[k]
            if go is not None:
                dh += go[t]
            act = ws[t, :, : 4 * h]
            c = ws[t, :, 4 * h :]
            c_prev = ws[steps[k - 1], :, 4 * h :] if k else cx_tmp._data
            np.subtract(1, act, out=deriv)  # sigmoid' = s (1 - s) ...
            deriv *= act
            np.multiply(act[:, h2:h3], act[:, h2:h3], out=deriv[:, h2:h3])  # ... tanh' for g
            np.subtract(1, deriv[:, h2:h3], out=deriv[:, h2:h3])
            np.tanh(c, out=tc)
            np.multiply(tc, tc, out=dc)
            np.subtract(1, dc, out=dc)
            dc *= act[:, h3:]
            dc *= dh
            dc += dc_next
            dg = dgates[t]
            np.multiply(dc, act[:, h2:h3], out=dg[:, :h1])  # d i
            np.multiply(dc, c_prev, out=dg[:, h1:h2])  # d f
            np.multiply(dc, act[:, :h1], out=dg[:, h2:h3])  # d g
            np.multiply(dh, tc, out=dg[:, h3:])  # d o
            dg *= deriv
            np.multiply(dc, act[:, h1:h2], out=dc_next)
            dh = np.matmul(dg, whh)
        flat = dgates.reshape(t_max * b, 4 * h)
        grad_input = np.matmul(flat, weight1._data).reshape(t_max, b, -1)
        grad_w_ih = np.matmul(flat.T, x.reshape(t_max * b, -1))
        h_prev = np.empty((t_max, b, h), dt)  # the hidden state each step started from
        if t_max:
            if reverse:
                h_prev[:-1] = out[1:]
                h_prev[-1] = hx_._data
            else:
                h_prev[1:] = out[:-1]
                h_prev[0] = hx_._data
        grad_w_hh = np.matmul(flat.T, h_prev.reshape(t_max * b, h))
        grad_bias = flat.sum(0)
    if not has_biases:
        grad_b3, grad_b4 = np.zeros(weight3.shape, dt), np.zeros(weight4.shape, dt)
    else:
        grad_b3, grad_b4 = grad_bias, grad_bias.copy()
    return (
        wrap(np.ascontiguousarray(_time_major(grad_input, batch_first))),
        wrap(grad_w_ih),
        wrap(grad_w_hh),
        wrap(np.asarray(grad_b3, dt)),
        wrap(np.asarray(grad_b4, dt)),
        wrap(np.array(dh, dt)),
        wrap(np.array(dc_next, dt)),
    )
