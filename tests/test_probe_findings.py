"""What a probe of 141 everyday PyTorch calls found missing or different in ember, each
checked against PyTorch: ``Tensor.is_set_to``, ``broadcast_shapes``, ``unravel_index``,
``gradient``, ``linalg.cond``, ``channel_shuffle`` / ``nn.ChannelShuffle``, and the grad
mode a ``saved_tensors_hooks`` pack hook runs in."""

from __future__ import annotations

import math
from importlib import import_module
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

LIBS = [ember, torch] if torch is not None else [ember]
RNG = np.random.default_rng(0)


def _outcome(fn: Any) -> Any:
    """The value as nested lists of numbers, or the exception's class name."""
    try:
        out = fn()
    except (RuntimeError, TypeError, ValueError, IndexError) as e:
        return type(e).__name__
    if isinstance(out, tuple):
        return [np.asarray(o.detach().tolist()) for o in out]
    return np.asarray(out.detach().tolist() if hasattr(out, "detach") else out)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_is_set_to(lib: Any) -> None:
    x = lib.zeros(4)
    assert x.is_set_to(x) and x.is_set_to(x.view(4)) and x.is_set_to(x[:])
    assert (
        not x.is_set_to(x[1:]) and not x.is_set_to(x.view(2, 2)) and not x.is_set_to(lib.zeros(4))
    )
    assert not x.view(2, 2).is_set_to(x.view(2, 2).t())


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_broadcast_shapes(lib: Any) -> None:
    assert lib.broadcast_shapes((2, 1), (3,), 3) == lib.Size([2, 3])
    assert lib.broadcast_shapes() == lib.Size([])
    assert type(lib.broadcast_shapes((1,))) is lib.Size
    with pytest.raises(RuntimeError):
        lib.broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError):
        lib.broadcast_shapes((2, -1))


UNRAVEL = [([[5], [7]], (3, 4)), (-1, (3, 4)), ([12, -13], (3, 4)), ([1], ()), ([0, 59], (3, 4, 5))]


@requires_torch
@pytest.mark.parametrize(("indices", "shape"), UNRAVEL, ids=str)
def test_unravel_index_matches_torch(indices: Any, shape: tuple[int, ...]) -> None:
    got = _outcome(lambda: ember.unravel_index(ember.tensor(indices), shape))
    ref = _outcome(lambda: torch.unravel_index(torch.tensor(indices), shape))
    assert _same(got, ref), (got, ref)
    if got:
        assert ember.unravel_index(ember.tensor(indices), shape)[0].dtype is ember.int64


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_unravel_index_refuses_what_torch_refuses(lib: Any) -> None:
    with pytest.raises(TypeError, match="integer dtype"):
        lib.unravel_index(lib.tensor([1.0]), (3,))
    with pytest.raises(ValueError, match="negative"):
        lib.unravel_index(lib.tensor([1]), (3, -1))


_F = [1.0, 4.0, 9.0, 16.0, 25.0]
_M = (np.arange(12.0).reshape(3, 4) ** 2).tolist()
_X = [0.0, 1.0, 1.5, 3.5, 4.0]
GRADIENT = [
    (_F, {}),
    (_F, {"spacing": 2.0}),
    (_F, {"spacing": [_X], "edge_order": 2}),
    (_F, {"spacing": [_X]}),
    (_M, {"dim": 1, "edge_order": 2}),
    (_M, {"spacing": [2.0, 3.0]}),
    (_M, {"dim": -1, "spacing": [0.5]}),
    (_M, {"spacing": [[0.0, 1.0, 3.0], [0.0, 0.5, 2.0, 3.0]], "edge_order": 2}),
    ([1, 2, 4], {"spacing": 2}),
    ([1.0, 2.0, 4.0], {"spacing": [[0, 1, 3]]}),
    (_M, {"edge_order": 3}),
    (_M, {"dim": (0, 0)}),
    (_M, {"spacing": [1.0, 2.0, 3.0]}),
    ([1.0], {}),
    ([1.0, 2.0], {"edge_order": 2}),
]


def _gradient(lib: Any, data: Any, kw: dict[str, Any]) -> Any:
    k = dict(kw)
    if isinstance(k.get("spacing"), list):
        k["spacing"] = [lib.tensor(s) if isinstance(s, list) else s for s in k["spacing"]]
    return lib.gradient(lib.tensor(data), **k)


@requires_torch
@pytest.mark.parametrize(("data", "kw"), GRADIENT, ids=[str(c[1]) for c in GRADIENT])
def test_gradient_matches_torch(data: Any, kw: dict[str, Any]) -> None:
    got = _outcome(lambda: _gradient(ember, data, kw))
    ref = _outcome(lambda: _gradient(torch, data, kw))
    assert _same(got, ref), (got, ref)


def test_gradient_is_differentiable_and_its_dtype_is_the_default_for_ints() -> None:
    x = ember.tensor([1.0, 3.0, 2.0, 5.0], requires_grad=True)
    (g,) = ember.gradient(x, edge_order=2)
    g.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape
    assert ember.gradient(ember.tensor([1, 2, 4]))[0].dtype is ember.float32


_A = RNG.standard_normal((3, 4, 4))
COND = [(_A, p) for p in (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc", 3, "max")] + [
    (RNG.standard_normal((2, 3, 5)), None),
    (RNG.standard_normal((2, 3, 5)), 1),
    (_A[0] + 1j * _A[1], None),
    (_A[0] + 1j * _A[1], "fro"),
    (np.ones((0, 0)), None),
    (np.ones((2, 0, 0)), "fro"),
    (np.ones(3), None),
    (np.array([[1.0, 2.0], [2.0, 4.0]]), 1),  # singular: inf
    (np.array([[math.nan, 1.0], [2.0, 3.0]]), 1),  # NaN: inf, as PyTorch's
    (np.array([[1e300, 1.0], [2.0, 3e300]]), "fro"),  # an overflowing norm: inf
]


@requires_torch
@pytest.mark.parametrize(("A", "p"), COND, ids=[f"{c[0].shape}-{c[1]}" for c in COND])
def test_linalg_cond_matches_torch(A: np.ndarray, p: Any) -> None:
    got = _outcome(lambda: ember.linalg.cond(ember.tensor(A), p))
    ref = _outcome(lambda: torch.linalg.cond(torch.tensor(A), p))
    assert _same(got, ref), (got, ref)


@requires_torch
@pytest.mark.parametrize("p", [None, -2, "nuc"])
def test_linalg_cond_gradient_matches_torch(p: Any) -> None:
    x, t = ember.tensor(_A, requires_grad=True), torch.tensor(_A, requires_grad=True)
    (ge,) = ember.autograd.grad(ember.linalg.cond(x, p).sum(), x)
    (gt,) = torch.autograd.grad(torch.linalg.cond(t, p).sum(), t)
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-6, atol=1e-9)


def test_linalg_cond_by_inverse_is_differentiable() -> None:
    # PyTorch's own backward fails here (it masks the inverse in place); ember's does not
    A = ember.tensor(_A[0] + 4 * np.eye(4), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember.linalg.cond(a, 1), (A,))
    assert ember.autograd.gradcheck(lambda a: ember.linalg.cond(a, "fro"), (A,))


_S = RNG.standard_normal((2, 6, 3, 2))


@requires_torch
def test_channel_shuffle_values_gradients_and_module_match_torch() -> None:
    out = []
    for lib in (ember, torch):
        x = lib.tensor(_S, requires_grad=True)
        y = lib.nn.ChannelShuffle(3)(x)
        (y * lib.arange(36.0, dtype=lib.float64).reshape(6, 3, 2)).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy(), repr(lib.nn.ChannelShuffle(3))))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    assert out[0][2] == out[1][2] == "ChannelShuffle(groups=3)"


@requires_torch
def test_channel_shuffle_under_vmap_and_forward_ad_matches_torch() -> None:
    vm = [
        lib.func.vmap(lambda v, lib=lib: lib.channel_shuffle(v, 3))(lib.tensor(_S)) for lib in LIBS
    ]
    np.testing.assert_array_equal(vm[0].numpy(), vm[1].numpy())
    tangents = []
    for lib in LIBS:
        fwd = import_module(f"{lib.__name__}.autograd.forward_ad")
        with fwd.dual_level():
            t = (
                lib.ones(2, 6, 3, 2, dtype=lib.float64)
                * lib.arange(6.0, dtype=lib.float64)[:, None, None]
            )
            d = fwd.make_dual(lib.tensor(_S), t)
            tangents.append(fwd.unpack_dual(lib.channel_shuffle(d, 2)).tangent.numpy())
    np.testing.assert_array_equal(tangents[0], tangents[1])


def test_channel_shuffle_has_a_batching_rule() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the slow fallback warns
        ember.func.vmap(lambda v: ember.channel_shuffle(v, 3))(ember.tensor(_S))


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_saved_tensors_pack_hook_runs_with_grad_off(lib: Any) -> None:
    log = []

    def pack(x: Any) -> Any:
        y = x * x  # PyTorch records nothing here, so nothing is packed again
        log.append((y.requires_grad, lib.is_grad_enabled()))
        return x * 1

    a = lib.ones(3, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        y = (a * a).sum()
    y.backward()
    assert log == [(False, False), (False, False)]
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


_V = RNG.standard_normal((2, 3, 2, 4, 4))


@requires_torch
def test_batchnorm3d_and_syncbatchnorm_match_torch() -> None:
    out = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        m = lib.nn.BatchNorm3d(3, momentum=None)
        t = lib.tensor(_V, dtype=lib.float32, requires_grad=True)
        y = m(t)
        (y * y).sum().backward()
        m.eval()
        z = m(t)
        s = lib.nn.SyncBatchNorm(3)(lib.tensor(_V[:, :, 0], dtype=lib.float32))
        seq = lib.nn.Sequential(lib.nn.Conv2d(3, 3, 1), lib.nn.BatchNorm2d(3).eval())
        c = lib.nn.SyncBatchNorm.convert_sync_batchnorm(seq)
        arrays = [a.detach().numpy() for a in (y, t.grad, z, m.running_var, s)]
        out.append((arrays, repr(c), sorted(c.state_dict()), c[1].training))
    for a, b in zip(out[0][0], out[1][0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert out[0][1:] == out[1][1:]


def test_batchnorm3d_and_syncbatchnorm_check_the_input() -> None:
    with pytest.raises(ValueError, match="expected 5D input"):
        ember.nn.BatchNorm3d(3)(ember.ones(2, 3, 4))
    with pytest.raises(ValueError, match="at least 2D"):
        ember.nn.SyncBatchNorm(3)(ember.ones(3))


def test_syncbatchnorm_across_processes_says_it_is_not_supported(monkeypatch: Any) -> None:
    import sys
    import types

    fake = types.SimpleNamespace(is_initialized=lambda: True, get_world_size=lambda group: 2)
    monkeypatch.setitem(sys.modules, "ember.distributed", fake)
    m = ember.nn.SyncBatchNorm(3)
    with pytest.raises(NotImplementedError, match="2 processes is not supported"):
        m(ember.ones(4, 3))
    assert m.num_batches_tracked.item() == 0  # refused before any state changed
    m.eval()
    assert m(ember.ones(4, 3)).shape == (4, 3)  # running statistics need no synchronisation


@requires_torch
def test_zeta_gradient_in_q_matches_torch_and_in_x_raises_as_torch() -> None:
    xs, qs = [2.0, 3.0, 1.5, 4.0], [1.0, 2.0, 0.5, 3.0]
    grads = []
    for lib in (ember, torch):
        q = lib.tensor(qs, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.special.zeta(lib.tensor(xs, dtype=lib.float64), q).sum(), q)
        (h,) = lib.autograd.grad(lib.special.zeta(2.5, q).sum(), q)
        grads.append((g.numpy(), h.numpy()))
        x = lib.tensor(xs, requires_grad=True)
        with pytest.raises(NotImplementedError, match="zeta"):
            lib.special.zeta(x, lib.tensor(qs)).sum().backward()
    for a, b in zip(grads[0], grads[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_conjugate_transposes_and_dim_order(lib: Any) -> None:
    z = lib.tensor([[1 + 2j, 3]])
    assert z.H.tolist() == [[1 - 2j], [3 - 0j]] and z.mH.tolist() == z.H.tolist()
    assert lib.ones(2, 2, 3).mH.shape == (2, 3, 2)
    with pytest.raises(RuntimeError, match="2-D"):
        _ = lib.ones(3).H
    assert lib.zeros(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
    assert lib.zeros(2, 1, 3)[:, :, ::2].dim_order() == (0, 1, 2)
    assert lib.zeros(()).dim_order() == ()


@requires_torch
def test_as_strided_scatter_addresses_the_layout_of_self_as_torch() -> None:
    for make in (
        lambda lib: lib.arange(12.0).reshape(4, 3).t(),
        lambda lib: lib.arange(24.0).reshape(3, 8)[:, ::2],
    ):
        got = ember.as_strided_scatter(make(ember), ember.tensor([-1.0, -2.0, -3.0]), (3,), (4,))
        ref = torch.as_strided_scatter(make(torch), torch.tensor([-1.0, -2.0, -3.0]), (3,), (4,))
        assert got.tolist() == ref.tolist() and got.stride() == ref.stride()


def test_as_strided_scatter_gradient_passes_gradcheck_where_torchs_does_not() -> None:
    s = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    for layout in (lambda a: a, lambda a: a.t()):  # self contiguous, and transposed
        x = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
        assert ember.autograd.gradcheck(
            lambda a, b, f=layout: ember.as_strided_scatter(f(a), b, (2, 3), (1, 2), 1), (x, s)
        )
    if torch is not None:  # PyTorch 2.13's own gradcheck fails (docs/fidelity.md)
        x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
        s = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
        fn = lambda a, b: torch.as_strided_scatter(a, b, (2, 3), (1, 2), 1)  # noqa: E731
        assert not torch.autograd.gradcheck(fn, (x, s), raise_exception=False)
