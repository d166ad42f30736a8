"""RNN, LSTM, GRU and their cells against torch.nn from the same state_dict: outputs, final
states, input, initial-state and parameter gradients, for every layout (layers, directions,
bias, batch_first, projections, unbatched and packed inputs), training steps, and the fused
LSTM layer against PyTorch's own ``mkldnn_rnn_layer``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.utils.rnn as erum

from .conftest import requires_torch, torch
from .nn_compare import assert_close, compare_call, load_from_torch, to_pair, train_both

pytestmark = requires_torch
RNG = np.random.default_rng(0)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def _both(name: str, *args: Any, dtype: str = "double", **kwargs: Any) -> tuple[Any, Any]:
    e = getattr(getattr(ember.nn, name)(*args, **kwargs), dtype)()
    t = getattr(getattr(torch.nn, name)(*args, **kwargs), dtype)()
    load_from_torch(e, t)
    return e, t


CONFIGS = [
    {},
    {"num_layers": 2},
    {"bias": False},
    {"batch_first": True},
    {"bidirectional": True},
    {"num_layers": 3, "bidirectional": True, "batch_first": True},
    {"num_layers": 2, "bias": False, "bidirectional": True},
]
KINDS = [("LSTM", {}), ("GRU", {}), ("RNN", {}), ("RNN", {"nonlinearity": "relu"})]


def _initial(name: str, layers: int, batch: int, size: int, proj: int = 0) -> list[np.ndarray]:
    if name == "LSTM":
        return [_x(layers, batch, proj or size), _x(layers, batch, size)]
    return [_x(layers, batch, size)]


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("config", CONFIGS, ids=str)
@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_recurrent_layer_matches_torch(kind: Any, config: dict[str, Any], with_state: bool) -> None:
    name, extra = kind
    e, t = _both(name, 5, 7, **config, **extra)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    bf = config.get("batch_first", False)
    x = _x(3, 6, 5) if bf else _x(6, 3, 5)
    pairs = [to_pair(x)]
    layers = config.get("num_layers", 1) * (2 if config.get("bidirectional") else 1)
    if with_state:
        pairs += [to_pair(s) for s in _initial(name, layers, 3, 7)]

    def run(model: Any) -> Any:
        def call(inp: Any, *state: Any) -> Any:
            if not state:
                return model(inp)
            return model(inp, tuple(state) if name == "LSTM" else state[0])

        return call

    compare_call(
        run(e), run(t), [p[0] for p in pairs], [p[1] for p in pairs],
        list(e.parameters()), list(t.parameters()), atol=1e-9, rtol=1e-7,
    )  # fmt: skip


@pytest.mark.parametrize("config", [{}, {"num_layers": 2, "bidirectional": True},
                                    {"batch_first": True, "bias": False}], ids=str)  # fmt: skip
def test_lstm_projection_matches_torch(config: dict[str, Any]) -> None:
    e, t = _both("LSTM", 5, 7, proj_size=3, **config)
    assert list(e.state_dict()) == list(t.state_dict())
    x = _x(3, 6, 5) if config.get("batch_first") else _x(6, 3, 5)
    layers = config.get("num_layers", 1) * (2 if config.get("bidirectional") else 1)
    pairs = [to_pair(x)] + [to_pair(s) for s in _initial("LSTM", layers, 3, 7, proj=3)]
    compare_call(
        lambda a, h, c: e(a, (h, c)), lambda a, h, c: t(a, (h, c)),
        [p[0] for p in pairs], [p[1] for p in pairs],
        list(e.parameters()), list(t.parameters()), atol=1e-9, rtol=1e-7,
    )  # fmt: skip


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_unbatched_input_matches_torch(kind: Any) -> None:
    name, extra = kind
    e, t = _both(name, 4, 6, num_layers=2, bidirectional=True, **extra)
    states = [s[:, 0] for s in _initial(name, 4, 1, 6)]
    pairs = [to_pair(_x(5, 4))] + [to_pair(s) for s in states]

    def run(model: Any) -> Any:
        return lambda a, *s: model(a, tuple(s) if name == "LSTM" else s[0])

    compare_call(run(e), run(t), [p[0] for p in pairs], [p[1] for p in pairs],
                 list(e.parameters()), list(t.parameters()), atol=1e-9, rtol=1e-7)  # fmt: skip


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("config", [{}, {"num_layers": 2, "bidirectional": True},
                                    {"batch_first": True}], ids=str)  # fmt: skip
@pytest.mark.parametrize("kind", KINDS + [("LSTM", {"proj_size": 3})], ids=str)
def test_packed_sequences_match_torch(
    kind: Any, config: dict[str, Any], enforce_sorted: bool
) -> None:
    name, extra = kind
    e, t = _both(name, 4, 6, **config, **extra)
    bf = config.get("batch_first", False)
    lengths = [6, 4, 4, 1] if enforce_sorted else [4, 6, 1, 4]
    x = _x(4, 6, 4) if bf else _x(6, 4, 4)
    layers = config.get("num_layers", 1) * (2 if config.get("bidirectional") else 1)
    pairs = [to_pair(x)] + [
        to_pair(s) for s in _initial(name, layers, 4, 6, proj=extra.get("proj_size", 0))
    ]

    def run(lib: Any, model: Any) -> Any:
        u = lib.nn.utils.rnn

        def call(a: Any, *state: Any) -> Any:
            packed = u.pack_padded_sequence(a, lengths, bf, enforce_sorted)
            out, hidden = model(packed, tuple(state) if name == "LSTM" else state[0])
            padded, lens = u.pad_packed_sequence(out, bf)
            return padded, hidden, out.data

        return call

    compare_call(run(ember, e), run(torch, t), [p[0] for p in pairs], [p[1] for p in pairs],
                 list(e.parameters()), list(t.parameters()), atol=1e-9, rtol=1e-7)  # fmt: skip


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_torch(name: str, bias: bool) -> None:
    extra = [{"nonlinearity": "relu"}] if name == "RNNCell" else []
    for kw in [{}, *extra]:
        e, t = _both(name, 4, 5, bias=bias, **kw)
        assert repr(e) == repr(t) and list(e.state_dict()) == list(t.state_dict())
        for batch in ((3,), ()):
            pairs = [to_pair(_x(*batch, 4))]
            states = [_x(*batch, 5)] * (2 if name == "LSTMCell" else 1)
            pairs += [to_pair(s) for s in states]

            def run(model: Any) -> Any:
                return lambda a, *st: model(a, tuple(st) if name == "LSTMCell" else st[0])

            compare_call(run(e), run(t), [p[0] for p in pairs], [p[1] for p in pairs],
                         list(e.parameters()), list(t.parameters()))  # fmt: skip
            compare_call(e, t, [pairs[0][0]], [pairs[0][1]])  # zero initial state


def test_float32_lstm_matches_torch() -> None:
    e, t = _both("LSTM", 16, 32, num_layers=2, bidirectional=True, dtype="float")
    ex, tx = to_pair(_x(20, 4, 16).astype(np.float32))
    compare_call(e, t, (ex,), (tx,), list(e.parameters()), list(t.parameters()),
                 atol=2e-5, rtol=2e-4)  # fmt: skip


@pytest.mark.parametrize("reverse", [False, True])
def test_fused_layer_matches_torch_mkldnn_rnn_layer(reverse: bool) -> None:
    # time-major only: PyTorch calls its kernel time-major (its batch_first=True path corrupts
    # memory); ember's kernel reads batch_first, checked against its own time-major run below
    t_, b, i, h = 7, 3, 4, 5
    batch_first = False
    arrays = [_x(t_, b, i), _x(4 * h, i) * 0.5,
              _x(4 * h, h) * 0.5, _x(4 * h), _x(4 * h), _x(b, h), _x(b, h)]  # fmt: skip
    pairs = [to_pair(a.astype(np.float32)) for a in arrays]
    extra = (reverse, [], 2, h, 1, True, False, batch_first, True)
    compare_call(
        lambda *a: ember.ops.aten.mkldnn_rnn_layer(*a, *extra)[:3],
        lambda *a: torch.ops.aten.mkldnn_rnn_layer(*a, *extra)[:3],
        [p[0] for p in pairs], [p[1] for p in pairs], atol=1e-5, rtol=1e-4,
    )  # fmt: skip
    args = [p[0].detach() for p in pairs]
    bf = ember.ops.aten.mkldnn_rnn_layer(args[0].transpose(0, 1).contiguous(), *args[1:],
                                         reverse, [], 2, h, 1, True, False, True, True)  # fmt: skip
    tm = ember.ops.aten.mkldnn_rnn_layer(*args, *extra)
    np.testing.assert_array_equal(bf[0].transpose(0, 1).numpy(), tm[0].numpy())
    np.testing.assert_array_equal(bf[1].numpy(), tm[1].numpy())


def test_lstm_double_backward_matches_torch() -> None:
    e, t = _both("LSTM", 3, 4)
    ex, tx = to_pair(_x(5, 2, 3))
    eo, tout = e(ex)[0], t(tx)[0]
    eg = ember.autograd.grad(eo.sum(), ex, create_graph=True)[0]
    tg = torch.autograd.grad(tout.sum(), tx, create_graph=True)[0]
    assert_close(eg, tg, 1e-10, 1e-8, "first gradient")
    e2 = ember.autograd.grad((eg * eg).sum(), [ex, e.weight_hh_l0])
    t2 = torch.autograd.grad((tg * tg).sum(), [tx, t.weight_hh_l0])
    for a, b_ in zip(e2, t2, strict=True):
        assert_close(a, b_, 1e-9, 1e-7, "second gradient")


def test_training_recurrent_models_matches_torch() -> None:
    def build(lib: Any) -> Any:
        lib.manual_seed(0)

        class Net(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.lstm = lib.nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)
                self.gru = lib.nn.GRU(12, 5)
                self.cell = lib.nn.RNNCell(5, 5)
                self.head = lib.nn.Linear(5, 2)

            def forward(self, x: Any) -> Any:
                out, _ = self.lstm(x)
                out, h = self.gru(out.transpose(0, 1))
                return self.head(self.cell(out[-1], h[0]))

        return Net()

    e, t = build(ember).double(), build(torch).double()
    batches = [(_x(3, 7, 4), RNG.integers(0, 2, 3)) for _ in range(3)]
    train_both(e, t, batches, lambda lib, m, b: lib.nn.functional.cross_entropy(m(b[0]), b[1]))


def test_dropout_between_layers() -> None:
    e = ember.nn.GRU(4, 6, num_layers=3, dropout=0.5)
    x = ember.randn(5, 2, 4)
    e.eval()
    first = e(x)[0]
    assert np.array_equal(first.detach().numpy(), e(x)[0].detach().numpy())  # eval: no dropout
    e.train()
    assert not np.array_equal(first.detach().numpy(), e(x)[0].detach().numpy())
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="dropout"):
            lib.nn.LSTM(3, 4, dropout=0.2)


def test_recurrent_errors_match_torch() -> None:
    for lib in (ember, torch):
        nn = lib.nn
        lstm = nn.LSTM(4, 6, num_layers=2)
        with pytest.raises(RuntimeError):  # wrong feature size
            lstm(lib.zeros(5, 3, 3))
        with pytest.raises(RuntimeError):  # wrong hidden size
            lstm(lib.zeros(5, 3, 4), (lib.zeros(1, 3, 6), lib.zeros(2, 3, 6)))
        with pytest.raises(RuntimeError):  # hx rank
            lstm(lib.zeros(5, 3, 4), (lib.zeros(3, 6), lib.zeros(3, 6)))
        with pytest.raises(ValueError):  # 4-d input
            lstm(lib.zeros(5, 3, 4, 1))
        with pytest.raises(ValueError):  # dtype mismatch
            lstm(lib.zeros(5, 3, 4, dtype=lib.float64))
        with pytest.raises(ValueError):
            nn.GRU(4, 6, proj_size=2)
        with pytest.raises(ValueError):
            nn.LSTM(4, 6, proj_size=6)
        with pytest.raises(ValueError):
            nn.RNN(4, 6, nonlinearity="gelu")
        with pytest.raises(ValueError):
            nn.LSTM(4, 6, dropout=1.5)
        with pytest.raises(ValueError):
            nn.LSTMCell(4, 5)(lib.zeros(2, 3, 4))
        with pytest.raises(RuntimeError):
            nn.GRUCell(4, 5)(lib.zeros(2, 4), lib.zeros(3, 5))


def test_state_dict_round_trip_and_flat_weights() -> None:
    e, t = _both("LSTM", 3, 4, num_layers=2, bidirectional=True, proj_size=2)
    state = {k: torch.from_numpy(v.numpy().copy()) for k, v in e.state_dict().items()}
    fresh = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2).double()
    fresh.load_state_dict(state)
    for (n, a), (_, b) in zip(fresh.state_dict().items(), t.state_dict().items(), strict=True):
        assert torch.equal(a, b), n
    assert [len(ws) for ws in e.all_weights] == [len(ws) for ws in t.all_weights]
    e.flatten_parameters()
    bound = 1 / 2  # U(-1/sqrt(hidden_size), ...)
    assert all(float(p.abs().max()) <= bound for p in ember.nn.LSTM(3, 4).parameters())


def test_packed_sequence_round_trip_through_modules() -> None:
    seqs = [ember.randn(5, 3), ember.randn(2, 3), ember.randn(4, 3)]
    packed = erum.pack_sequence(seqs, enforce_sorted=False)
    out, h = ember.nn.GRU(3, 4)(packed)
    assert isinstance(out, erum.PackedSequence)
    padded, lengths = erum.pad_packed_sequence(out)
    assert lengths.tolist() == [5, 2, 4] and tuple(h.shape) == (1, 3, 4)
    for k, n in enumerate([5, 2, 4]):  # each sequence's final state is its last output
        np.testing.assert_allclose(h[0, k].detach().numpy(), padded[n - 1, k].detach().numpy())
