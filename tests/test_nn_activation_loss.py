"""Activation and loss modules and functions of ember.nn against torch.nn, from the same
weights and inputs: outputs, input and parameter gradients, reprs, in-place forms, errors,
and a few training steps of small models built from them.

(Each op's own values, edges, dtypes and gradients are checked by tests/test_ops.py.)"""

from __future__ import annotations

import contextlib
import warnings
from functools import partial
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from .conftest import requires_torch, torch
from .nn_compare import compare_call, compare_module, to_pair, train_both

pytestmark = requires_torch
RNG = np.random.default_rng(0)


def _x(*shape: int, low: float = -4.0, high: float = 4.0) -> np.ndarray:
    return RNG.uniform(low, high, shape)


# --------------------------------------------------------------------------- activations

ACTIVATIONS = [
    ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2,), {"inplace": True}),
    ("ELU", (), {}),
    ("ELU", (0.5,), {"inplace": True}),
    ("SELU", (), {}),
    ("SELU", (), {"inplace": True}),
    ("CELU", (1.5,), {}),
    ("CELU", (), {"inplace": True}),
    ("Softplus", (), {}),
    ("Softplus", (2.0, 3.0), {}),
    ("Hardtanh", (), {}),
    ("Hardtanh", (-2.0, 0.5), {"inplace": True}),
    ("ReLU6", (), {}),
    ("ReLU6", (), {"inplace": True}),
    ("Hardswish", (), {}),
    ("Hardswish", (), {"inplace": True}),
    ("Hardsigmoid", (), {}),
    ("Hardsigmoid", (), {"inplace": True}),
    ("Mish", (), {}),
    ("Mish", (), {"inplace": True}),
    ("LogSigmoid", (), {}),
    ("LogSoftmax", (), {"dim": 1}),
    ("Softmin", (), {"dim": -1}),
    ("Softsign", (), {}),
    ("Tanhshrink", (), {}),
    ("Softshrink", (), {}),
    ("Softshrink", (1.0,), {}),
    ("Hardshrink", (), {}),
    ("Hardshrink", (1.5,), {}),
    ("Threshold", (0.5, -2.0), {}),
    ("Threshold", (0.5, -2.0), {"inplace": True}),
    ("GLU", (), {}),
    ("GLU", (0,), {}),
    ("PReLU", (), {}),
    ("PReLU", (3,), {"init": 0.1}),
]


@pytest.mark.parametrize("name, args, kwargs", ACTIVATIONS, ids=lambda v: str(v))
def test_activation_module_matches_torch(name: str, args: tuple[Any, ...], kwargs: Any) -> None:
    e, t = getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(e) == repr(t)
    x = _x(4, 3, 2)
    if kwargs.get("inplace"):  # an in-place module writes its input: give it a non-leaf
        ex, tx = to_pair(x)
        compare_call(lambda a: e(a * 1.0), lambda a: t(a * 1.0), (ex,), (tx,))
        ey, ty = ember.from_numpy(x.copy()), torch.from_numpy(x.copy())
        assert e(ey) is ey and t(ty) is ty
        np.testing.assert_allclose(ey.numpy(), ty.numpy(), rtol=1e-6, atol=1e-7)
    else:
        compare_module(e.double(), t.double(), x)
        e.float()
        t.float()
        compare_module(e, t, x.astype(np.float32))


@pytest.mark.parametrize(
    "name, args",
    [
        ("leaky_relu", (0.3,)),
        ("elu", (0.7,)),
        ("selu", ()),
        ("celu", (0.5,)),
        ("softplus", (1.5, 4.0)),
        ("hardtanh", (-0.5, 2.0)),
        ("relu6", ()),
        ("hardswish", ()),
        ("hardsigmoid", ()),
        ("mish", ()),
        ("logsigmoid", ()),
        ("softshrink", (0.7,)),
        ("hardshrink", (0.7,)),
        ("threshold", (1.0, 5.0)),
        ("glu", (-1,)),
        ("softsign", ()),
        ("tanhshrink", ()),
        ("softmin", (0,)),
    ],
)
def test_functional_activation_matches_torch(name: str, args: tuple[Any, ...]) -> None:
    ex, tx = to_pair(_x(3, 4))
    compare_call(
        lambda a: getattr(F, name)(a, *args),
        lambda a: getattr(torch.nn.functional, name)(a, *args),
        (ex,),
        (tx,),
    )


@pytest.mark.parametrize(
    "name", ["elu_", "leaky_relu_", "hardtanh_", "celu_", "selu_", "threshold_"]
)
def test_functional_in_place_names(name: str) -> None:
    x = _x(3, 4)
    args = (0.5, 2.0) if name == "threshold_" else ()
    ex, tx = ember.from_numpy(x.copy()), torch.from_numpy(x.copy())
    assert getattr(F, name)(ex, *args) is ex
    getattr(torch.nn.functional, name)(tx, *args)
    np.testing.assert_allclose(ex.numpy(), tx.numpy(), rtol=1e-6, atol=1e-7)


def test_prelu_per_channel_gradient_reaches_the_weight() -> None:
    e, t = ember.nn.PReLU(3).double(), torch.nn.PReLU(3).double()
    compare_module(e, t, _x(2, 3, 5, 4))
    compare_module(e, t, _x(4, 3))


def test_activation_errors_match_torch() -> None:
    for lib in (ember, torch):
        with pytest.raises(ValueError):
            lib.nn.functional.hardtanh(lib.ones(3), 2.0, 1.0)
        with pytest.raises(AssertionError):
            lib.nn.Hardtanh(1.0, 0.0)
        with pytest.raises(RuntimeError):
            lib.nn.functional.glu(lib.ones(()))
        with pytest.raises(RuntimeError):
            lib.nn.functional.glu(lib.ones(3))
        with pytest.raises(RuntimeError):
            lib.nn.PReLU(3)(lib.ones(2, 4))
        with pytest.raises(NotImplementedError):
            lib.nn.functional.leaky_relu(lib.ones(3, dtype=lib.int64))


def test_in_place_activation_on_a_leaf_that_requires_grad_raises() -> None:
    for lib in (ember, torch):
        with pytest.raises(RuntimeError):
            lib.nn.functional.elu(lib.ones(3, requires_grad=True), inplace=True)


def test_double_backward_through_activations() -> None:
    for name in ("elu", "softplus", "logsigmoid", "glu", "mish", "hardswish", "celu"):
        ex, tx = to_pair(_x(3, 4))
        eg = ember.autograd.grad(getattr(F, name)(ex).sum(), ex, create_graph=True)[0]
        tg = torch.autograd.grad(
            getattr(torch.nn.functional, name)(tx).sum(), tx, create_graph=True
        )[0]
        e2 = ember.autograd.grad((eg * eg).sum(), ex)[0]
        t2 = torch.autograd.grad((tg * tg).sum(), tx)[0]
        np.testing.assert_allclose(e2.numpy(), t2.numpy(), rtol=1e-6, atol=1e-8, err_msg=name)


def test_training_an_mlp_of_activations_matches_torch() -> None:
    def build(lib: Any) -> Any:
        nn = lib.nn
        lib.manual_seed(0)
        return nn.Sequential(
            nn.Linear(6, 8), nn.PReLU(8), nn.Linear(8, 8), nn.ELU(), nn.Linear(8, 8),
            nn.Mish(), nn.Linear(8, 8), nn.Hardswish(), nn.Linear(8, 8), nn.LeakyReLU(0.1),
            nn.Linear(8, 8), nn.Softplus(), nn.Linear(8, 6), nn.GLU(), nn.LogSoftmax(1),
        )  # fmt: skip

    e, t = build(ember).double(), build(torch).double()
    batches = [(_x(5, 6), RNG.integers(0, 3, 5)) for _ in range(4)]
    train_both(e, t, batches, lambda lib, m, b: lib.nn.functional.nll_loss(m(b[0]), b[1]))


# --------------------------------------------------------------------------- losses

REDUCTIONS = ["none", "mean", "sum"]


def _signs(*shape: int) -> np.ndarray:
    return RNG.choice([-1.0, 1.0], shape)


def _loss_inputs(name: str) -> tuple[list[np.ndarray], list[bool]]:
    """Inputs of loss ``name`` and whether each is differentiable (PyTorch's view)."""
    x, y = _x(4, 5), _x(4, 5)
    probs = RNG.uniform(0.05, 0.95, (4, 5))
    table: dict[str, tuple[list[np.ndarray], list[bool]]] = {
        "BCELoss": ([probs, RNG.uniform(0, 1, (4, 5))], [True, True]),
        "BCEWithLogitsLoss": ([x, RNG.uniform(0, 1, (4, 5))], [True, True]),
        "SmoothL1Loss": ([x, y], [True, True]),
        "HuberLoss": ([x, y], [True, True]),
        "L1Loss": ([x, y], [True, True]),
        "MSELoss": ([x, y], [True, True]),
        "KLDivLoss": ([np.log(probs), RNG.uniform(0.01, 1, (4, 5))], [True, True]),
        "SoftMarginLoss": ([x, _signs(4, 5)], [True, False]),
        "MultiLabelSoftMarginLoss": ([x, RNG.integers(0, 2, (4, 5)).astype(float)], [True, True]),
        "PoissonNLLLoss": ([x / 2, RNG.uniform(0, 4, (4, 5))], [True, True]),
        "GaussianNLLLoss": ([x, y, RNG.uniform(0.1, 2, (4, 5))], [True, True, True]),
        "MarginRankingLoss": ([_x(6), _x(6), _signs(6)], [True, True, False]),
        "HingeEmbeddingLoss": ([x, _signs(4, 5)], [True, False]),
        "CosineEmbeddingLoss": ([x, y, _signs(4)], [True, True, False]),
        "TripletMarginLoss": ([x, y, _x(4, 5)], [True, True, True]),
        "NLLLoss": ([np.log(probs), RNG.integers(0, 5, 4)], [True, False]),
        "CrossEntropyLoss": ([x, RNG.integers(0, 5, 4)], [True, False]),
    }
    return table[name]


LOSSES = [
    ("BCELoss", {}),
    ("BCELoss", {"weight": "w5"}),
    ("BCEWithLogitsLoss", {}),
    ("BCEWithLogitsLoss", {"weight": "w5", "pos_weight": "w5"}),
    ("SmoothL1Loss", {}),
    ("SmoothL1Loss", {"beta": 0.5}),
    ("SmoothL1Loss", {"beta": 0.0}),
    ("HuberLoss", {}),
    ("HuberLoss", {"delta": 2.5}),
    ("KLDivLoss", {}),
    ("KLDivLoss", {"log_target": True}),
    ("SoftMarginLoss", {}),
    ("MultiLabelSoftMarginLoss", {}),
    ("MultiLabelSoftMarginLoss", {"weight": "w5"}),
    ("PoissonNLLLoss", {}),
    ("PoissonNLLLoss", {"log_input": False, "full": True}),
    ("GaussianNLLLoss", {}),
    ("GaussianNLLLoss", {"full": True, "eps": 0.5}),
    ("MarginRankingLoss", {"margin": 0.5}),
    ("HingeEmbeddingLoss", {"margin": 2.0}),
    ("CosineEmbeddingLoss", {"margin": 0.2}),
    ("TripletMarginLoss", {}),
    ("TripletMarginLoss", {"p": 1.0, "swap": True, "margin": 3.0}),
    ("NLLLoss", {"weight": "w5"}),
    ("NLLLoss", {"ignore_index": 2}),
    ("CrossEntropyLoss", {"weight": "w5", "ignore_index": 1, "label_smoothing": 0.1}),
]


def _kwargs(kwargs: dict[str, Any], lib: Any) -> dict[str, Any]:
    w5 = np.linspace(0.5, 2.0, 5)
    out = dict(kwargs)
    for k, v in kwargs.items():
        if v == "w5":
            out[k] = ember.from_numpy(w5) if lib is ember else torch.from_numpy(w5)
    return out


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, kwargs", LOSSES, ids=lambda v: str(v))
def test_loss_module_matches_torch(name: str, kwargs: dict[str, Any], reduction: str) -> None:
    kw = {**kwargs, "reduction": reduction}
    e = getattr(ember.nn, name)(**_kwargs(kw, ember))
    t = getattr(torch.nn, name)(**_kwargs(kw, torch))
    arrays, grads = _loss_inputs(name)
    pairs = [to_pair(a, g) for a, g in zip(arrays, grads, strict=True)]
    warns = name == "KLDivLoss" and reduction == "mean"  # both warn that 'mean' is not KL
    with pytest.warns(UserWarning, match="batchmean") if warns else contextlib.nullcontext():
        compare_call(e, t, [p[0] for p in pairs], [p[1] for p in pairs], atol=1e-7, rtol=1e-6)


def test_kl_div_batchmean_matches_torch() -> None:
    inp, tgt = np.log(RNG.uniform(0.05, 1, (6, 4))), RNG.uniform(0, 1, (6, 4))
    for log_target in (False, True):
        ex, tx = to_pair(inp)
        et, tt = to_pair(np.log(tgt) if log_target else tgt)
        kw = {"reduction": "batchmean", "log_target": log_target}
        compare_call(
            partial(F.kl_div, **kw), partial(torch.nn.functional.kl_div, **kw), (ex, et), (tx, tt)
        )


def test_gaussian_nll_variance_shapes() -> None:
    x, y = _x(4, 3), _x(4, 3)
    for var in (RNG.uniform(0.1, 1, (4,)), RNG.uniform(0.1, 1, (4, 1)), 0.7):
        pairs = [to_pair(a) for a in (x, y)]
        ev, tv = to_pair(var) if isinstance(var, np.ndarray) else (var, var)
        compare_call(
            F.gaussian_nll_loss, torch.nn.functional.gaussian_nll_loss,
            (*[p[0] for p in pairs], ev), (*[p[1] for p in pairs], tv),
        )  # fmt: skip
    for lib in (ember, torch):
        with pytest.raises(ValueError):
            lib.nn.functional.gaussian_nll_loss(lib.ones(4, 3), lib.ones(4, 3), lib.ones(2, 3))
        with pytest.raises(ValueError):
            lib.nn.functional.gaussian_nll_loss(lib.ones(4, 3), lib.ones(4, 3), -lib.ones(4, 3))


def _ctc_case(t: int = 12, n: int = 4, c: int = 6) -> tuple[np.ndarray, ...]:
    logits = RNG.standard_normal((t, n, c))
    targets = RNG.integers(1, c, (n, 5))
    targets[0, :3] = [2, 2, 2]  # repeats need blanks between them
    input_lengths = np.array([t, t - 2, t - 5, t])
    target_lengths = np.array([5, 3, 0, 4])
    return logits, targets, input_lengths, target_lengths


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("layout", ["padded", "concatenated", "lists"])
def test_ctc_loss_matches_torch(reduction: str, zero_infinity: bool, layout: str) -> None:
    logits, targets, il, tl = _ctc_case()
    if zero_infinity:
        il = np.array([3, il[1], il[2], il[3]])  # five labels in three steps: impossible
    e = ember.nn.CTCLoss(0, reduction, zero_infinity)
    t = torch.nn.CTCLoss(0, reduction, zero_infinity)
    el, tl_ = to_pair(logits)
    if layout == "concatenated":
        flat = np.concatenate([targets[i, : tl[i]] for i in range(4)])
        e_args = (ember.from_numpy(flat), ember.from_numpy(il), ember.from_numpy(tl))
        t_args = (torch.from_numpy(flat), torch.from_numpy(il), torch.from_numpy(tl))
    elif layout == "lists":
        e_args = (ember.from_numpy(targets), il.tolist(), tl.tolist())
        t_args = (torch.from_numpy(targets), il.tolist(), tl.tolist())
    else:
        e_args = (ember.from_numpy(targets), ember.from_numpy(il), ember.from_numpy(tl))
        t_args = (torch.from_numpy(targets), torch.from_numpy(il), torch.from_numpy(tl))
    compare_call(
        lambda x, *a: e(x.log_softmax(2), *a),
        lambda x, *a: t(x.log_softmax(2), *a),
        (el, *e_args),
        (tl_, *t_args),
        atol=1e-6,
        rtol=1e-6,
    )


def test_ctc_loss_unbatched_and_blank() -> None:
    logits = RNG.standard_normal((9, 5))
    ex, tx = to_pair(logits)
    compare_call(
        lambda x: F.ctc_loss(x.log_softmax(1), ember.tensor([1, 3, 3]), [9], [3], blank=4),
        lambda x: torch.nn.functional.ctc_loss(
            x.log_softmax(1), torch.tensor([1, 3, 3]), [9], [3], blank=4
        ),
        (ex,),
        (tx,),
    )


def test_ctc_loss_float32_long_sequence() -> None:
    logits = RNG.standard_normal((200, 3, 20)).astype(np.float32)
    targets = RNG.integers(1, 20, (3, 40))
    il, tl = [200, 180, 150], [40, 30, 35]
    ex, tx = to_pair(logits)
    compare_call(
        lambda x: F.ctc_loss(x.log_softmax(2), ember.from_numpy(targets), il, tl),
        lambda x: torch.nn.functional.ctc_loss(x.log_softmax(2), torch.from_numpy(targets), il, tl),
        (ex,),
        (tx,),
        atol=1e-5,
        rtol=1e-4,
    )


def test_loss_errors_match_torch() -> None:
    for lib in (ember, torch):
        nn, Fn = lib.nn, lib.nn.functional
        with pytest.raises(ValueError):  # target size differs
            Fn.binary_cross_entropy(lib.full((3,), 0.5), lib.full((3, 1), 0.5))
        with pytest.raises(RuntimeError):
            Fn.binary_cross_entropy(lib.full((3,), 2.0), lib.full((3,), 0.5))
        with pytest.raises(ValueError):
            Fn.mse_loss(lib.ones(3), lib.ones(3), reduction="average")
        with pytest.raises(RuntimeError):
            Fn.margin_ranking_loss(lib.ones(3), lib.ones(3), lib.ones(3, 1))
        with pytest.raises(ValueError):
            nn.TripletMarginLoss(margin=0.0)
        with pytest.raises(RuntimeError):
            Fn.cosine_embedding_loss(lib.ones(3, 4), lib.ones(3, 4), lib.ones(3, 1))
        with pytest.raises(RuntimeError):
            Fn.smooth_l1_loss(lib.ones(3), lib.ones(3), beta=-1.0)
        with pytest.raises(RuntimeError):
            Fn.huber_loss(lib.ones(3), lib.ones(3), delta=0.0)
        with pytest.raises(ValueError):
            Fn.poisson_nll_loss(lib.ones(3), lib.ones(3), reduction="batchmean")
        with pytest.raises(RuntimeError):
            Fn.ctc_loss(lib.zeros(5, 2, 4), lib.ones(2, 3, dtype=lib.int64), [6, 5], [3, 3])
        for size in (4, 6):  # concatenated targets: exactly the sum of the lengths (5)
            with pytest.raises(RuntimeError, match="to have size 5 at dimension 0"):
                Fn.ctc_loss(lib.zeros(6, 2, 4), lib.ones(size, dtype=lib.int64), [6, 6], [2, 3])
        with pytest.raises(ValueError):  # a ValueError in PyTorch (nll_loss_nd's check)
            Fn.nll_loss(lib.zeros(3, 4), lib.zeros(2, dtype=lib.int64))
        with pytest.raises(ValueError):
            Fn.cross_entropy(lib.zeros(3, 4), lib.zeros(2, dtype=lib.int64))
        with pytest.raises((IndexError, RuntimeError)):
            Fn.nll_loss(lib.zeros(3, 4), lib.tensor([0, 1, 7]))


def test_legacy_size_average_and_reduce_flags() -> None:
    x, y = _x(3, 4), _x(3, 4)
    warnings.filterwarnings("ignore", "size_average and reduce", UserWarning)
    for sa, rd in ((False, None), (None, False), (True, True)):
        ex, tx = to_pair(x)
        kw = {"size_average": sa, "reduce": rd}
        compare_call(
            partial(F.smooth_l1_loss, **kw),
            partial(torch.nn.functional.smooth_l1_loss, **kw),
            (ex, ember.from_numpy(y)),
            (tx, torch.from_numpy(y)),
        )


def test_training_with_losses_matches_torch() -> None:
    def build(lib: Any) -> Any:
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.SELU(), lib.nn.Linear(8, 5))

    def loss(lib: Any, m: Any, b: tuple[Any, ...]) -> Any:
        nn = lib.nn
        out = m(b[0])
        return (
            nn.SmoothL1Loss(beta=0.5)(out, b[1])
            + nn.HuberLoss(delta=0.7)(out, b[1])
            + nn.BCELoss()(out.sigmoid(), b[2])
            + nn.KLDivLoss(reduction="batchmean")(out.log_softmax(1), b[3])
            + nn.CosineEmbeddingLoss(0.1)(out, b[1], b[4])
            + nn.TripletMarginLoss()(out, b[1], b[0])
            + nn.GaussianNLLLoss()(out, b[1], b[3] + 0.1)
        )

    e, t = build(ember).double(), build(torch).double()
    batches = [
        (_x(6, 5), _x(6, 5), RNG.uniform(0, 1, (6, 5)), RNG.dirichlet(np.ones(5), 6), _signs(6))
        for _ in range(4)
    ]
    train_both(e, t, batches, loss)


def test_distances_and_bilinear_match_torch() -> None:
    compare_module(ember.nn.Bilinear(3, 4, 5).double(), torch.nn.Bilinear(3, 4, 5).double(),
                   _x(6, 3), _x(6, 4))  # fmt: skip
    compare_module(
        ember.nn.Bilinear(3, 4, 5, bias=False).double(),
        torch.nn.Bilinear(3, 4, 5, bias=False).double(),
        _x(2, 6, 3),
        _x(2, 6, 4),
    )
    assert repr(ember.nn.Bilinear(3, 4, 5)) == repr(torch.nn.Bilinear(3, 4, 5))
    for args in ((), (0, 1e-3)):
        compare_module(ember.nn.CosineSimilarity(*args), torch.nn.CosineSimilarity(*args),
                       _x(4, 5), _x(4, 5))  # fmt: skip
    for args in ((), (1.0,), (3.0, 1e-3, True), (float("inf"),)):
        compare_module(ember.nn.PairwiseDistance(*args), torch.nn.PairwiseDistance(*args),
                       _x(4, 5), _x(4, 5))  # fmt: skip
    for kw in ({}, {"p": 1.0, "dim": 0}, {"eps": 10.0}):
        ex, tx = to_pair(_x(4, 5))
        compare_call(
            partial(F.normalize, **kw), partial(torch.nn.functional.normalize, **kw), (ex,), (tx,)
        )


def test_unflatten_and_identity_match_torch() -> None:
    for e, t in (
        (ember.nn.Unflatten(1, (2, 3)), torch.nn.Unflatten(1, (2, 3))),
        (ember.nn.Unflatten(-1, (3, -1)), torch.nn.Unflatten(-1, (3, -1))),
        (ember.nn.Identity(54, unused="x"), torch.nn.Identity(54, unused="x")),
    ):
        assert repr(e) == repr(t)
        compare_module(e, t, _x(4, 6))
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.nn.Unflatten(1, 6)


def test_one_hot_matches_torch() -> None:
    idx = RNG.integers(0, 5, (3, 4))
    for args in ((), (7,)):
        e = F.one_hot(ember.from_numpy(idx), *args)
        t = torch.nn.functional.one_hot(torch.from_numpy(idx), *args)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
        assert e.dtype.name == "int64"
    for lib in (ember, torch):
        with pytest.raises(RuntimeError):
            lib.nn.functional.one_hot(lib.tensor([0, 5]), 3)
        with pytest.raises(RuntimeError):
            lib.nn.functional.one_hot(lib.tensor([-1, 2]))
