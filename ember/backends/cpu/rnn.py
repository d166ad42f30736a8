"""CPU kernel of a whole LSTM layer, ``mkldnn_rnn_layer``, and its backward.

# NOTE [fused lstm layer]
PyTorch runs a float32 LSTM on the CPU through ``mkldnn_rnn_layer``: one op per layer and
direction, with its own backward, instead of a dozen small ops per time step. ember's kernel
is the same idea in NumPy. The forward multiplies the input by ``W_ih`` for every time step
in one matmul, then per step adds ``h @ W_hh^T`` and applies the gates in place (about a dozen
NumPy calls). The gates are laid out gate-major, ``(4, B, H)``, so every call runs on
contiguous memory (a ufunc on a column block of a ``(B, 4H)`` array is several times
slower). The workspace, a flat float tensor, holds the gate activations ``(T, 4, B, H)`` and
the cell states ``(T, B, H)``. The backward walks the steps in reverse, forming the gates'
gradients with one batched matmul by ``W_hh`` per step, then gets the input's and both
weights' gradients from three matmuls over every step at once. (PyTorch's workspace is an
opaque MKL-DNN byte buffer; ember's is this float tensor.)
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


_ORDER = [0, 1, 3, 2]  # PyTorch's gates (i, f, g, o) in the kernel's order (i, f, o, g)
_HALF = np.array([0.5, 0.5, 0.5, 1.0])  # the sigmoid gates' pre-activations, halved


def _gates(w: np.ndarray, h: int) -> np.ndarray:
    """PyTorch's ``(4H, ...)`` gate rows as ``(4, H, ...)`` in the kernel's order."""
    return w.reshape(4, h, *w.shape[1:])[_ORDER]


def _split_workspace(ws: np.ndarray, t: int, b: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """The workspace's gate activations ``(T, 4, B, H)`` and cell states ``(T, B, H)``."""
    n = t * 4 * b * h
    return ws[:n].reshape(t, 4, b, h), ws[n:].reshape(t, b, h)


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
    half = _HALF.astype(dt)[:, None, None]
    x = _time_major(input._edata, batch_first).reshape(t_max * b, -1)
    w_ih = _gates(weight0._edata, h) * half  # (4, H, I): sigmoid(z) = tanh(z / 2) / 2 + 1/2
    with quiet_block():  # inf and NaN inputs give NaN gates silently, as PyTorch's
        xp = np.matmul(x, w_ih.transpose(0, 2, 1))  # (4, T*B, H): every step's input gates
        if has_biases:
            xp += _gates(weight2._edata + weight3._edata, h)[:, None, :] * half
    xp = xp.reshape(4, t_max, b, h)
    whh = np.ascontiguousarray((_gates(weight1._edata, h) * half).transpose(0, 2, 1))
    ws = np.empty(5 * t_max * b * h, dt)
    acts, cells = _split_workspace(ws, t_max, b, h)
    out = np.empty((t_max, b, h), dt)
    buf = np.empty((4, b, h), dt)
    prod = np.empty((b, h), dt)
    hcur, ccur = hx_._edata, cx_._edata
    with quiet_block():
        for t in range(t_max - 1, -1, -1) if reverse else range(t_max):
            np.matmul(hcur, whh, out=buf)  # (B, H) @ (4, H, H): each gate contiguous
            buf += xp[:, t]
            act = acts[t]
            np.tanh(buf, out=act)  # g's activation, and i, f, o's halfway
            sig = act[:3]
            sig *= 0.5
            sig += 0.5
            cnew = cells[t]
            np.multiply(act[1], ccur, out=cnew)
            np.multiply(act[0], act[3], out=prod)
            cnew += prod
            hnew = out[t]
            np.tanh(cnew, out=hnew)
            hnew *= act[2]
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
    x = _time_major(input._edata, batch_first)
    out = _time_major(output._edata, batch_first)
    go = None if grad_output is None else _time_major(grad_output._edata, batch_first)
    acts, cells = _split_workspace(workspace._edata, t_max, b, h)
    whh = np.ascontiguousarray(_gates(weight2._edata, h))  # (4, H, H), the kernel's order
    dgates = np.empty((t_max, 4, b, h), dt)
    dh = np.zeros((b, h), dt) if grad_hy is None else grad_hy._edata.astype(dt, copy=True)
    dc_next = np.zeros((b, h), dt) if grad_cy is None else grad_cy._edata.astype(dt, copy=True)
    deriv = np.empty((4, b, h), dt)
    tc = np.empty((b, h), dt)
    dc = np.empty((b, h), dt)
    back = np.empty((4, b, h), dt)
    steps = list(range(t_max - 1, -1, -1) if reverse else range(t_max))
    with quiet_block():
        for k in range(len(steps) - 1, -1, -1):  # the processing order, backwards
            t = steps[k]
            if go is not None:
                dh += go[t]
            act = acts[t]  # i, f, o, g
            c_prev = cells[steps[k - 1]] if k else cx_tmp._edata
            np.subtract(1, act[:3], out=deriv[:3])  # sigmoid' = s (1 - s) ...
            deriv[:3] *= act[:3]
            np.multiply(act[3], act[3], out=deriv[3])  # ... and tanh' = 1 - g^2
            np.subtract(1, deriv[3], out=deriv[3])
            np.tanh(cells[t], out=tc)
            np.multiply(tc, tc, out=dc)
            np.subtract(1, dc, out=dc)
            dc *= act[2]
            dc *= dh
            dc += dc_next
            dg = dgates[t]
            np.multiply(dc, act[3], out=dg[0])  # d i
            np.multiply(dc, c_prev, out=dg[1])  # d f
            np.multiply(dh, tc, out=dg[2])  # d o
            np.multiply(dc, act[0], out=dg[3])  # d g
            dg *= deriv
            np.multiply(dc, act[1], out=dc_next)
            np.matmul(dg, whh, out=back)  # sum over the gates of dG_k @ W_hh_k
            dh = back.sum(0)
        # back to PyTorch's gate order and the (T*B, 4H) layout the weights' gradients need
        flat = np.ascontiguousarray(dgates[:, _ORDER].transpose(0, 2, 1, 3))
        flat = flat.reshape(t_max * b, 4 * h)
        grad_input = np.matmul(flat, weight1._edata).reshape(t_max, b, -1)
        grad_w_ih = np.matmul(flat.T, x.reshape(t_max * b, -1))
        h_prev = np.empty((t_max, b, h), dt)  # the hidden state each step started from
        if t_max:
            if reverse:
                h_prev[:-1] = out[1:]
                h_prev[-1] = hx_._edata
            else:
                h_prev[1:] = out[:-1]
                h_prev[0] = hx_._edata
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
