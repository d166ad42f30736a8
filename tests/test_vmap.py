"""``ember.func.vmap``: in the style of PyTorch's test/functorch/test_vmap.py, against
torch.func.vmap on the same inputs, and against a loop over the batch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember
from ember.func import vmap

from .conftest import requires_torch, torch


def _t(x: Any) -> Any:
    return torch.from_numpy(np.array(x.numpy(), copy=True))


def _same(a: Any, b: Any) -> None:
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def _rand(*shape: int, seed: int = 0) -> Any:
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _both(fn_e: Any, fn_t: Any, *args: Any, **vkw: Any) -> None:
    got = vmap(fn_e, **vkw)(*args)
    want = torch.func.vmap(fn_t, **vkw)(
        *[_t(a) if isinstance(a, ember.Tensor) else a for a in args]
    )
    _same(got, want)


#: functions of one example, written once for both namespaces (``m`` is ember or torch)
FUNCTIONS = [
    lambda m, x, y: x * y + 1,
    lambda m, x, y: m.where(x > 0, x, y),
    lambda m, x, y: (x @ y.T).sum(0),
    lambda m, x, y: x.softmax(-1) - y.log_softmax(0),
    lambda m, x, y: x.t().reshape(-1)[:5] * y.mean(),
    lambda m, x, y: m.cat([x, y], 1).std(1),
    lambda m, x, y: x.max(1).values + y.argmax(),
    lambda m, x, y: x.unsqueeze(0).expand(2, 3, 4).permute(2, 0, 1),
    lambda m, x, y: m.nn.functional.linear(x, y, y[0, :3]).abs().amax(-1, keepdim=True),
]


@requires_torch
@pytest.mark.parametrize("fn", range(len(FUNCTIONS)))
@pytest.mark.parametrize("in_dims", [0, (1, None), (None, 2)])
def test_matches_torch(fn: int, in_dims: Any) -> None:
    f = FUNCTIONS[fn]
    # each example is a pair of (3, 4) tensors; the batch has 5
    x, y = {
        0: (_rand(5, 3, 4), _rand(5, 3, 4, seed=1)),
        (1, None): (_rand(3, 5, 4), _rand(3, 4, seed=1)),
        (None, 2): (_rand(3, 4), _rand(3, 4, 5, seed=1)),
    }[in_dims]
    _both(lambda a, b: f(ember, a, b), lambda a, b: f(torch, a, b), x, y, in_dims=in_dims)


@requires_torch
def test_nested_and_out_dims() -> None:
    x, y = _rand(2, 3, 4), _rand(3, 4, seed=1)

    def f(a: Any, b: Any) -> Any:
        return a * b, a.sum()

    got = vmap(vmap(f, in_dims=(0, 0)), in_dims=(0, None), out_dims=(1, 0))(x, y)
    tv = torch.func.vmap
    want = tv(tv(f, in_dims=(0, 0)), in_dims=(0, None), out_dims=(1, 0))(_t(x), _t(y))
    _same(got, want)


@requires_torch
def test_pytree_in_dims_and_kwargs() -> None:
    x, y = _rand(3, 4), _rand(4, 3, seed=1)

    def f(d: Any, scale: float = 1.0) -> Any:
        return d["a"] * d["b"][0] * scale

    got = vmap(f, in_dims=({"a": 0, "b": [1]},))({"a": x, "b": [y]}, scale=2.0)
    want = torch.func.vmap(f, in_dims=({"a": 0, "b": [1]},))({"a": _t(x), "b": [_t(y)]}, scale=2.0)
    _same(got, want)


def test_unbatched_output_is_expanded_and_none_out_dim() -> None:
    x = _rand(3, 2)
    out = vmap(lambda a: ember.ones(2))(x)
    assert tuple(out.shape) == (3, 2)
    out, c = vmap(lambda a: (a * 2, ember.ones(1)), out_dims=(0, None))(x)
    assert tuple(c.shape) == (1,)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        vmap(lambda a: a, out_dims=None)(x)


def _bad_calls(m: Any) -> list[Any]:
    """Calls that vmap refuses, in namespace ``m`` (ember or torch)."""

    def f(x: Any) -> Any:
        return x

    v = m.func.vmap
    return [
        lambda: v(f, in_dims=[0])(m.ones(2)),
        lambda: v(f)(),
        lambda: v(f, in_dims=(0, 0))(m.ones(2)),
        lambda: v(f, in_dims=(2.0,))(m.ones(2)),
        lambda: v(f)(3.0),
        lambda: v(f, in_dims=1)(m.ones(2)),
        lambda: v(f, in_dims=None)(m.ones(2)),
        lambda: v(lambda a, b: a + b)(m.ones(2), m.ones(3)),
        lambda: v(f, out_dims="x")(m.ones(2)),
        lambda: v(lambda a: 1)(m.ones(2)),
        lambda: v(lambda a: (a, a), out_dims=(0, 0, 0))(m.ones(2)),
    ]


@requires_torch
@pytest.mark.parametrize("i", range(len(_bad_calls(ember))))
def test_bad_arguments_raise_pytorch_errors(i: int) -> None:
    with pytest.raises(ValueError) as got:
        _bad_calls(ember)[i]()
    with pytest.raises(ValueError) as want:
        _bad_calls(torch)[i]()
    assert str(got.value) == str(want.value)


def test_data_dependent_errors() -> None:
    x = _rand(3)
    with pytest.raises(RuntimeError, match=r"vmap: It looks like you're calling \.item\(\)"):
        vmap(lambda a: a.item())(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda a: a if a > 0 else -a)(x)


def test_inplace_into_unbatched_raises() -> None:
    x, z = _rand(3, 4), ember.zeros(4)
    with pytest.raises(RuntimeError, match=r"vmap: inplace arithmetic\(self, \*extra_args\)"):
        vmap(lambda a: z.add_(a))(x)
    with pytest.raises(RuntimeError, match=r"vmap: inplace arithmetic"):
        vmap(lambda a: z.copy_(a))(x)


def test_inplace_on_batched_writes_the_input() -> None:
    x = _rand(3, 4)
    want = x.clone()
    want[:, 1:3] *= 2

    def f(a: Any) -> Any:
        a[1:3].mul_(2)
        return a

    out = vmap(f)(x)
    _same(out, want)
    _same(x, want)  # the write went through the view to the caller's tensor


def test_missing_rule_falls_back_with_a_warning_naming_the_op() -> None:
    lib = ember.library.Library("vmaptest", "DEF")
    try:
        lib.define("rowdot(Tensor a, Tensor b) -> Tensor")
        lib.impl("rowdot", lambda a, b: (a * b).sum(-1, keepdim=True), "CPU")
        op = ember.ops.vmaptest.rowdot.default
        x, y = _rand(3, 2, 4), _rand(4, seed=1)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = vmap(op, in_dims=(0, None))(x, y)
        assert any("vmaptest::rowdot" in str(m.message) for m in w)
        _same(out, ember.stack([op(x[i], y) for i in range(3)]))
    finally:
        lib._destroy()


def test_chunk_size_matches_unchunked() -> None:
    x = _rand(7, 3)
    f = vmap(lambda a: a.cumsum(0) * a.sum(), chunk_size=3)
    _same(f(x), vmap(lambda a: a.cumsum(0) * a.sum())(x))
    with pytest.raises(ValueError, match="chunk_size"):
        vmap(lambda a: a, chunk_size=0)


def test_randomness_argument_checked() -> None:
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(lambda a: a, randomness="sometimes")


def test_alias() -> None:
    assert ember.vmap is ember.func.vmap


def _targets(gm: Any) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_compile_traces_the_batched_ops_not_a_loop() -> None:
    w = _rand(4, 5, seed=3)

    def f(a: Any) -> Any:
        return (a @ w).relu().sum(0) * a.mean()

    graphs: list[Any] = []

    def backend(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm.forward

    for batch in (2, 7):
        x = _rand(batch, 3, 4, seed=batch)
        out = ember.compile(vmap(f), backend=backend)(x)
        _same(out, vmap(f)(x))
    small, big = (_targets(g) for g in graphs)
    assert small == big  # one graph whatever the batch size: no per-example ops
    assert "aten.mm.default" in small
    assert not {"aten.select.int", "aten.stack.default"} & set(small)


def test_lazy_device_records_the_batched_ops_not_a_loop() -> None:
    w = _rand(4, 5, seed=3)
    texts = []
    for batch in (2, 7):
        x = _rand(batch, 3, 4, seed=batch)
        lazy = vmap(lambda a: (a @ w.to("lazy")).relu().sum(0))(x.to("lazy"))
        ir = ember.lazy.debug.dump_ir([lazy])
        texts.append([line.split("=", 1)[1].split()[0].split("(")[0] for line in ir.splitlines()])
        _same(lazy.to("cpu"), vmap(lambda a: (a @ w).relu().sum(0))(x))
    assert texts[0] == texts[1]
    assert "aten.mm.default" in texts[0] and "aten.select.int" not in texts[0]


def test_randomness_modes() -> None:
    ember.manual_seed(0)
    x = _rand(4, 16)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: a + ember.randn(3))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: ember.nn.functional.dropout(a, 0.5))(x)
    for f in (
        lambda a: a * 0 + ember.randn(16),
        lambda a: ember.rand_like(a),
        lambda a: ember.nn.functional.dropout(a * 0 + 1, 0.5),
        lambda a: ember.bernoulli(a * 0 + 0.5),
    ):
        diff = vmap(f, randomness="different")(x)
        same = vmap(f, randomness="same")(x)
        assert not all(bool((diff[i] == diff[0]).all()) for i in range(1, 4))
        assert all(bool((same[i] == same[0]).all()) for i in range(1, 4))
    z = ember.zeros(16)
    with pytest.raises(RuntimeError, match="different inplace randomness on an unbatched"):
        vmap(lambda a: z.uniform_() + a, randomness="different")(x)
    nested = vmap(vmap(lambda a: ember.randn(2), randomness="different"), randomness="same")
    out = nested(ember.ones(3, 4))
    assert tuple(out.shape) == (3, 4, 2)
    assert bool((out[0] == out[1]).all()) and not bool((out[0, 0] == out[0, 1]).all())


@requires_torch
@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_batch_norm_matches_torch(track: bool, mode: str) -> None:
    x = _rand(4, 2, 3, 5, 5)
    bn, tbn = (
        ember.nn.BatchNorm2d(3, track_running_stats=track),
        torch.nn.BatchNorm2d(3, track_running_stats=track),
    )
    getattr(bn, mode)()
    getattr(tbn, mode)()
    if track and mode == "train":  # running statistics written by every example
        for call in (lambda: vmap(bn)(x), lambda: torch.func.vmap(tbn)(_t(x))):
            with pytest.raises(RuntimeError, match="Batch norm got a batched tensor as input"):
                call()
        return
    _same(vmap(bn)(x), torch.func.vmap(tbn)(_t(x)))
