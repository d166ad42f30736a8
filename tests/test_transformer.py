"""MultiheadAttention, scaled_dot_product_attention and the Transformer modules of ember.nn
against torch.nn from the same weights: outputs, attention weights, input and parameter
gradients, masks of every kind, state_dict round trips, and training steps.

PyTorch's inference fast path (used in eval mode when no gradient is needed) is a different
kernel; these comparisons run where PyTorch computes the layers as written (training mode or
inputs that require grad), which is what ember always computes."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from .conftest import requires_torch, torch
from .nn_compare import compare_call, load_from_torch, to_pair, train_both

pytestmark = requires_torch
RNG = np.random.default_rng(0)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def _both(name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    e = getattr(ember.nn, name)(*args, **kwargs).double()
    t = getattr(torch.nn, name)(*args, **kwargs).double()
    load_from_torch(e, t)
    return e, t


def _mask_pair(a: np.ndarray) -> tuple[Any, Any]:
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


# --------------------------------------------------------------------------- attention


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"batch_first": True},
        {"bias": False},
        {"kdim": 3, "vdim": 5},
        {"add_bias_kv": True},
        {"add_zero_attn": True},
        {"add_bias_kv": True, "add_zero_attn": True, "batch_first": True},
    ],
    ids=str,
)
def test_multihead_attention_matches_torch(kwargs: dict[str, Any], need_weights: bool) -> None:
    e, t = _both("MultiheadAttention", 8, 2, **kwargs)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    kd, vd = kwargs.get("kdim", 8), kwargs.get("vdim", 8)
    bf = kwargs.get("batch_first", False)
    shape = (lambda n, d: (3, n, d)) if bf else (lambda n, d: (n, 3, d))
    q, k, v = (to_pair(_x(*s)) for s in (shape(4, 8), shape(6, kd), shape(6, vd)))
    kpm = RNG.random((3, 6)) < 0.3
    kpm[:, 0] = False
    for extra in ({}, {"key_padding_mask": kpm}, {"attn_mask": RNG.random((4, 6)) < 0.3}):
        ek = {n: ember.from_numpy(m) for n, m in extra.items()}
        tk = {n: torch.from_numpy(m) for n, m in extra.items()}
        for average in (True, False):
            compare_call(
                lambda *a, kw=ek, av=average: e(*a, need_weights=need_weights,
                                                average_attn_weights=av, **kw),
                lambda *a, kw=tk, av=average: t(*a, need_weights=need_weights,
                                                average_attn_weights=av, **kw),
                (q[0], k[0], v[0]), (q[1], k[1], v[1]),
                list(e.parameters()), list(t.parameters()),
            )  # fmt: skip


@pytest.mark.parametrize("need_weights", [True, False])
def test_self_attention_masks_match_torch(need_weights: bool) -> None:
    e, t = _both("MultiheadAttention", 8, 4, batch_first=True)
    x = _x(2, 5, 8)
    float_mask = np.where(RNG.random((5, 5)) < 0.3, -np.inf, RNG.standard_normal((5, 5)))
    np.fill_diagonal(float_mask, 0.0)
    per_head = np.where(RNG.random((8, 5, 5)) < 0.3, -np.inf, 0.0)
    per_head[:, :, 0] = 0.0
    causal = np.triu(np.ones((5, 5), bool), 1)
    padding = np.array([[False] * 5, [False] * 3 + [True] * 2])
    cases = [
        {"attn_mask": causal},
        {"attn_mask": causal, "is_causal": True},
        {"attn_mask": float_mask},
        {"attn_mask": per_head},
        {"key_padding_mask": padding},
        {"key_padding_mask": np.where(padding, -np.inf, 0.0)},
        {"attn_mask": np.where(causal, -np.inf, 0.0), "key_padding_mask": padding},
    ]
    for case in cases:
        ek = {n: _mask_pair(m)[0] if isinstance(m, np.ndarray) else m for n, m in case.items()}
        tk = {n: _mask_pair(m)[1] if isinstance(m, np.ndarray) else m for n, m in case.items()}
        ex, tx = to_pair(x)
        compare_call(
            lambda a, kw=ek: e(a, a, a, need_weights=need_weights, **kw),
            lambda a, kw=tk: t(a, a, a, need_weights=need_weights, **kw),
            (ex,), (tx,), list(e.parameters()), list(t.parameters()),
        )  # fmt: skip


def test_unbatched_attention_matches_torch() -> None:
    e, t = _both("MultiheadAttention", 6, 3)
    q, k = to_pair(_x(4, 6)), to_pair(_x(5, 6))
    mask = RNG.random((3, 4, 5)) < 0.3
    mask[..., 0] = False
    for kw in ({}, {"key_padding_mask": np.array([False, True, False, False, True])},
               {"attn_mask": mask}):  # fmt: skip
        ek = {n: ember.from_numpy(m) for n, m in kw.items()}
        tk = {n: torch.from_numpy(m) for n, m in kw.items()}
        compare_call(
            lambda a, b, kw=ek: e(a, b, b, **kw),
            lambda a, b, kw=tk: t(a, b, b, **kw),
            (q[0], k[0]), (q[1], k[1]), list(e.parameters()), list(t.parameters()),
        )  # fmt: skip


def test_attention_errors_match_torch() -> None:
    for lib in (ember, torch):
        mha = lib.nn.MultiheadAttention(8, 2)
        x = lib.ones(4, 3, 8)
        with pytest.raises(RuntimeError):  # the causal hint needs the mask
            mha(x, x, x, is_causal=True)
        with pytest.raises(RuntimeError):
            mha(x, x, x, attn_mask=lib.zeros(3, 4, dtype=lib.bool))
        with pytest.raises(AssertionError):
            mha(x, x, x, key_padding_mask=lib.zeros(3, 4, 1, dtype=lib.bool))
        with pytest.raises(AssertionError):
            mha(x, x, x, attn_mask=lib.zeros(4, 4, dtype=lib.int64))
        with pytest.raises(AssertionError):
            lib.nn.MultiheadAttention(8, 3)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"scale": 0.3}, {"is_causal": True}, {"dropout_p": 0.0, "enable_gqa": True}],
    ids=str,
)
def test_scaled_dot_product_attention_matches_torch(kwargs: dict[str, Any]) -> None:
    heads_kv = 1 if kwargs.get("enable_gqa") else 4
    q, k, v = (
        to_pair(_x(2, 4, 5, 8)),
        to_pair(_x(2, heads_kv, 7, 8)),
        to_pair(_x(2, heads_kv, 7, 3)),
    )
    compare_call(
        lambda *a: F.scaled_dot_product_attention(*a, **kwargs),
        lambda *a: torch.nn.functional.scaled_dot_product_attention(*a, **kwargs),
        (q[0], k[0], v[0]), (q[1], k[1], v[1]),
    )  # fmt: skip
    if kwargs:
        return
    bool_mask = RNG.random((2, 1, 5, 7)) < 0.4
    bool_mask[0, 0, 2] = False  # a row that sees no key: zeros, as PyTorch's math
    float_mask = RNG.standard_normal((5, 7))
    for mask in (bool_mask, float_mask):
        em, tm = _mask_pair(mask)
        compare_call(
            lambda *a, m=em: F.scaled_dot_product_attention(*a, attn_mask=m),
            lambda *a, m=tm: torch.nn.functional.scaled_dot_product_attention(*a, attn_mask=m),
            (q[0], k[0], v[0]), (q[1], k[1], v[1]),
        )  # fmt: skip


# --------------------------------------------------------------------------- transformer


LAYER_KWARGS = [
    {},
    {"norm_first": True},
    {"activation": "gelu", "batch_first": True},
    {"activation": "gelu_module", "bias": False},
    {"layer_norm_eps": 1e-3, "norm_first": True, "batch_first": True},
]


def _layer_kwargs(kwargs: dict[str, Any], lib: Any) -> dict[str, Any]:
    out = dict(kwargs)
    if out.get("activation") == "gelu_module":
        out["activation"] = lib.nn.GELU(approximate="tanh")
    return out


def _seq(bf: bool, n: int, s: int, d: int) -> np.ndarray:
    return _x(n, s, d) if bf else _x(s, n, d)


def _layers(name: str, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """ember's and PyTorch's layer ``name`` (d_model 8, 2 heads, feed-forward 16, no
    dropout) with ``kwargs``, in double precision, ember's holding PyTorch's parameters."""
    e = getattr(ember.nn, name)(8, 2, 16, dropout=0.0, **_layer_kwargs(kwargs, ember))
    t = getattr(torch.nn, name)(8, 2, 16, dropout=0.0, **_layer_kwargs(kwargs, torch))
    e, t = e.double(), t.double()
    load_from_torch(e, t)
    return e, t


@pytest.mark.parametrize("kwargs", LAYER_KWARGS, ids=str)
def test_encoder_layer_matches_torch(kwargs: dict[str, Any]) -> None:
    e, t = _layers("TransformerEncoderLayer", kwargs)
    bf = kwargs.get("batch_first", False)
    src = _seq(bf, 3, 5, 8)
    causal = ember.nn.Transformer.generate_square_subsequent_mask(5).double()
    t_causal = torch.nn.Transformer.generate_square_subsequent_mask(5).double()
    padding = np.array([[False] * 5, [False] * 4 + [True], [False] * 2 + [True] * 3])
    for ek, tk in (
        ({}, {}),
        ({"src_mask": causal, "is_causal": True}, {"src_mask": t_causal, "is_causal": True}),
        ({"src_key_padding_mask": ember.from_numpy(padding)},
         {"src_key_padding_mask": torch.from_numpy(padding)}),
    ):  # fmt: skip
        ex, tx = to_pair(src)
        compare_call(
            lambda a, kw=ek: e(a, **kw), lambda a, kw=tk: t(a, **kw), (ex,), (tx,),
            list(e.parameters()), list(t.parameters()),
        )  # fmt: skip


@pytest.mark.parametrize("kwargs", LAYER_KWARGS, ids=str)
def test_decoder_layer_matches_torch(kwargs: dict[str, Any]) -> None:
    e, t = _layers("TransformerDecoderLayer", kwargs)
    bf = kwargs.get("batch_first", False)
    tgt, mem = _seq(bf, 3, 4, 8), _seq(bf, 3, 6, 8)
    mem_padding = np.zeros((3, 6), bool)
    mem_padding[1, 4:] = True
    causal = np.triu(np.ones((4, 4), bool), 1)
    for ek, tk in (
        ({}, {}),
        ({"tgt_mask": ember.from_numpy(causal), "tgt_is_causal": True,
          "memory_key_padding_mask": ember.from_numpy(mem_padding)},
         {"tgt_mask": torch.from_numpy(causal), "tgt_is_causal": True,
          "memory_key_padding_mask": torch.from_numpy(mem_padding)}),
    ):  # fmt: skip
        (et, tt), (em, tm) = to_pair(tgt), to_pair(mem)
        compare_call(
            lambda a, b, kw=ek: e(a, b, **kw), lambda a, b, kw=tk: t(a, b, **kw),
            (et, em), (tt, tm), list(e.parameters()), list(t.parameters()),
        )  # fmt: skip


def test_encoder_and_decoder_stacks_match_torch() -> None:
    for bf in (False, True):
        le = ember.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=bf)
        lt = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=bf)
        e = ember.nn.TransformerEncoder(le, 3, norm=ember.nn.LayerNorm(8)).double()
        t = torch.nn.TransformerEncoder(lt, 3, norm=torch.nn.LayerNorm(8)).double()
        load_from_torch(e, t)
        ex, tx = to_pair(_seq(bf, 2, 5, 8))
        e_mask = ember.nn.Transformer.generate_square_subsequent_mask(5).double()
        t_mask = torch.nn.Transformer.generate_square_subsequent_mask(5).double()
        compare_call(
            partial(e, mask=e_mask), partial(t, mask=t_mask), (ex,), (tx,),
            list(e.parameters()), list(t.parameters()),
        )  # fmt: skip
        ld = ember.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=bf)
        ltd = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=bf)
        ed, td = ember.nn.TransformerDecoder(ld, 2).double(), torch.nn.TransformerDecoder(ltd, 2)
        td = td.double()
        load_from_torch(ed, td)
        (et, tt), (em, tm) = to_pair(_seq(bf, 2, 4, 8)), to_pair(_seq(bf, 2, 5, 8))
        compare_call(ed, td, (et, em), (tt, tm), list(ed.parameters()), list(td.parameters()))


def test_full_transformer_matches_torch_and_round_trips_its_state() -> None:
    kw = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 2,
          "dim_feedforward": 16, "dropout": 0.0}  # fmt: skip
    e, t = _both("Transformer", **kw)
    assert list(e.state_dict()) == list(t.state_dict())
    src, tgt = to_pair(_x(6, 2, 8)), to_pair(_x(4, 2, 8))
    tgt_mask = ember.nn.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64)
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    padding = np.zeros((2, 6), bool)
    padding[0, 5:] = True
    compare_call(
        lambda a, b: e(a, b, tgt_mask=tgt_mask, src_key_padding_mask=ember.from_numpy(padding),
                       memory_key_padding_mask=ember.from_numpy(padding)),
        lambda a, b: t(a, b, tgt_mask=t_mask, src_key_padding_mask=torch.from_numpy(padding),
                       memory_key_padding_mask=torch.from_numpy(padding)),
        (src[0], tgt[0]), (src[1], tgt[1]), list(e.parameters()), list(t.parameters()),
    )  # fmt: skip
    # ember's state_dict loads back into PyTorch
    state = {k: torch.from_numpy(v.numpy().copy()) for k, v in e.state_dict().items()}
    fresh = torch.nn.Transformer(**kw).double()
    fresh.load_state_dict(state)
    for (n, a), (_, b) in zip(fresh.state_dict().items(), t.state_dict().items(), strict=True):
        assert torch.equal(a, b), n


def test_transformer_init_and_masks_follow_torch() -> None:
    m = ember.nn.Transformer(16, 4, 1, 1, 32)
    for name, p in m.named_parameters():
        if p.dim() > 1:  # xavier_uniform_: |w| <= sqrt(6 / (fan_in + fan_out))
            bound = (6.0 / (p.shape[0] + p.shape[1])) ** 0.5
            assert float(p.abs().max()) <= bound + 1e-6, name
    np.testing.assert_array_equal(
        ember.nn.Transformer.generate_square_subsequent_mask(4).numpy(),
        torch.nn.Transformer.generate_square_subsequent_mask(4).numpy(),
    )
    for lib in (ember, torch):
        model = lib.nn.Transformer(8, 2, 1, 1, 16)
        with pytest.raises(RuntimeError):
            model(lib.ones(5, 2, 8), lib.ones(4, 3, 8))
        with pytest.raises(RuntimeError):
            model(lib.ones(5, 2, 8), lib.ones(4, 2, 6))
        with pytest.raises(RuntimeError):
            lib.nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_training_a_transformer_encoder_matches_torch() -> None:
    def build(lib: Any) -> Any:
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                               norm_first=True)  # fmt: skip
        return lib.nn.Sequential(lib.nn.TransformerEncoder(layer, 2), lib.nn.Linear(8, 3))

    def loss(lib: Any, m: Any, b: tuple[Any, ...]) -> Any:
        out = m(b[0]).mean(1)
        return lib.nn.functional.cross_entropy(out, b[1])

    e, t = build(ember).double(), build(torch).double()
    batches = [(_x(4, 6, 8), RNG.integers(0, 3, 4)) for _ in range(4)]
    train_both(e, t, batches, loss)


def test_dropout_in_attention_is_applied_in_training_only() -> None:
    mha = ember.nn.MultiheadAttention(8, 2, dropout=0.5)
    x = ember.randn(4, 3, 8)
    w_train = mha(x, x, x)[1]
    mha.eval()
    w_eval = mha(x, x, x)[1]
    assert not np.allclose(w_train.detach().numpy(), w_eval.detach().numpy())
    np.testing.assert_allclose(w_eval.sum(-1).detach().numpy(), 1.0, rtol=1e-5)
