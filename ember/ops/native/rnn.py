"""The recurrent ops: the cells (``lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``,
``rnn_relu_cell``), the multi-layer ops the ``nn.RNN``/``LSTM``/``GRU`` modules call
(``lstm.input``, ``lstm.data`` for packed sequences, and the same for ``gru``, ``rnn_tanh``,
``rnn_relu``), all compositions as in PyTorch, and ``mkldnn_rnn_layer``, the fused LSTM layer
PyTorch runs on the CPU (NOTE [fused lstm layer] in ``ember/backends/cpu/rnn.py``).

# NOTE [recurrent layers]
A layer multiplies its whole input by ``W_ih`` in one matmul (PyTorch's CPU path does the
same), then steps through time with the cell's recurrence on the precomputed input gates. An
LSTM without projections runs each layer and direction as one ``mkldnn_rnn_layer``; GRU,
RNN, LSTM with ``proj_size`` and packed sequences step with ember ops. Bidirectional layers
concatenate the two directions' outputs on the feature dim; the final states are stacked
layer by layer, forward before reverse, as ``(num_layers * num_directions, B, H)``; dropout
(training only) comes between layers, never after the last. A packed sequence (NOTE [packed
layout] in ``ember/nn/utils/rnn.py``) steps over ``batch_sizes[t]`` rows at a time: rows that
finish keep their last state as their final one, and the reverse direction starts each row
from its initial state when the row joins.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import by_name, define
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_FN = ("function",)
_CELL = "(Tensor input, {hx}, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None)"
_RNN_TAIL = (
    "Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, "
    "bool bidirectional"
)
for _schema in (
    "lstm_cell" + _CELL.format(hx="Tensor[] hx") + " -> (Tensor, Tensor)",
    "gru_cell" + _CELL.format(hx="Tensor hx") + " -> Tensor",
    "rnn_tanh_cell" + _CELL.format(hx="Tensor hx") + " -> Tensor",
    "rnn_relu_cell" + _CELL.format(hx="Tensor hx") + " -> Tensor",
    f"lstm.input(Tensor input, Tensor[] hx, {_RNN_TAIL}, bool batch_first) "
    "-> (Tensor, Tensor, Tensor)",
    f"lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, {_RNN_TAIL}) "
    "-> (Tensor, Tensor, Tensor)",
    f"gru.input(Tensor input, Tensor hx, {_RNN_TAIL}, bool batch_first) -> (Tensor, Tensor)",
    f"gru.data(Tensor data, Tensor batch_sizes, Tensor hx, {_RNN_TAIL}) -> (Tensor, Tensor)",
    f"rnn_tanh.input(Tensor input, Tensor hx, {_RNN_TAIL}, bool batch_first) -> (Tensor, Tensor)",
    f"rnn_tanh.data(Tensor data, Tensor batch_sizes, Tensor hx, {_RNN_TAIL}) -> (Tensor, Tensor)",
    f"rnn_relu.input(Tensor input, Tensor hx, {_RNN_TAIL}, bool batch_first) -> (Tensor, Tensor)",
    f"rnn_relu.data(Tensor data, Tensor batch_sizes, Tensor hx, {_RNN_TAIL}) -> (Tensor, Tensor)",
    "mkldnn_rnn_layer(Tensor input, Tensor weight0, Tensor weight1, Tensor weight2, "
    "Tensor weight3, Tensor hx_, Tensor cx_, bool reverse, int[] batch_sizes, int mode, "
    "int hidden_size, int num_layers, bool has_biases, bool bidirectional, bool batch_first, "
    "bool train) -> (Tensor, Tensor, Tensor, Tensor)",
):
    define(_schema, variants=_FN)
define(
    "mkldnn_rnn_layer_backward(Tensor input, Tensor weight1, Tensor weight2, Tensor weight3, "
    "Tensor weight4, Tensor hx_, Tensor cx_tmp, Tensor output, Tensor hy_, Tensor cy_, "
    "Tensor? grad_output, Tensor? grad_hy, Tensor? grad_cy, bool reverse, int mode, "
    "int hidden_size, int num_layers, bool has_biases, bool train, bool bidirectional, "
    "int[] batch_sizes, bool batch_first, Tensor workspace) -> "
    "(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
    variants=(),
)

LSTM_MODE = 2  # cuDNN's enum, which the op's ``mode`` uses: RNN_RELU 0, RNN_TANH 1, LSTM 2, GRU 3

# --------------------------------------------------------------------------- shared checks


def check_rnn_layer(
    input: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    hx: Tensor,
    cx: Tensor,
    batch_sizes: Sequence[int],
    mode: int,
    hidden_size: int,
    batch_first: bool,
) -> tuple[int, int, int, int]:
    """``(T, B, I, H)`` of a fused LSTM layer; raises for what it does not support."""
    op = "mkldnn_rnn_layer"
    if mode != LSTM_MODE:
        raise RuntimeError(f"{op}: only LSTM (mode 2) is fused, got mode {mode}")
    if len(batch_sizes):
        raise RuntimeError(f"{op}: packed input is not supported; step packed sequences")
    if input.ndim != 3:
        raise RuntimeError(f"{op}: expected 3-D input, got {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"{op}: not implemented for '{input.dtype._short}'")
    b, t = (input.shape[0], input.shape[1]) if batch_first else (input.shape[1], input.shape[0])
    i, h = input.shape[2], hidden_size
    if tuple(w_ih.shape) != (4 * h, i) or tuple(w_hh.shape) != (4 * h, h):
        raise RuntimeError(
            f"{op}: expected weights of shapes {[4 * h, i]} and {[4 * h, h]}, got "
            f"{list(w_ih.shape)} and {list(w_hh.shape)}"
        )
    for name, s in (("hx", hx), ("cx", cx)):
        if tuple(s.shape) != (b, h):
            raise RuntimeError(f"{op}: expected {name} of shape {[b, h]}, got {list(s.shape)}")
    for name, w in (("weight", w_ih), ("weight", w_hh), ("hx", hx), ("cx", cx)):
        if w.dtype is not input.dtype:
            raise RuntimeError(
                f"{op}: expected {name} of dtype {input.dtype}, got {w.dtype}; use one dtype"
            )
    return t, b, i, h


# --------------------------------------------------------------------------- cells

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


def _linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    return aten.linear.default(x, w, b)  # type: ignore[no-any-return]


def _check_cell(
    input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor, op: str, gates: int
) -> None:
    if input.ndim < 2:  # PyTorch reads input.size(1): the cells take batches only
        raise IndexError(
            f"{op}: Dimension out of range (expected to be in range of [-1, 0], but got 1); "
            "the cell ops take (batch, features) inputs (the nn cell modules add the batch dim)"
        )
    if input.shape[-1] != w_ih.shape[1]:
        raise RuntimeError(
            f"{op}: input has inconsistent input_size: got {input.shape[-1]} expected "
            f"{w_ih.shape[1]}"
        )
    hidden = w_hh.shape[1]
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.shape[0] != gates * hidden:
            raise RuntimeError(
                f"{op}: {name} first dim must be {gates} * hidden_size = {gates * hidden}, but "
                f"got {w.shape[0]}"
            )
    for i, h in enumerate(hx):
        if input.ndim == 2 and h.shape[0] != input.shape[0]:
            raise RuntimeError(
                f"{op}: Input batch size {input.shape[0]} doesn't match hidden{i} batch size "
                f"{h.shape[0]}"
            )
        if h.shape[-1] != w_hh.shape[1] and not (i == 1 and op == "lstm_cell"):
            raise RuntimeError(
                f"{op}: hidden{i} has inconsistent hidden_size: got {h.shape[-1]}, expected "
                f"{w_hh.shape[1]}"
            )


def _lstm_gates(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _gru_gates(gi: Tensor, gh: Tensor, h: Tensor) -> Tensor:
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return (h - n) * z + n


@impl(aten.lstm_cell.default, _CIA)
def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    if len(hx) != 2:
        raise RuntimeError(f"lstm_cell: Expected two hidden states, got {len(hx)}")
    _check_cell(input, hx, w_ih, w_hh, "lstm_cell", 4)
    gates = _linear(input, w_ih, b_ih) + _linear(hx[0], w_hh, b_hh)
    return _lstm_gates(gates, hx[1])


@impl(aten.gru_cell.default, _CIA)
def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    _check_cell(input, [hx], w_ih, w_hh, "gru_cell", 3)
    return _gru_gates(_linear(input, w_ih, b_ih), _linear(hx, w_hh, b_hh), hx)


def _simple_cell(op: str, nonlinearity: Callable[[Tensor], Tensor]) -> Callable[..., Tensor]:
    def cell(
        input: Tensor,
        hx: Tensor,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Tensor | None = None,
        b_hh: Tensor | None = None,
    ) -> Tensor:
        _check_cell(input, [hx], w_ih, w_hh, op, 1)
        return nonlinearity(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))

    return cell


impl(aten.rnn_tanh_cell.default, _CIA, _simple_cell("rnn_tanh_cell", lambda x: x.tanh()))
impl(aten.rnn_relu_cell.default, _CIA, _simple_cell("rnn_relu_cell", lambda x: x.relu()))

# --------------------------------------------------------------------------- layers

State = Any  # a Tensor, or (h, c) for the LSTM
#: one step: (precomputed input gates, state, layer weights) -> (output, new state)
Step = Callable[[Any, State, Any], tuple[Any, State]]


class Weights:
    """One layer's, one direction's parameters from the flat ``params`` list."""

    def __init__(self, params: Sequence[Tensor], has_biases: bool, projected: bool) -> None:
        self.w_ih, self.w_hh = params[0], params[1]
        self.b_ih = params[2] if has_biases else None
        self.b_hh = params[3] if has_biases else None
        self.w_hr = params[-1] if projected else None


def _lstm_step(gx: Tensor, state: State, w: Weights) -> tuple[Tensor, State]:
    h, c = state
    h, c = _lstm_gates(gx + _linear(h, w.w_hh, w.b_hh), c)
    if w.w_hr is not None:
        h = h.matmul(w.w_hr.t())
    return h, (h, c)


def _gru_step(gx: Tensor, h: State, w: Weights) -> tuple[Tensor, State]:
    out = _gru_gates(gx, _linear(h, w.w_hh, w.b_hh), h)
    return out, out


def _tanh_step(gx: Tensor, h: State, w: Weights) -> tuple[Tensor, State]:
    out = (gx + _linear(h, w.w_hh, w.b_hh)).tanh()
    return out, out


def _relu_step(gx: Tensor, h: State, w: Weights) -> tuple[Tensor, State]:
    out = (gx + _linear(h, w.w_hh, w.b_hh)).relu()
    return out, out


def _full_layer(
    step: Step, x: Tensor, state: State, w: Weights, reverse: bool
) -> tuple[Tensor, State]:
    """One direction over a time-major ``(T, B, I)`` input (NOTE [recurrent layers])."""
    gx = _linear(x, w.w_ih, w.b_ih)
    steps = x.shape[0]
    outs: list[Any] = [None] * steps
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        outs[t], state = step(gx[t], state, w)
    if not steps:
        size = state[0].shape[-1] if isinstance(state, tuple) else state.shape[-1]
        return aten.zeros.default([0, x.shape[1], size], dtype=x.dtype), state
    return aten.stack.default(outs), state


def _rows(state: State, start: int, end: int) -> State:
    if isinstance(state, tuple):
        return tuple(s[start:end] for s in state)
    return state[start:end]


def _cat_rows(parts: list[State]) -> State:
    if isinstance(parts[0], tuple):
        return tuple(aten.cat.default([p[i] for p in parts]) for i in range(len(parts[0])))
    return aten.cat.default(parts)


def _packed_layer(
    step: Step, data: Tensor, sizes: list[int], state: State, w: Weights, reverse: bool
) -> tuple[Tensor, State]:
    """One direction over packed ``data`` with ``batch_sizes`` ``sizes``."""
    gx = _linear(data, w.w_ih, w.b_ih)
    offsets = [0]
    for s in sizes:
        offsets.append(offsets[-1] + s)
    outs: list[Any] = [None] * len(sizes)
    if not reverse:
        finished: list[State] = []
        cur, last = state, sizes[0] if sizes else 0
        for t, bs in enumerate(sizes):
            if bs < last:  # rows bs..last end here: their final state is their last one
                finished.append(_rows(cur, bs, last))
                cur = _rows(cur, 0, bs)
            outs[t], cur = step(gx[offsets[t] : offsets[t + 1]], cur, w)
            last = bs
        finished.append(cur)
        final = _cat_rows(finished[::-1])
    else:
        last = sizes[-1] if sizes else 0
        cur = _rows(state, 0, last)
        for t in range(len(sizes) - 1, -1, -1):
            bs = sizes[t]
            if bs > last:  # rows last..bs start here, from their initial state
                cur = _cat_rows([cur, _rows(state, last, bs)])
            outs[t], cur = step(gx[offsets[t] : offsets[t + 1]], cur, w)
            last = bs
        final = cur
    return aten.cat.default(outs), final


_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def layer_weights(
    op: str,
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    bidirectional: bool,
    input_size: int,
) -> list[Weights]:
    """The parameters of each layer and direction, in PyTorch's flat order; RuntimeError for
    a count or shape that does not fit."""
    dirs = 2 if bidirectional else 1
    groups = num_layers * dirs
    per = len(params) // groups if groups else 0
    if groups == 0 or per * groups != len(params) or per not in ((4, 5) if has_biases else (2, 3)):
        raise RuntimeError(
            f"{op}: got {len(params)} parameter tensors for {num_layers} layer(s) and {dirs} "
            f"direction(s) (has_biases={has_biases}); expected 2 or 4 per layer and direction "
            "(3 or 5 with an LSTM projection)"
        )
    projected = per in (3, 5)  # w_hr closes each group
    if projected and op != "lstm":
        raise RuntimeError(f"{op}: projections (proj_size) are for LSTM only")
    gates = _GATES[op]
    out = []
    for k in range(groups):
        w = Weights(params[k * per : (k + 1) * per], has_biases, projected)
        hidden = w.w_hr.shape[1] if w.w_hr is not None else w.w_hh.shape[1]
        real = w.w_hh.shape[1]
        size = input_size if k < dirs else real * dirs
        shapes: list[tuple[str, Tensor, tuple[int, ...]]] = [
            ("weight_ih", w.w_ih, (gates * hidden, size)),
            ("weight_hh", w.w_hh, (gates * hidden, real)),
        ]
        for name, b in (("bias_ih", w.b_ih), ("bias_hh", w.b_hh)):
            if b is not None:
                shapes.append((name, b, (gates * hidden,)))
        for name, t, want in shapes:
            if tuple(t.shape) != want:
                raise RuntimeError(
                    f"{op}: expected {name} of layer {k // dirs} to have shape {list(want)}, got "
                    f"{list(t.shape)}"
                )
        out.append(w)
    return out


def _run_layers(
    op: str,
    step: Step,
    x: Tensor,
    states: list[State],
    params: Sequence[Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    sizes: list[int] | None,
    lstm: bool,
) -> tuple[Tensor, list[State]]:
    """Every layer and direction (NOTE [recurrent layers]); ``x`` is time-major, or packed
    data when ``sizes`` is given."""
    dirs = 2 if bidirectional else 1
    weights = layer_weights(op, params, has_biases, num_layers, bidirectional, x.shape[-1])
    if len(states) != len(weights):
        raise RuntimeError(
            f"{op}: expected {len(weights)} initial states (num_layers * num_directions), got "
            f"{len(states)}"
        )
    finals: list[State] = []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = weights[k]
            if sizes is None and lstm and w.w_hr is None:
                h0, c0 = states[k]
                out, h, c, _ = aten.mkldnn_rnn_layer.default(
                    x, w.w_ih, w.w_hh, *_biases(w, x), h0, c0, d == 1, [], LSTM_MODE,
                    w.w_hh.shape[1], num_layers, has_biases, bidirectional, False, train,
                )  # fmt: skip
                state: State = (h, c)
            elif sizes is None:
                out, state = _full_layer(step, x, states[k], w, d == 1)
            else:
                out, state = _packed_layer(step, x, sizes, states[k], w, d == 1)
            outs.append(out)
            finals.append(state)
        x = outs[0] if dirs == 1 else aten.cat.default(outs, -1)
        if dropout != 0 and train and layer < num_layers - 1:
            x = aten.dropout.default(x, dropout, train)
    return x, finals


def _biases(w: Weights, x: Tensor) -> tuple[Tensor, Tensor]:
    if w.b_ih is not None and w.b_hh is not None:
        return w.b_ih, w.b_hh
    zeros = aten.zeros.default([w.w_ih.shape[0]], dtype=x.dtype, device=x.device)
    return zeros, zeros


def _check_input(input: Tensor, op: str, packed: bool) -> None:
    want = 2 if packed else 3
    if input.ndim != want:
        raise RuntimeError(f"{op}: input must have {want} dimensions, got {input.ndim}")


def _stack_states(finals: list[State], lstm: bool) -> tuple[Tensor, ...]:
    if lstm:
        return aten.stack.default([s[0] for s in finals]), aten.stack.default(
            [s[1] for s in finals]
        )
    return (aten.stack.default(finals),)


def _sizes(batch_sizes: Tensor) -> list[int]:
    return [int(s) for s in batch_sizes.tolist()]


def _packed_shapes(data: Tensor, hx: Sequence[Tensor], bidirectional: bool) -> tuple[Tensor, ...]:
    """Results of a ``.data`` overload from shapes alone, for batch sizes without values (the
    meta device): the output has a row per data row, the final states their initial shape."""
    cols = hx[0].shape[-1] * (2 if bidirectional else 1)  # h's size: hidden or projection
    out = aten.zeros.default([data.shape[0], cols], dtype=data.dtype, device=data.device)
    return (out, *(aten.zeros.default(list(h.shape), dtype=h.dtype, device=h.device) for h in hx))


_STEPS: dict[str, Step] = {"gru": _gru_step, "rnn_tanh": _tanh_step, "rnn_relu": _relu_step}


def _rnn(name: str, a: SimpleNamespace) -> tuple[Tensor, ...]:
    """The ``input`` (padded) and ``data`` (packed) overloads of ``lstm``, ``gru``,
    ``rnn_tanh`` and ``rnn_relu``; ``a``: the call's arguments by name (``by_name``)."""
    lstm, packed = name == "lstm", hasattr(a, "batch_sizes")
    x = a.data if packed else a.input
    _check_input(x, name, packed=packed)
    hx = list(a.hx) if lstm else [a.hx]
    if lstm and not packed and len(hx) != 2:
        raise RuntimeError(f"lstm: Expected two hidden states (h_0, c_0), got {len(hx)}")
    if packed and a.batch_sizes.device.type == "meta":
        layer_weights(name, a.params, a.has_biases, a.num_layers, a.bidirectional, x.shape[-1])
        return _packed_shapes(x, hx, a.bidirectional)
    batch_first = not packed and a.batch_first
    if batch_first:
        x = x.transpose(0, 1)
    if lstm and not packed and hx[0].shape[-1] == hx[1].shape[-1]:
        # no projections: the fused layers, which PyTorch's mkldnn path feeds a contiguous
        # time-major input (a clone here)
        x = x.contiguous()
    n = hx[0].shape[0]
    states = [(hx[0][k], hx[1][k]) for k in range(n)] if lstm else [hx[0][k] for k in range(n)]
    out, finals = _run_layers(
        name, _lstm_step if lstm else _STEPS[name], x, states, a.params, a.has_biases,
        a.num_layers, a.dropout, a.train, a.bidirectional,
        _sizes(a.batch_sizes) if packed else None, lstm=lstm,
    )  # fmt: skip
    return (out.transpose(0, 1) if batch_first else out, *_stack_states(finals, lstm))


for _name in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
    for _op in (getattr(aten, _name).input, getattr(aten, _name).data):
        impl(_op, _CIA, by_name(_op, functools.partial(_rnn, _name)))
