"""Sample inputs for the recurrent ops (see opinfo.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import ember
from ember import dtypes
from ember.testing._internal.opinfo import SampleInput, samples

F32_64 = (dtypes.float32, dtypes.float64)
_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _w(make: Any, *shape: int) -> Any:
    return make(shape, low=-0.5, high=0.5)


def _params(make: Any, kind: str, i: int, h: int, layers: int, dirs: int, bias: bool,
            proj: int = 0) -> list[Any]:  # fmt: skip
    g = _GATES[kind] * h
    out = []
    real = proj or h
    for layer in range(layers):
        for _ in range(dirs):
            size = i if layer == 0 else real * dirs
            out += [_w(make, g, size), _w(make, g, real)]
            if bias:
                out += [_w(make, g), _w(make, g)]
            if proj:
                out.append(_w(make, proj, h))
    return out


@samples("lstm_cell.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def lstm_cell_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x, h, c = make((3, 4)), make((3, 5)), make((3, 5))
    yield SampleInput(x, [h, c], _w(make, 20, 4), _w(make, 20, 5), _w(make, 20), _w(make, 20))
    yield SampleInput(x, [h, c], _w(make, 20, 4), _w(make, 20, 5))
    yield SampleInput(make((3, 6)), [h, c], _w(make, 20, 4), _w(make, 20, 5), name="bad input")


def _cell_samples(make: Any, g: int) -> Iterator[SampleInput]:
    x, h = make((3, 4)), make((3, 5))
    yield SampleInput(x, h, _w(make, g * 5, 4), _w(make, g * 5, 5), _w(make, g * 5),
                      _w(make, g * 5))  # fmt: skip
    yield SampleInput(x, h, _w(make, g * 5, 4), _w(make, g * 5, 5))
    yield SampleInput(make(4), make(5), _w(make, g * 5, 4), _w(make, g * 5, 5), name="1-d")
    yield SampleInput(x, make((2, 5)), _w(make, g * 5, 4), _w(make, g * 5, 5), name="batch")
    yield SampleInput(x, h, _w(make, 2 * 5, 4), _w(make, g * 5, 5), name="gate count")


@samples("gru_cell.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def gru_cell_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _cell_samples(make, 3)


@samples("rnn_tanh_cell.default", "rnn_relu_cell.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def rnn_cell_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _cell_samples(make, 1)


def _layer_cases() -> list[tuple[int, int, bool, bool, float]]:
    # (layers, directions, bias, batch_first, dropout)
    return [(1, 1, True, False, 0.0), (2, 2, True, True, 0.0), (2, 1, False, False, 0.0),
            (3, 2, True, False, 0.0)]  # fmt: skip


def _state(make: Any, kind: str, shape: tuple[int, ...]) -> Any:
    """A layer's initial state: ``[h, c]`` for the LSTM, ``h`` for the others."""
    return [make(shape), make(shape)] if kind == "lstm" else make(shape)


def _rnn_samples(make: Any, kind: str) -> Iterator[SampleInput]:
    """Samples of the ``kind`` layer op on padded input, over ``_layer_cases``."""
    t, b, i, h = 5, 3, 4, 6
    for layers, dirs, bias, bf, p in _layer_cases():
        x = make((b, t, i) if bf else (t, b, i))
        hx = _state(make, kind, (layers * dirs, b, h))
        ps = _params(make, kind, i, h, layers, dirs, bias)
        yield SampleInput(x, hx, ps, bias, layers, p, True, dirs == 2, bf)


@samples("lstm.input", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def lstm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    t, b, i, h = 5, 3, 4, 6
    yield from _rnn_samples(make, "lstm")
    proj = 3
    hx = [make((2, b, proj)), make((2, b, h))]
    yield SampleInput(make((t, b, i)), hx, _params(make, "lstm", i, h, 1, 2, True, proj), True,
                      1, 0.0, False, True, False, name="proj_size")  # fmt: skip


@samples("gru.input", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def gru_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _rnn_samples(make, "gru")


@samples("rnn_tanh.input", "rnn_relu.input", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def rnn_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _rnn_samples(make, "rnn_tanh")


def _packed(make: Any, lengths: list[int], i: int) -> tuple[Any, Any]:
    sizes = [sum(n > t for n in lengths) for t in range(max(lengths))]
    data = make((sum(lengths), i))
    return data, ember.from_numpy(np.asarray(sizes, np.int64))


@samples("lstm.data", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def lstm_data_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _rnn_data_samples(make, "lstm")


def _rnn_data_samples(make: Any, kind: str) -> Iterator[SampleInput]:
    """Samples of the ``kind`` layer op on packed input (four sequences)."""
    i, h = 4, 5
    data, sizes = _packed(make, [5, 3, 3, 1], i)
    for layers, dirs, bias in ((1, 1, True), (2, 2, True), (1, 2, False)):
        hx = _state(make, kind, (layers * dirs, 4, h))
        ps = _params(make, kind, i, h, layers, dirs, bias)
        yield SampleInput(data, sizes, hx, ps, bias, layers, 0.0, True, dirs == 2)


@samples("gru.data", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def gru_data_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _rnn_data_samples(make, "gru")


@samples("rnn_tanh.data", "rnn_relu.data", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def rnn_data_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _rnn_data_samples(make, "rnn_tanh")


# The fused layer: PyTorch's workspace is an opaque MKL-DNN buffer and its kernel is float32
# only, so the harness cannot compare it (tests/test_rnn.py compares outputs and gradients).
@samples("mkldnn_rnn_layer.default", dtypes=(dtypes.float32,), compare_torch=False)
def mkldnn_rnn_layer_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    t, b, i, h = 5, 3, 4, 6
    ws = [_w(make, 4 * h, i), _w(make, 4 * h, h), _w(make, 4 * h), _w(make, 4 * h)]
    for reverse, bf in ((False, False), (True, True)):
        x = make((b, t, i) if bf else (t, b, i))
        yield SampleInput(x, *ws, make((b, h)), make((b, h)), reverse, [], 2, h, 1, True, False,
                          bf, True)  # fmt: skip


@samples("mkldnn_rnn_layer_backward.default", dtypes=(dtypes.float32,), compare_torch=False)
def mkldnn_rnn_layer_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    t, b, i, h = 5, 3, 4, 6
    ws = [_w(make, 4 * h, i), _w(make, 4 * h, h), _w(make, 4 * h), _w(make, 4 * h)]
    x, hx, cx = make((t, b, i)), make((b, h)), make((b, h))
    out, hy, cy, work = ember.ops.aten.mkldnn_rnn_layer(x, *ws, hx, cx, False, [], 2, h, 1, True,
                                                        False, False, True)  # fmt: skip
    yield SampleInput(x, *ws, hx, cx, out, hy, cy, make((t, b, h)), make((b, h)), None, False,
                      2, h, 1, True, True, False, [], False, work)  # fmt: skip
