"""ember.nn.utils and the added ember.nn.init initializers against PyTorch's: gradient
clipping, parameters as one vector, variable-length sequences, weight normalization and
parametrizations (values, gradients, state_dict keys that load across libraries)."""

from __future__ import annotations

import math
import warnings
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


# --------------------------------------------------------------------------- clip_grad


def _with_grads(lib: Any, grads: list[np.ndarray]) -> list[Any]:
    params = []
    for g in grads:
        p = lib.nn.Parameter(lib.zeros(*g.shape, dtype=lib.float64))
        p.grad = lib.from_numpy(g.copy())
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3, float("inf"), 0.5])
@pytest.mark.parametrize("foreach", [None, True, False])
@pytest.mark.parametrize("max_norm", [0.1, 100.0])
def test_clip_grad_norm_matches_torch(norm_type: float, foreach: Any, max_norm: float) -> None:
    grads = [_x(3, 4), _x(5), _x(2, 2, 2)]
    ep, tp = _with_grads(ember, grads), _with_grads(torch, grads)
    ep.append(ember.nn.Parameter(ember.zeros(2)))  # no grad: skipped
    tp.append(torch.nn.Parameter(torch.zeros(2)))
    en = ember.nn.utils.clip_grad_norm_(ep, max_norm, norm_type, foreach=foreach)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type, foreach=foreach)
    assert_close(en, tn, 1e-12, 1e-10, "total norm")
    for e, t in zip(ep[:3], tp[:3], strict=True):
        assert_close(e.grad, t.grad, 1e-12, 1e-10, "clipped grad")


def test_clip_grad_norm_edges_match_torch() -> None:
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.ones(2))
        assert float(lib.nn.utils.clip_grad_norm_([p], 1.0)) == 0.0  # no grads: 0
        p.grad = lib.tensor([float("nan"), 1.0])
        with pytest.raises(RuntimeError):
            lib.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
        total = lib.nn.utils.clip_grad_norm_(p, 1.0)  # a single tensor is accepted too
        assert math.isnan(float(total))
    e = ember.nn.utils.get_total_norm([ember.ones(3), ember.ones(4)], 1.0)
    t = torch.nn.utils.get_total_norm([torch.ones(3), torch.ones(4)], 1.0)
    assert float(e) == float(t) == 7.0


@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_value_matches_torch(foreach: Any) -> None:
    grads = [_x(3, 4) * 3, _x(6)]
    ep, tp = _with_grads(ember, grads), _with_grads(torch, grads)
    ember.nn.utils.clip_grad_value_(ep, 0.7, foreach=foreach)
    torch.nn.utils.clip_grad_value_(tp, 0.7, foreach=foreach)
    for e, t in zip(ep, tp, strict=True):
        assert_close(e.grad, t.grad, 0, 0, "clamped grad")


def test_clipping_inside_training_matches_torch() -> None:
    def build(lib: Any) -> Any:
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2))

    e, t = build(ember).double(), build(torch).double()
    load_from_torch(e, t)
    eo = ember.optim.SGD(e.parameters(), lr=0.5)
    to = torch.optim.SGD(t.parameters(), lr=0.5)
    for _ in range(3):
        x, y = _x(8, 4), _x(8, 2) * 10
        for lib, m, opt in ((ember, e, eo), (torch, t, to)):
            opt.zero_grad()
            ((m(lib.from_numpy(x)) - lib.from_numpy(y)) ** 2).mean().backward()
            lib.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
            lib.nn.utils.clip_grad_value_(m.parameters(), 0.2)
            opt.step()
    tp = dict(t.named_parameters())
    for name, p in e.named_parameters():
        assert_close(p, tp[name], 1e-10, 1e-8, name)


# --------------------------------------------------------------------------- vectors


def test_parameters_to_vector_and_back() -> None:
    e, t = ember.nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    load_from_torch(e, t)
    ev = ember.nn.utils.parameters_to_vector(e.parameters())
    tv = torch.nn.utils.parameters_to_vector(t.parameters())
    assert_close(ev, tv, 0, 0, "vector")
    new = _x(8)
    ember.nn.utils.vector_to_parameters(ember.from_numpy(new), e.parameters())
    torch.nn.utils.vector_to_parameters(torch.from_numpy(new), t.parameters())
    for (n, a), (_, b) in zip(e.named_parameters(), t.named_parameters(), strict=True):
        assert_close(a, b, 0, 0, n)
        assert a.requires_grad and a.grad_fn is None
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.nn.utils.vector_to_parameters([1.0, 2.0], lib.nn.Linear(1, 1).parameters())


# --------------------------------------------------------------------------- rnn utils


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_pad_round_trip_matches_torch(batch_first: bool, enforce_sorted: bool) -> None:
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = _x(4, 5, 2) if batch_first else _x(5, 4, 2)
    ex, tx = to_pair(x)

    def run(lib: Any, a: Any) -> Any:
        u = lib.nn.utils.rnn
        packed = u.pack_padded_sequence(a, lengths, batch_first, enforce_sorted)
        padded, lens = u.pad_packed_sequence(packed, batch_first, padding_value=-1.0,
                                             total_length=6)  # fmt: skip
        return packed.data, packed.batch_sizes, padded, lens

    compare_call(lambda a: run(ember, a), lambda a: run(torch, a), (ex,), (tx,))
    ep = erum.pack_padded_sequence(ex, lengths, batch_first, enforce_sorted)
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted)
    for name in ("sorted_indices", "unsorted_indices"):
        a, b = getattr(ep, name), getattr(tp, name)
        assert (a is None) == (b is None), name
        if b is not None:
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_pad_sequence_and_pack_sequence_match_torch() -> None:
    seqs = [_x(4, 3), _x(2, 3), _x(5, 3)]
    pairs = [to_pair(s) for s in seqs]
    for kw in ({}, {"batch_first": True, "padding_value": 2.5}, {"padding_side": "left"},
               {"batch_first": True, "padding_side": "left"}):  # fmt: skip
        compare_call(
            lambda *a, kw=kw: erum.pad_sequence(list(a), **kw),
            lambda *a, kw=kw: torch.nn.utils.rnn.pad_sequence(list(a), **kw),
            [p[0] for p in pairs], [p[1] for p in pairs],
        )  # fmt: skip
    compare_call(
        lambda *a: erum.pack_sequence(list(a), enforce_sorted=False).data,
        lambda *a: torch.nn.utils.rnn.pack_sequence(list(a), enforce_sorted=False).data,
        [p[0] for p in pairs], [p[1] for p in pairs],
    )  # fmt: skip
    back = erum.unpack_sequence(erum.pack_sequence([p[0] for p in pairs], enforce_sorted=False))
    for b, s in zip(back, seqs, strict=True):
        np.testing.assert_array_equal(b.detach().numpy(), s)
    for lib in (ember, torch):
        u = lib.nn.utils.rnn
        with pytest.raises(RuntimeError):  # unsorted lengths with enforce_sorted
            u.pack_padded_sequence(lib.zeros(4, 2), [1, 3])
        with pytest.raises(RuntimeError):
            u.pack_padded_sequence(lib.zeros(4, 2), [3, 0])
        with pytest.raises(ValueError):
            u.pad_packed_sequence(u.pack_sequence([lib.ones(3), lib.ones(2)]), total_length=2)
        with pytest.raises(RuntimeError):
            u.pad_sequence([lib.ones(3)], padding_side="middle")


def test_packed_sequence_fields() -> None:
    p = erum.pack_sequence([ember.ones(3, 2), ember.ones(1, 2)])
    assert isinstance(p, tuple) and p._fields == torch.nn.utils.rnn.PackedSequence._fields
    assert p.batch_sizes.dtype is ember.int64 and p.batch_sizes.tolist() == [2, 1, 1]
    assert p.double().data.dtype is ember.float64
    q = erum.PackedSequence(p.data, p.batch_sizes, ember.tensor([1, 0]))
    assert q.unsorted_indices.tolist() == [1, 0]


# --------------------------------------------------------------------------- weight norm


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_hook_matches_torch(dim: Any) -> None:
    warnings.simplefilter("ignore", FutureWarning)
    e = ember.nn.utils.weight_norm(ember.nn.Linear(4, 3).double(), dim=dim)
    t = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    load_from_torch(e, t)
    ex, tx = to_pair(_x(5, 4))
    compare_call(e, t, (ex,), (tx,), list(e.parameters()), list(t.parameters()))
    ember.nn.utils.remove_weight_norm(e)
    torch.nn.utils.remove_weight_norm(t)
    assert list(e.state_dict()) == list(t.state_dict())
    assert_close(e.weight, t.weight, 1e-12, 1e-10, "weight after removal")
    with pytest.raises(ValueError):
        ember.nn.utils.remove_weight_norm(e)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrized_weight_norm_matches_torch(dim: Any) -> None:
    wn = (ember.nn.utils.parametrizations.weight_norm,
          torch.nn.utils.parametrizations.weight_norm)  # fmt: skip
    e = wn[0](ember.nn.Conv2d(2, 3, 3).double(), dim=dim)
    t = wn[1](torch.nn.Conv2d(2, 3, 3).double(), dim=dim)
    assert type(e).__name__ == type(t).__name__ == "ParametrizedConv2d"
    assert list(e.state_dict()) == list(t.state_dict())
    load_from_torch(e, t)
    assert_close(e.weight, t.weight, 1e-12, 1e-10, "weight")
    ex, tx = to_pair(_x(2, 2, 5, 5))
    compare_call(e, t, (ex,), (tx,), list(e.parameters()), list(t.parameters()))
    with ember.nn.utils.parametrize.cached():
        assert e.weight is e.weight
    ember.nn.utils.parametrize.remove_parametrizations(e, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight")
    assert type(e).__name__ == "Conv2d" and list(e.state_dict()) == list(t.state_dict())
    assert_close(e.weight, t.weight, 1e-12, 1e-10, "weight after removal")


def test_training_with_weight_norm_matches_torch() -> None:
    def build(lib: Any) -> Any:
        lib.manual_seed(0)
        wn = lib.nn.utils.parametrizations.weight_norm
        return lib.nn.Sequential(wn(lib.nn.Linear(4, 6)), lib.nn.ReLU(), wn(lib.nn.Linear(6, 2)))

    e, t = build(ember).double(), build(torch).double()
    batches = [(_x(8, 4), _x(8, 2)) for _ in range(4)]
    train_both(e, t, batches, lambda lib, m, b: ((m(b[0]) - b[1]) ** 2).mean())


def test_parametrize_register_assign_and_chain() -> None:
    P, TP = ember.nn.utils.parametrize, torch.nn.utils.parametrize

    def symmetric(lib: Any) -> Any:
        class Symmetric(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                return x.triu() + x.triu(1).transpose(0, 1)

            def right_inverse(self, a: Any) -> Any:
                return a.triu()

        return Symmetric()

    def scaled(lib: Any) -> Any:
        class Scale(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                return 3 * x

        return Scale()

    e, t = ember.nn.Linear(3, 3).double(), torch.nn.Linear(3, 3).double()
    load_from_torch(e, t)
    P.register_parametrization(e, "weight", symmetric(ember))
    TP.register_parametrization(t, "weight", symmetric(torch))
    P.register_parametrization(e, "weight", scaled(ember), unsafe=True)
    TP.register_parametrization(t, "weight", scaled(torch), unsafe=True)
    assert list(e.state_dict()) == list(t.state_dict())
    assert P.is_parametrized(e) and P.is_parametrized(e, "weight")
    assert not P.is_parametrized(e, "bias")
    assert_close(e.weight, t.weight, 0, 1e-12, "parametrized weight")
    ex, tx = to_pair(_x(2, 3))
    compare_call(e, t, (ex,), (tx,), list(e.parameters()), list(t.parameters()))
    for m in (e, t):  # Scale has no right_inverse: assigning the weight cannot be undone
        with pytest.raises(RuntimeError):
            m.weight = ember.ones(3, 3) if m is e else torch.ones(3, 3)
    assert P.type_before_parametrizations(e) is ember.nn.Linear
    P.remove_parametrizations(e, "weight", leave_parametrized=False)
    TP.remove_parametrizations(t, "weight", leave_parametrized=False)
    assert type(e) is ember.nn.Linear and not P.is_parametrized(e)
    assert_close(e.weight, t.weight, 0, 0, "the original, kept")
    with pytest.raises(ValueError):
        P.remove_parametrizations(e, "weight")
    one = ember.nn.Linear(3, 3)
    P.register_parametrization(one, "weight", symmetric(ember))
    new = _x(3, 3).astype(np.float32)
    one.weight = ember.from_numpy(new)  # right_inverse keeps the upper triangle
    np.testing.assert_allclose(one.weight.detach().numpy(), np.triu(new) + np.triu(new, 1).T)
    with pytest.raises(ValueError):  # a float64 value for a float32 original
        one.weight = ember.from_numpy(new.astype(np.float64))


# --------------------------------------------------------------------------- init


@pytest.mark.parametrize(
    "args",
    [
        ("linear",),
        ("conv2d",),
        ("sigmoid",),
        ("tanh",),
        ("relu",),
        ("leaky_relu",),
        ("leaky_relu", 0.2),
        ("leaky_relu", 1),
        ("selu",),
    ],  # fmt: skip
)
def test_calculate_gain_matches_torch(args: tuple[Any, ...]) -> None:
    assert ember.nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


def test_init_errors_match_torch() -> None:
    for lib in (ember, torch):
        init = lib.nn.init
        with pytest.raises(ValueError):
            init.calculate_gain("softmax")
        with pytest.raises(ValueError):
            init.calculate_gain("leaky_relu", True)
        with pytest.raises(ValueError):
            init.kaiming_uniform_(lib.empty(3, 4), mode="fan_avg")
        with pytest.raises(ValueError):
            init.orthogonal_(lib.empty(3))
        with pytest.raises(ValueError):
            init.sparse_(lib.empty(3, 4, 5), 0.1)
        with pytest.raises(ValueError):
            init.dirac_(lib.empty(3, 4))
        with pytest.raises(ValueError):
            init.dirac_(lib.empty(3, 4, 3), groups=2)
        with pytest.raises(ValueError):
            init.eye_(lib.empty(3))
        with pytest.raises(ValueError):
            init.xavier_uniform_(lib.empty(3))


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "FAN_OUT"])
@pytest.mark.parametrize("nonlinearity", ["relu", "leaky_relu", "tanh"])
def test_kaiming_and_xavier_match_torch_distributions(mode: str, nonlinearity: str) -> None:
    shape = (60, 40, 3, 3)
    cases: list[tuple[str, dict[str, Any]]] = [
        ("kaiming_uniform_", {"a": 0.3, "mode": mode, "nonlinearity": nonlinearity}),
        ("kaiming_normal_", {"mode": mode, "nonlinearity": nonlinearity}),
        ("xavier_uniform_", {"gain": 1.7}),
        ("xavier_normal_", {"gain": 0.5}),
    ]
    for name, kw in cases:
        e = getattr(ember.nn.init, name)(ember.empty(*shape), **kw).numpy()
        t = getattr(torch.nn.init, name)(torch.empty(*shape), **kw).numpy()
        np.testing.assert_allclose(e.std(), t.std(), rtol=0.03, err_msg=name)
        if "uniform" in name:  # the same bound
            np.testing.assert_allclose(np.abs(e).max(), np.abs(t).max(), rtol=0.01, err_msg=name)


def test_new_initializers_match_torch_definitions() -> None:
    e = ember.nn.init.trunc_normal_(ember.empty(100000), mean=1.0, std=2.0, a=-1.0, b=2.0)
    t = torch.nn.init.trunc_normal_(torch.empty(100000), mean=1.0, std=2.0, a=-1.0, b=2.0)
    en, tn = e.numpy(), t.numpy()
    assert en.min() >= -1.0 and en.max() <= 2.0
    np.testing.assert_allclose([en.mean(), en.std()], [tn.mean(), tn.std()], rtol=0.02)
    for shape, gain in (((6, 4), 1.0), ((3, 8), 2.0), ((4, 2, 3), 0.5)):
        w = ember.nn.init.orthogonal_(ember.empty(*shape), gain=gain).numpy().reshape(shape[0], -1)
        small = min(w.shape)
        gram = w @ w.T if w.shape[0] == small else w.T @ w
        np.testing.assert_allclose(gram, gain**2 * np.eye(small), atol=1e-5)
    s = ember.nn.init.sparse_(ember.empty(20, 7), 0.25, std=0.5).numpy()
    assert ((s == 0).sum(0) == math.ceil(0.25 * 20)).all()
    for shape, groups in (((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((4, 2, 3, 3, 3), 2)):
        e = ember.nn.init.dirac_(ember.empty(*shape), groups).numpy()
        t = torch.nn.init.dirac_(torch.empty(*shape), groups).numpy()
        np.testing.assert_array_equal(e, t)
    np.testing.assert_array_equal(
        ember.nn.init.eye_(ember.empty(3, 5)).numpy(), torch.nn.init.eye_(torch.empty(3, 5))
    )
