"""The spatial layers and functions (convolution in 1-3 dims and transposed, pooling, group and
instance norm, channel dropout, resampling, pixel shuffles, folds, padding) against PyTorch
from the same weights and inputs: outputs, input and parameter gradients, second
derivatives, state dicts, train/eval behaviour, errors, and small models composing every
layer that train the same number of steps along PyTorch's loss curve.

The ops themselves are checked sample by sample in tests/test_ops.py (values, Meta, gradients,
edges), lazily in tests/test_lazy.py and under FakeTensorMode in tests/test_fake_tensor.py.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn

from .conftest import raises_as_torch, requires_torch, torch, train_steps
from .nn_compare import to_pair as _pair

pytestmark = requires_torch
RNG = np.random.default_rng(0)


def _x(*shape: int, low: float = -2, high: float = 2) -> np.ndarray:
    return RNG.uniform(low, high, shape)


def _same_weights(e: Any, t: Any) -> None:
    """Copy ember's parameters and buffers into the torch module (double precision)."""
    state = {k: torch.from_numpy(v.numpy().copy()) for k, v in e.state_dict().items()}
    t.load_state_dict(state)


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


def check_module(
    e: Any, t: Any, *inputs: np.ndarray, atol: float = 1e-8, **kwargs: Any
) -> tuple[Any, Any]:
    """Forward and backward of ``e`` and ``t`` (same weights, double) agree: the output, and
    the gradients of every input and parameter for a random cotangent. Returns the outputs."""
    e, t = e.double(), t.double()
    _same_weights(e, t)
    assert repr(e) == repr(t)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    pairs = [_pair(a) for a in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eo = e(*[p[0] for p in pairs], **kwargs)
        to = t(*[p[1] for p in pairs], **kwargs)
    if isinstance(to, tuple):  # (values, indices)
        np.testing.assert_array_equal(eo[1].numpy(), to[1].numpy())
    eo, to = _first(eo), _first(to)
    assert tuple(eo.shape) == tuple(to.shape)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=atol, rtol=1e-7)
    cot = RNG.standard_normal(tuple(to.shape))
    e_leaves = [p[0] for p in pairs if p[0].requires_grad] + list(e.parameters())
    t_leaves = [p[1] for p in pairs if p[1].requires_grad] + list(t.parameters())
    eg = ember.autograd.grad([eo], e_leaves, [ember.from_numpy(cot)], allow_unused=True)
    tg = torch.autograd.grad([to], t_leaves, [torch.from_numpy(cot)], allow_unused=True)
    for i, (a, b) in enumerate(zip(eg, tg, strict=True)):
        if b is None:
            assert a is None or not a.numpy().any(), f"grad {i}"
            continue
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=atol, rtol=1e-6, err_msg=f"grad {i}")
    return eo, to


# --------------------------------------------------------------------------- every layer

LAYERS = [
    ("Conv1d", (3, 4, 3), {}, (2, 3, 9)),
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}, (2, 4, 11)),
    ("Conv1d", (3, 4, 4), {"padding": "same", "padding_mode": "reflect"}, (2, 3, 9)),
    ("Conv1d", (3, 4, 3), {"padding": 2, "padding_mode": "circular", "bias": False}, (3, 9)),
    ("Conv1d", (3, 4, 3), {"padding": "valid"}, (2, 3, 9)),
    ("Conv2d", (3, 4, (3, 2)), {"padding": "same", "padding_mode": "replicate"}, (2, 3, 6, 5)),
    ("Conv2d", (3, 4, 3), {"padding": (1, 2), "padding_mode": "circular"}, (2, 3, 6, 5)),
    ("Conv2d", (3, 4, 2), {"padding": "same", "dilation": 2}, (2, 3, 6, 5)),
    ("Conv3d", (2, 4, 3), {}, (2, 2, 5, 6, 4)),
    (
        "Conv3d",
        (2, 4, (2, 3, 2)),
        {"stride": (2, 1, 1), "padding": 1, "groups": 2},
        (2, 2, 5, 6, 4),
    ),
    ("Conv3d", (2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, (2, 5, 6, 4)),
    ("ConvTranspose1d", (3, 4, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 3, 7)),
    ("ConvTranspose1d", (4, 2, 3), {"groups": 2, "dilation": 2, "bias": False}, (4, 7)),
    ("ConvTranspose2d", (3, 4, 3), {"stride": 2}, (2, 3, 4, 5)),
    (
        "ConvTranspose2d",
        (4, 6, (3, 2)),
        {"stride": (2, 3), "padding": 1, "groups": 2, "output_padding": (1, 2)},
        (2, 4, 4, 3),
    ),  # fmt: skip
    ("ConvTranspose3d", (2, 3, 2), {"stride": 2, "padding": (1, 0, 0)}, (2, 2, 3, 2, 3)),
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 10)),
    ("MaxPool1d", (2,), {"return_indices": True, "dilation": 2}, (3, 10)),
    ("MaxPool3d", (2,), {}, (2, 3, 4, 6, 4)),
    ("MaxPool3d", ((3, 2, 2),), {"stride": 2, "padding": 1, "return_indices": True}, (2, 5, 6, 4)),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, (2, 3, 10)),
    ("AvgPool1d", (4,), {"ceil_mode": True}, (3, 10)),
    ("AvgPool3d", (2,), {"divisor_override": 3}, (2, 3, 4, 6, 4)),
    ("AvgPool3d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 5, 6, 4)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 7, 5)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 7, 5)),
    ("AdaptiveAvgPool2d", ((9, 4),), {}, (3, 7, 5)),
    ("AdaptiveAvgPool3d", ((2, 3, 2),), {}, (2, 3, 5, 7, 4)),
    ("AdaptiveMaxPool1d", (4,), {"return_indices": True}, (2, 3, 9)),
    ("AdaptiveMaxPool2d", ((3, 2),), {}, (2, 3, 7, 5)),
    ("AdaptiveMaxPool2d", (4,), {"return_indices": True}, (3, 7, 5)),
    ("AdaptiveMaxPool3d", (2,), {}, (2, 3, 5, 7, 4)),
    ("GroupNorm", (2, 6), {}, (3, 6, 4, 5)),
    ("GroupNorm", (3, 6), {"affine": False, "eps": 1e-3}, (3, 6, 7)),
    ("GroupNorm", (6, 6), {}, (3, 6)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 7)),
    ("InstanceNorm1d", (3,), {"affine": True}, (3, 7)),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 4, 5)),
    ("InstanceNorm3d", (3,), {"momentum": 0.3, "track_running_stats": True}, (2, 3, 2, 4, 3)),
    ("Upsample", (), {"scale_factor": 2}, (2, 3, 4, 5)),
    ("Upsample", (), {"size": (7, 3), "mode": "bilinear", "align_corners": True}, (2, 3, 4, 5)),
    ("Upsample", (), {"scale_factor": 1.7, "mode": "bicubic"}, (2, 3, 4, 5)),
    ("Upsample", (), {"scale_factor": (1.5, 2.2), "mode": "nearest-exact"}, (2, 3, 4, 5)),
    ("Upsample", (), {"scale_factor": 2.5, "mode": "linear"}, (2, 3, 5)),
    (
        "Upsample",
        (),
        {"scale_factor": 1.5, "mode": "trilinear", "recompute_scale_factor": True},
        (2, 3, 3, 4, 5),
    ),  # fmt: skip
    ("Upsample", (), {"size": 3, "mode": "area"}, (2, 3, 7, 5)),
    ("UpsamplingNearest2d", (), {"scale_factor": 3}, (2, 3, 4, 5)),
    ("UpsamplingBilinear2d", (), {"size": (6, 9)}, (2, 3, 4, 5)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 4)),
    ("PixelUnshuffle", (3,), {}, (2, 2, 6, 9)),
    ("Unfold", ((2, 3),), {"dilation": (1, 2), "padding": 1, "stride": (2, 1)}, (2, 3, 7, 6)),
    ("Fold", ((7, 6), (2, 3)), {"dilation": (1, 2), "padding": 1, "stride": (2, 1)}, (2, 18, 16)),
    ("ReflectionPad1d", ((2, 3),), {}, (2, 3, 5)),
    ("ReflectionPad2d", (2,), {}, (2, 3, 5, 4)),
    ("ReflectionPad3d", ((1, 0, 2, 1, 0, 1),), {}, (2, 3, 3, 4, 5)),
    ("ReplicationPad1d", ((4, -1),), {}, (2, 3, 5)),
    ("ReplicationPad2d", ((1, 2, 3, 0),), {}, (3, 5, 4)),
    ("ReplicationPad3d", (2,), {}, (2, 3, 3, 4, 5)),
    ("CircularPad1d", (2,), {}, (2, 3, 5)),
    ("CircularPad2d", ((1, 2, 3, 0),), {}, (2, 3, 5, 4)),
    ("CircularPad3d", (1,), {}, (2, 3, 3, 4, 5)),
    ("ConstantPad1d", ((2, 1), 3.5), {}, (2, 3, 5)),
    ("ConstantPad2d", (1, -1.0), {}, (2, 3, 5, 4)),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0.5), {}, (2, 3, 3, 4, 5)),
    ("ZeroPad1d", (2,), {}, (2, 3, 5)),
    ("ZeroPad2d", ((1, 2, 0, 1),), {}, (2, 3, 5, 4)),
    ("ZeroPad3d", (1,), {}, (2, 3, 3, 4, 5)),
]


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "shape"),
    LAYERS,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(LAYERS)],
)
def test_layer_matches_torch(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], shape: tuple[int, ...]
) -> None:
    """Outputs and gradients (inputs and parameters) of each layer, from the same weights."""
    e, t = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    check_module(e, t, _x(*shape))


@pytest.mark.parametrize("name", ["Dropout1d", "Dropout2d", "Dropout3d"])
def test_channel_dropout_in_eval_and_with_p_zero_is_identity(name: str) -> None:
    shape = {"Dropout1d": (2, 3, 5), "Dropout2d": (2, 3, 4, 5), "Dropout3d": (2, 3, 2, 4, 5)}[name]
    check_module(getattr(nn, name)(0.5).eval(), getattr(torch.nn, name)(0.5).eval(), _x(*shape))
    check_module(getattr(nn, name)(0.0), getattr(torch.nn, name)(0.0), _x(*shape))


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("Dropout1d", (64, 40, 7)),
        ("Dropout1d", (40, 7)),
        ("Dropout2d", (64, 40, 3, 3)),
        ("Dropout3d", (64, 40, 2, 2, 2)),
        ("Dropout3d", (40, 2, 2, 2)),
    ],  # fmt: skip
)
def test_channel_dropout_zeroes_whole_channels_at_rate_p(name: str, shape: tuple[int, ...]) -> None:
    """While training, each (sample, channel) map is all zeros or all scaled by 1 / (1 - p),
    zeroed at rate p (as PyTorch's Bernoulli noise); its gradient follows the same mask."""
    p = 0.3
    ember.manual_seed(0)
    x = ember.from_numpy(_x(*shape, low=1, high=2)).requires_grad_()
    out = getattr(nn, name)(p)(x)
    ratio = (out / x).detach().numpy()
    batched = {"Dropout1d": 3, "Dropout2d": 4, "Dropout3d": 5}[name] == len(shape)
    maps = ratio.reshape(*shape[: 2 if batched else 1], -1)
    first = maps[..., :1]
    assert np.allclose(maps, first)  # constant over each channel's map
    assert set(np.round(np.unique(first), 6)) <= {0.0, round(1 / (1 - p), 6)}
    dropped = float((first == 0).mean())
    assert abs(dropped - p) < 0.08, dropped  # 2560 (or 400) draws: 3.5 standard deviations
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ratio)


def test_dropout2d_inplace_writes_its_input() -> None:
    x = ember.ones(2, 3, 2, 2)
    out = nn.Dropout2d(1.0, inplace=True)(x)
    assert out is x and not x.numpy().any()


@pytest.mark.parametrize("output_size", [None, [9, 11], [2, 4, 9, 11], [10, 12]])
def test_conv_transpose_output_size(output_size: Any) -> None:
    """``forward(input, output_size)`` picks the output padding PyTorch picks."""
    kw = {"stride": 2, "padding": 1}
    e, t = nn.ConvTranspose2d(3, 4, 3, **kw), torch.nn.ConvTranspose2d(3, 4, 3, **kw)
    check_module(e, t, _x(2, 3, 5, 6), output_size=output_size)


def test_state_dict_round_trip() -> None:
    """Each layer with parameters or buffers: ember's state loads into PyTorch and back, names
    and values equal, and the reloaded ember layer computes what PyTorch's does."""
    for name, args, kwargs, shape in LAYERS:
        e = getattr(nn, name)(*args, **kwargs).double()
        t = getattr(torch.nn, name)(*args, **kwargs).double()
        if not list(e.state_dict()):
            continue
        assert list(e.state_dict()) == list(t.state_dict()), name
        t.load_state_dict(
            {k: torch.from_numpy(v.numpy().copy()) for k, v in e.state_dict().items()}
        )
        for p in t.parameters():  # move torch's weights, then bring them back to ember
            p.data.mul_(1.5).add_(0.25)
        e2 = getattr(nn, name)(*args, **kwargs).double()
        e2.load_state_dict(
            {k: ember.from_numpy(v.numpy().copy()) for k, v in t.state_dict().items()}
        )
        for (k, v), w in zip(e2.state_dict().items(), t.state_dict().values(), strict=True):
            np.testing.assert_array_equal(v.numpy(), w.numpy(), err_msg=f"{name} {k}")
        x = _x(*shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eo = _first(e2.eval()(ember.from_numpy(x.copy())))
            to = _first(t.eval()(torch.from_numpy(x.copy())))
        np.testing.assert_allclose(
            eo.detach().numpy(), to.detach().numpy(), atol=1e-8, err_msg=name
        )


@pytest.mark.parametrize("momentum", [0.2, None])
def test_instance_norm_running_stats_train_and_eval(momentum: float | None) -> None:
    """Training updates the running statistics as PyTorch does (the mean over the batch of
    each sample's update); eval normalizes with them."""
    kw = {"affine": True, "track_running_stats": True, "momentum": momentum}
    e, t = nn.InstanceNorm2d(3, **kw).double(), torch.nn.InstanceNorm2d(3, **kw).double()
    _same_weights(e, t)
    for _ in range(3):
        x = _x(4, 3, 3, 5, low=-1, high=3)
        e(ember.from_numpy(x.copy()))
        t(torch.from_numpy(x.copy()))
    np.testing.assert_allclose(e.running_mean.numpy(), t.running_mean.numpy(), rtol=1e-10)
    np.testing.assert_allclose(e.running_var.numpy(), t.running_var.numpy(), rtol=1e-10)
    e.eval()
    t.eval()
    check_module(e, t, _x(4, 3, 3, 5))
    np.testing.assert_allclose(e.running_mean.numpy(), t.running_mean.numpy(), rtol=1e-10)


def test_group_norm_same_in_train_and_eval() -> None:
    m = nn.GroupNorm(2, 4).double()
    x = ember.from_numpy(_x(3, 4, 5))
    a = m(x).detach().numpy()
    np.testing.assert_array_equal(m.eval()(x).detach().numpy(), a)


# --------------------------------------------------------------------------- functions


def _compare_fn(fn: str, *arrays: Any, atol: float = 1e-8, **kwargs: Any) -> None:
    """``F.<fn>(*arrays, **kwargs)`` in both libraries: values and input gradients. An
    ``(name, array)`` pair in ``arrays`` is passed by keyword."""
    names = [a[0] if isinstance(a, tuple) else None for a in arrays]
    pairs = [_pair(a[1] if isinstance(a, tuple) else a) for a in arrays]

    def call(lib: Any, i: int) -> Any:
        args = [p[i] for p, n in zip(pairs, names, strict=True) if n is None]
        kw = {n: p[i] for p, n in zip(pairs, names, strict=True) if n is not None}
        return _first(getattr(lib.nn.functional, fn)(*args, **kw, **kwargs))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eo, to = call(ember, 0), call(torch, 1)
    assert tuple(eo.shape) == tuple(to.shape), (tuple(eo.shape), tuple(to.shape))
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=atol, rtol=1e-7)
    cot = RNG.standard_normal(tuple(to.shape))
    eg = ember.autograd.grad([eo], [p[0] for p in pairs], [ember.from_numpy(cot)])
    tg = torch.autograd.grad([to], [p[1] for p in pairs], [torch.from_numpy(cot)])
    for a, b in zip(eg, tg, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=atol, rtol=1e-6)


INTERPOLATE = [
    ((2, 3, 5), {"size": 8}),
    ((2, 3, 5), {"scale_factor": 0.6, "mode": "nearest-exact"}),
    ((2, 3, 5), {"scale_factor": 2.3, "mode": "linear", "align_corners": True}),
    ((2, 3, 5), {"scale_factor": 2.3, "mode": "linear", "recompute_scale_factor": True}),
    ((2, 3, 5), {"size": 3, "mode": "area"}),
    ((2, 3, 4, 5), {"size": (7, 3)}),
    ((2, 3, 4, 5), {"scale_factor": (2, 0.5), "mode": "bilinear"}),
    ((2, 3, 4, 5), {"scale_factor": 1.7, "mode": "bilinear", "align_corners": True}),
    ((2, 3, 4, 5), {"size": (9, 9), "mode": "bicubic"}),
    ((2, 3, 4, 5), {"scale_factor": 0.7, "mode": "bicubic", "align_corners": True}),
    ((2, 3, 4, 5), {"scale_factor": 2.5, "mode": "area"}),
    ((2, 3, 4, 5), {"size": 6, "mode": "nearest-exact"}),
    ((2, 3, 3, 4, 5), {"size": (5, 2, 7), "mode": "trilinear"}),
    ((2, 3, 3, 4, 5), {"scale_factor": 1.5, "mode": "nearest"}),
    ((2, 3, 3, 4, 5), {"scale_factor": (2, 1, 0.5), "mode": "area"}),
]


@pytest.mark.parametrize(("shape", "kwargs"), INTERPOLATE, ids=[str(c[1]) for c in INTERPOLATE])
def test_interpolate_matches_torch(shape: tuple[int, ...], kwargs: dict[str, Any]) -> None:
    _compare_fn("interpolate", _x(*shape), **kwargs)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dims", [2, 3])
def test_grid_sample_and_affine_grid_match_torch(
    mode: str, padding_mode: str, align_corners: bool, dims: int
) -> None:
    """A spatial transformer's sampling: affine_grid of a theta, then grid_sample; values and
    gradients of the input, the grid and theta."""
    theta = np.eye(dims, dims + 1)[None].repeat(2, 0) + _x(2, dims, dims + 1, low=-0.4, high=0.4)
    size = [2, 3, 5, 4, 6][: dims + 2]
    x = _x(2, 3, *(4, 5, 3)[:dims])
    pairs = [_pair(theta), _pair(x)]
    outs = []
    for lib, (th, xx) in ((ember, [p[0] for p in pairs]), (torch, [p[1] for p in pairs])):
        grid = lib.nn.functional.affine_grid(th, size, align_corners=align_corners)
        out = lib.nn.functional.grid_sample(
            xx, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners
        )
        outs.append((grid, out))
    (eg, eo), (tg, to) = outs
    np.testing.assert_allclose(eg.detach().numpy(), tg.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=1e-10)
    cot = RNG.standard_normal(tuple(to.shape))
    e_grads = ember.autograd.grad([eo], [p[0] for p in pairs], [ember.from_numpy(cot)])
    t_grads = torch.autograd.grad([to], [p[1] for p in pairs], [torch.from_numpy(cot)])
    for a, b in zip(e_grads, t_grads, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-9, rtol=1e-7)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_gradients_at_edges_and_pixel_centres(
    mode: str, padding_mode: str, align_corners: bool
) -> None:
    """Points exactly on the image's edges, on pixel centres and half-way between (kinks of
    the sampling, where the derivative is one-sided): PyTorch's values and gradients."""
    w, h = 6, 5
    xs = [-1.0, 1.0, 0.0, -1.0 + 2 / w, 1.0 - 1 / w, 2 / (w - 1) - 1, 1.2, -1.2]
    ys = [-1.0, 1.0, 0.0, 1.0 - 2 / h, -1.0 + 1 / h, 2 / (h - 1) - 1, -1.3, 1.1]
    grid = np.stack(np.meshgrid(xs, ys), -1)[None].repeat(2, 0)  # (2, 8, 8, 2)
    x = _x(2, 3, h, w)
    results = []
    for lib, i in ((ember, 0), (torch, 1)):
        xx, gg = _pair(x)[i], _pair(grid)[i]
        out = lib.nn.functional.grid_sample(
            xx, gg, mode=mode, padding_mode=padding_mode, align_corners=align_corners
        )
        cot = lib.from_numpy(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
        results.append((out, *lib.autograd.grad([out], [xx, gg], [cot])))
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-10)


@pytest.mark.parametrize(
    ("fn", "shapes", "kwargs"),
    [
        ("conv1d", [(2, 4, 9), (6, 2, 3), (6,)], {"padding": "same", "groups": 2}),
        ("conv2d", [(4, 7, 6), (3, 4, 2, 3)], {"padding": "same", "dilation": (2, 1)}),
        ("conv3d", [(2, 2, 4, 5, 4), (3, 2, 2, 2, 3)], {"stride": (1, 2, 1), "padding": (1, 0, 2)}),
        ("conv_transpose1d", [(2, 4, 5), (4, 3, 3)], {"stride": 3, "output_padding": 2}),
        ("conv_transpose2d", [(4, 5, 4), (4, 3, 3, 2)], {"stride": 2, "dilation": (1, 2)}),
        ("conv_transpose3d", [(2, 4, 2, 3, 2), (4, 1, 2, 2, 2), (2,)], {"groups": 2}),
        ("max_pool1d", [(2, 3, 9)], {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
        ("avg_pool1d", [(3, 9)], {"kernel_size": 3, "padding": 1, "count_include_pad": False}),
        ("max_pool3d", [(2, 3, 4, 5, 4)], {"kernel_size": 2, "padding": 1}),
        ("avg_pool3d", [(2, 3, 4, 5, 4)], {"kernel_size": (2, 3, 2), "divisor_override": 5}),
        ("adaptive_max_pool2d", [(2, 3, 7, 5)], {"output_size": (None, 3)}),
        ("adaptive_avg_pool3d", [(2, 3, 5, 7, 4)], {"output_size": (2, None, 3)}),
        ("group_norm", [(3, 6, 4), ("weight", (6,)), ("bias", (6,))], {"num_groups": 3}),
        ("instance_norm", [(3, 4, 5)], {}),
        ("pixel_shuffle", [(2, 3, 18, 2, 3)], {"upscale_factor": 3}),
        ("pixel_unshuffle", [(2, 2, 6, 4)], {"downscale_factor": 2}),
        ("unfold", [(3, 7, 6)], {"kernel_size": 3, "padding": 1, "stride": 2}),
        ("fold", [(2, 12, 12)], {"output_size": (4, 5), "kernel_size": 2}),
        ("pad", [(2, 3, 5)], {"pad": (2, 3), "mode": "reflect"}),
        ("pad", [(2, 3, 5, 4)], {"pad": (1, 2, 3, 0), "mode": "replicate"}),
        ("pad", [(3, 3, 5, 4)], {"pad": (1, 2, 3, 0, 1, 1), "mode": "circular"}),
        ("pad", [(2, 3, 5, 4)], {"pad": (-1, 2, 3, -2), "mode": "reflect"}),
        ("pad", [(2, 3, 5)], {"pad": (1, 2), "mode": "constant", "value": 2.5}),
    ],
)
def test_functions_match_torch(fn: str, shapes: list[Any], kwargs: dict[str, Any]) -> None:
    """Each function, values and gradients; ``(name, shape)`` entries are keyword arrays."""
    arrays = [(s[0], _x(*s[1])) if isinstance(s[0], str) else _x(*s) for s in shapes]
    _compare_fn(fn, *arrays, **kwargs)


SECOND = [
    ("conv_transpose2d", [(2, 4, 3, 3), (4, 3, 2, 2)], {"stride": 2, "padding": 1}),
    ("conv1d", [(2, 3, 6), (4, 3, 3)], {"padding": "same"}),
    ("group_norm", [(2, 6, 4)], {"num_groups": 2}),
    ("instance_norm", [(2, 3, 5)], {}),
    ("interpolate", [(2, 3, 4, 3)], {"scale_factor": 1.5, "mode": "bilinear"}),
    ("interpolate", [(2, 3, 5)], {"size": 7, "mode": "nearest"}),
    ("pad", [(2, 3, 5, 4)], {"pad": (1, 2, 2, 1), "mode": "reflect"}),
    ("pad", [(2, 3, 5)], {"pad": (2, 1), "mode": "replicate"}),
    ("adaptive_avg_pool2d", [(2, 3, 5, 4)], {"output_size": 3}),
    ("adaptive_max_pool2d", [(2, 3, 5, 4)], {"output_size": 3}),
    ("max_pool3d", [(2, 2, 4, 4, 4)], {"kernel_size": 2}),
    ("avg_pool3d", [(2, 2, 4, 4, 4)], {"kernel_size": 3, "padding": 1}),
    ("pixel_shuffle", [(2, 8, 2, 3)], {"upscale_factor": 2}),
    ("unfold", [(2, 3, 4, 4)], {"kernel_size": 2}),
    ("fold", [(2, 12, 12)], {"output_size": (4, 5), "kernel_size": 2}),
]


@pytest.mark.parametrize(
    ("fn", "shapes", "kwargs"), SECOND, ids=[f"{c[0]}-{i}" for i, c in enumerate(SECOND)]
)
def test_second_derivatives_match_torch(
    fn: str, shapes: list[tuple[int, ...]], kwargs: dict[str, Any]
) -> None:
    """Double backward (through the backward ops' own derivatives): the gradient of
    ``<grad(f), v>`` with respect to every input and the cotangent equals PyTorch's."""
    arrays = [_x(*s) for s in shapes]
    results = []
    for lib in (ember, torch):
        leaves = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
        out = getattr(lib.nn.functional, fn)(*leaves, **kwargs)
        cot = lib.from_numpy(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        cot.requires_grad_()
        grads = lib.autograd.grad([out], leaves, [cot], create_graph=True)
        v = [lib.from_numpy(np.cos(np.arange(g.numel())).reshape(tuple(g.shape))) for g in grads]
        total = sum((g * w).sum() for g, w in zip(grads, v, strict=True))
        results.append(lib.autograd.grad([total], [*leaves, cot], allow_unused=True))
    for i, (a, b) in enumerate(zip(*results, strict=True)):
        if b is None:
            assert a is None or not a.numpy().any(), f"input {i}"
            continue
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-8, rtol=1e-6, err_msg=f"input {i}")


def test_group_norm_backward_op_gradchecks() -> None:
    """PyTorch has no derivative for ``native_group_norm_backward`` itself (it differentiates
    a composite formula instead); ember's, with every argument independent, passes finite
    differences."""
    x = ember.from_numpy(_x(2, 6, 5)).requires_grad_()
    w = ember.from_numpy(_x(6)).requires_grad_()
    go = ember.from_numpy(_x(2, 6, 5)).requires_grad_()
    _, mean, rstd = ember.ops.aten.native_group_norm(x.detach(), w.detach(), None, 2, 6, 5, 3, 1e-5)
    mean.requires_grad_()
    rstd.requires_grad_()

    def backward(go: Any, x: Any, mean: Any, rstd: Any, w: Any) -> Any:
        return ember.ops.aten.native_group_norm_backward(
            go, x, mean, rstd, w, 2, 6, 5, 3, [True, True, True]
        )

    assert ember.autograd.gradcheck(backward, (go, x, mean, rstd, w))


# --------------------------------------------------------------------------- errors

ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("conv channels", lambda lib: lib.nn.Conv2d(3, 4, 3)(lib.ones(1, 2, 5, 5))),
    ("conv same strided", lambda lib: lib.nn.Conv1d(3, 4, 3, padding="same", stride=2)),
    ("conv bad padding string", lambda lib: lib.nn.Conv1d(3, 4, 3, padding="full")),
    ("conv bad padding mode", lambda lib: lib.nn.Conv1d(3, 4, 3, padding_mode="wrap")),
    ("conv groups", lambda lib: lib.nn.Conv3d(3, 4, 3, groups=2)),
    (
        "transposed padding mode",
        lambda lib: lib.nn.ConvTranspose1d(3, 4, 3, padding_mode="reflect"),
    ),
    (
        "transposed output_size",
        lambda lib: lib.nn.ConvTranspose2d(2, 2, 3, stride=2)(
            lib.ones(1, 2, 4, 4), output_size=[20, 20]
        ),
    ),  # fmt: skip
    (
        "F.conv same strided",
        lambda lib: lib.nn.functional.conv2d(
            lib.ones(1, 2, 5, 5), lib.ones(3, 2, 3, 3), stride=2, padding="same"
        ),
    ),  # fmt: skip
    (
        "conv1d 4-d input",
        lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 3, 5), lib.ones(3, 2, 3)),
    ),
    (
        "conv too small",
        lambda lib: lib.nn.functional.conv3d(lib.ones(1, 1, 2, 2, 2), lib.ones(1, 1, 3, 3, 3)),
    ),
    ("max pool padding", lambda lib: lib.nn.MaxPool1d(2, padding=2)(lib.ones(1, 2, 8))),
    ("avg pool rank", lambda lib: lib.nn.AvgPool1d(2)(lib.ones(1, 2, 3, 8))),
    ("max pool3d rank", lambda lib: lib.nn.MaxPool3d(2)(lib.ones(2, 8, 8))),
    ("adaptive empty", lambda lib: lib.nn.AdaptiveAvgPool2d(2)(lib.ones(1, 2, 0, 4))),
    (
        "adaptive max int",
        lambda lib: lib.nn.AdaptiveMaxPool2d(2)(lib.ones(1, 2, 4, 4, dtype=lib.int64)),
    ),
    ("group norm divisible", lambda lib: lib.nn.GroupNorm(3, 4)),
    ("group norm channels", lambda lib: lib.nn.GroupNorm(2, 4)(lib.ones(2, 6, 3))),
    ("group norm one value", lambda lib: lib.nn.functional.group_norm(lib.ones(1, 2), 2)),
    (
        "instance norm affine channels",
        lambda lib: lib.nn.InstanceNorm1d(3, affine=True)(lib.ones(2, 4, 5)),
    ),
    ("instance norm rank", lambda lib: lib.nn.InstanceNorm2d(3)(lib.ones(2, 3))),
    ("instance norm one value", lambda lib: lib.nn.functional.instance_norm(lib.ones(2, 3, 1))),
    ("dropout2d p", lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3, 4, 4), 1.5)),
    ("dropout1d rank", lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 4))),
    ("interpolate both", lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4), 3, 2.0)),
    ("interpolate neither", lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4))),
    (
        "interpolate size length",
        lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4), (3, 3)),
    ),
    (
        "interpolate float size",
        lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4), (3.5,)),
    ),
    (
        "interpolate corners nearest",
        lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4), 3, align_corners=True),
    ),  # fmt: skip
    (
        "interpolate bilinear 3-d",
        lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4), 3, mode="bilinear"),
    ),  # fmt: skip
    (
        "interpolate recompute size",
        lambda lib: lib.nn.functional.interpolate(
            lib.ones(1, 1, 4), 3, recompute_scale_factor=True
        ),
    ),  # fmt: skip
    ("interpolate zero size", lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4), 0)),
    ("interpolate 2-d", lambda lib: lib.nn.functional.interpolate(lib.ones(1, 4), 3)),
    (
        "interpolate unknown mode",
        lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4), 3, mode="cubic"),
    ),
    (
        "grid_sample mode",
        lambda lib: lib.nn.functional.grid_sample(
            lib.ones(1, 1, 4, 4), lib.zeros(1, 2, 2, 2), mode="area"
        ),
    ),  # fmt: skip
    (
        "grid_sample padding",
        lambda lib: lib.nn.functional.grid_sample(
            lib.ones(1, 1, 4, 4), lib.zeros(1, 2, 2, 2), padding_mode="wrap"
        ),
    ),  # fmt: skip
    (
        "grid_sample batch",
        lambda lib: lib.nn.functional.grid_sample(
            lib.ones(2, 1, 4, 4), lib.zeros(1, 2, 2, 2), align_corners=False
        ),
    ),  # fmt: skip
    (
        "grid_sample dtype",
        lambda lib: lib.nn.functional.grid_sample(
            lib.ones(1, 1, 4, 4), lib.zeros(1, 2, 2, 2, dtype=lib.float64), align_corners=False
        ),
    ),  # fmt: skip
    (
        "affine_grid theta",
        lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 3, 3), [1, 1, 4, 4], False),
    ),
    (
        "affine_grid size",
        lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 2, 3), [1, 1, 4], False),
    ),
    (
        "affine_grid int",
        lambda lib: lib.nn.functional.affine_grid(
            lib.ones(1, 2, 3, dtype=lib.int64), [1, 1, 4, 4], False
        ),
    ),  # fmt: skip
    ("pixel_shuffle channels", lambda lib: lib.nn.PixelShuffle(2)(lib.ones(1, 3, 2, 2))),
    ("pixel_unshuffle width", lambda lib: lib.nn.PixelUnshuffle(2)(lib.ones(1, 3, 2, 3))),
    ("fold blocks", lambda lib: lib.nn.Fold((4, 5), 2)(lib.ones(1, 8, 11))),
    ("unfold kernel", lambda lib: lib.nn.Unfold(5)(lib.ones(1, 2, 4, 4))),
    ("reflect too big", lambda lib: lib.nn.ReflectionPad1d(3)(lib.ones(1, 2, 3))),
    (
        "circular wraps twice",
        lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (4, 0), "circular"),
    ),
    ("pad mode", lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (1, 1), "wrap")),
    (
        "pad value with mode",
        lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (1, 1), "reflect", 2.0),
    ),
    (
        "pad 5-d of 2",
        lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3, 4, 5), (1, 1), "replicate"),
    ),
    ("circular rank", lambda lib: lib.nn.CircularPad2d(1)(lib.ones(2, 3))),
    (
        "upsample align corners",
        lambda lib: lib.nn.Upsample(scale_factor=2, align_corners=True)(lib.ones(1, 1, 4)),
    ),
]


@pytest.mark.parametrize("build", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(build: Callable[[Any], Any]) -> None:
    """Bad shapes and arguments raise PyTorch's exception type, and ember's message says
    something: the op or layer, the sizes, or what to pass instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, got = raises_as_torch(build)
    assert len(str(got)) > 20, got


# --------------------------------------------------------------------------- small models


def _digits(n: int) -> tuple[np.ndarray, np.ndarray]:
    from importlib import resources

    with (resources.files("ember") / "data" / "digits.npz").open("rb") as f, np.load(f) as npz:
        images, labels = npz["images"][:n], npz["labels"][:n]
    return (images / 16.0)[:, None].astype(np.float64), labels.astype(np.int64)


def _signal_net(lib: Any) -> Any:
    """1-d: the 8 rows of a digit as 8 channels of a length-8 signal."""
    nn_ = lib.nn
    return nn_.Sequential(
        nn_.Flatten(1, 2),  # (N, 1, 8, 8) -> (N, 8, 8)
        nn_.Conv1d(8, 12, 3, padding="same", padding_mode="reflect"),
        nn_.GroupNorm(3, 12),
        nn_.ReLU(),
        nn_.Dropout1d(0.0),
        nn_.MaxPool1d(2, ceil_mode=True),
        nn_.ReplicationPad1d((1, 2)),
        nn_.Conv1d(12, 8, 3, dilation=2, groups=4),
        nn_.InstanceNorm1d(8, affine=True, track_running_stats=True),
        nn_.ConvTranspose1d(8, 6, 3, stride=2, output_padding=1),
        nn_.AvgPool1d(2, padding=1, count_include_pad=False),
        nn_.CircularPad1d(1),
        nn_.AdaptiveMaxPool1d(5),
        nn_.AdaptiveAvgPool1d(3),
        nn_.Flatten(),
        nn_.Linear(18, 10),
    )


def _image_net(lib: Any) -> Any:
    """2-d: convolutions with every padding mode, shuffles, transposed convolution,
    resampling, adaptive pooling."""
    nn_ = lib.nn
    return nn_.Sequential(
        nn_.Conv2d(1, 4, 3, padding=1, padding_mode="circular"),
        nn_.InstanceNorm2d(4, affine=True),
        nn_.ReLU(),
        nn_.ReflectionPad2d(1),
        nn_.Conv2d(4, 4, 3, padding="same", padding_mode="replicate"),
        nn_.PixelUnshuffle(2),  # (16, 4, 4)... of the padded 10 x 10 -> (16, 5, 5)
        nn_.GroupNorm(4, 16),
        nn_.Conv2d(16, 8, 2),
        nn_.PixelShuffle(2),  # (2, 8, 8)
        nn_.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1),
        nn_.ZeroPad2d((1, 0, 0, 1)),
        nn_.Upsample(scale_factor=0.75, mode="bilinear"),
        nn_.Dropout2d(0.0),
        nn_.Upsample(size=(9, 9), mode="bicubic", align_corners=True),
        nn_.UpsamplingNearest2d(scale_factor=1.5),
        nn_.AdaptiveMaxPool2d((6, 5)),
        nn_.AdaptiveAvgPool2d((3, None)),
        nn_.Flatten(),
        nn_.Linear(45, 10),
    )


def _volume_net(lib: Any) -> Any:
    """3-d: each digit as a (2, 4, 8) volume."""
    nn_ = lib.nn
    return nn_.Sequential(
        nn_.Unflatten(2, (2, 4)) if hasattr(nn_, "Unflatten") else _Unflat(lib),
        nn_.Conv3d(1, 4, 3, padding=1, padding_mode="reflect"),
        nn_.InstanceNorm3d(4),
        nn_.ReLU(),
        nn_.MaxPool3d((1, 2, 2)),
        nn_.ConstantPad3d((1, 0, 0, 1, 0, 0), 0.5),
        nn_.ConvTranspose3d(4, 3, 2, stride=(1, 2, 2)),
        nn_.Dropout3d(0.0),
        nn_.AvgPool3d(2, ceil_mode=True),
        nn_.Upsample(scale_factor=(1.0, 2.0, 1.5), mode="trilinear"),
        nn_.ReplicationPad3d(1),
        nn_.CircularPad3d((0, 1, 1, 0, 0, 0)),
        nn_.AdaptiveAvgPool3d((1, 2, 3)),
        nn_.AdaptiveMaxPool3d((1, 2, 2)),
        nn_.Flatten(),
        nn_.Linear(12, 10),
    )


def _Unflat(lib: Any) -> Any:  # noqa: N802 - a layer factory
    class Unflat(lib.nn.Module):
        def forward(self, x: Any) -> Any:
            return x.reshape(x.shape[0], 1, 2, 4, 8)

    return Unflat()


def _transformer_net(lib: Any) -> Any:
    """A spatial transformer: a localization net predicts an affine map, ``affine_grid`` and
    ``grid_sample`` warp the image, then unfold/fold and a classifier."""
    nn_, F = lib.nn, lib.nn.functional

    class STN(nn_.Module):
        def __init__(self) -> None:
            super().__init__()
            self.loc = nn_.Sequential(nn_.AvgPool2d(2), nn_.Flatten(), nn_.Linear(16, 6))
            self.unfold = nn_.Unfold(3, padding=1)
            self.mix = nn_.Conv1d(9, 4, 1)
            self.fold = nn_.Fold((8, 8), 2, stride=2)
            self.head = nn_.Sequential(nn_.Flatten(), nn_.Linear(64, 10))
            self.register_buffer("identity", lib.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))

        def forward(self, x: Any) -> Any:
            theta = self.loc(x).reshape(-1, 2, 3) * 0.1 + self.identity
            grid = F.affine_grid(theta, list(x.shape), align_corners=False)
            warped = F.grid_sample(x, grid, padding_mode="border", align_corners=False)
            cols = self.mix(self.unfold(warped))  # (N, 4, 64)
            return self.head(self.fold(cols[:, :, :16]).reshape(x.shape[0], -1))

    return STN()


MODELS = {"signal": _signal_net, "image": _image_net, "volume": _volume_net,
          "transformer": _transformer_net}  # fmt: skip


@pytest.mark.parametrize("name", list(MODELS))
def test_small_models_train_like_torch(name: str) -> None:
    """Each model, built in both libraries from ember's initial state, trains 8 SGD steps on
    the same batch: the loss curves, the final parameters and buffers (running statistics)
    and the eval-mode outputs agree to float64 rounding."""
    build = MODELS[name]
    x, y = _digits(24)
    ember.manual_seed(0)
    ours = build(ember).double()
    theirs = build(torch).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _same_weights(ours, theirs)
    curves = []
    for lib, model in ((ember, ours), (torch, theirs)):
        opt = lib.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
        xs, ys = lib.from_numpy(x.copy()), lib.from_numpy(y.copy())
        losses = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(8):
                opt.zero_grad()
                loss = lib.nn.functional.cross_entropy(model(xs), ys)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        curves.append(losses)
    np.testing.assert_allclose(curves[0], curves[1], rtol=1e-9, atol=1e-12)
    assert curves[1][-1] < curves[1][0]  # it trained
    expected = theirs.state_dict()
    for key, value in ours.state_dict().items():
        np.testing.assert_allclose(
            value.numpy(), expected[key].detach().numpy(), rtol=1e-8, atol=1e-10, err_msg=key
        )
    ours.eval()
    theirs.eval()
    with ember.no_grad():
        e_out = ours(ember.from_numpy(x.copy())).numpy()
    with torch.no_grad():
        t_out = theirs(torch.from_numpy(x.copy())).numpy()
    np.testing.assert_allclose(e_out, t_out, rtol=1e-8, atol=1e-10)


def test_a_conv_net_trains_on_the_lazy_device_as_eagerly() -> None:
    """The image model's training steps on the lazy device give the eager losses."""

    def train(device: str) -> list[float]:
        ember.manual_seed(0)
        model = _image_net(ember).double().to(device)
        opt = ember.optim.SGD(model.parameters(), lr=0.2)
        x, y = _digits(8)
        xs, ys = ember.from_numpy(x).to(device), ember.from_numpy(y).to(device)
        return train_steps(model, opt, ember.nn.functional.cross_entropy, xs, ys, 3)

    np.testing.assert_allclose(train("lazy"), train("cpu"), rtol=1e-10)
