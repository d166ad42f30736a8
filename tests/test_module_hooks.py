"""Module backward hooks (full, pre, legacy), state-dict hooks, get_parameter/get_buffer and
to_empty, compared with PyTorch from the same weights."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch

pytestmark = requires_torch


def _mlp(lib: Any) -> Any:
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return model


def _x(lib: Any, requires_grad: bool = True) -> Any:
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    return lib.tensor(x, requires_grad=requires_grad)


def _np(t: Any) -> Any:
    return None if t is None else t.detach().numpy()


def _close(a: Any, b: Any) -> None:
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)


def _run_full_hooks(lib: Any, replace: bool, pre_scale: float | None) -> dict[str, Any]:
    model = _mlp(lib)
    seen: list[Any] = []

    def hook(mod: Any, gi: Any, go: Any) -> Any:
        seen.append((gi, go))
        return (gi[0] * 3,) if replace else None

    model[2].register_full_backward_hook(hook)
    if pre_scale is not None:
        model[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * pre_scale,))
    x = _x(lib)
    model(x).pow(2).sum().backward()
    (gi, go), = seen  # fmt: skip
    return {"gi": gi[0], "go": go[0], "x": x.grad, "w0": model[0].weight.grad,
            "w2": model[2].weight.grad, "n": len(seen)}  # fmt: skip


@pytest.mark.parametrize(("replace", "pre_scale"), [(False, None), (True, None), (True, 0.5)])
def test_full_backward_hooks_match_torch(replace: bool, pre_scale: float | None) -> None:
    mine, ref = (
        _run_full_hooks(ember, replace, pre_scale),
        _run_full_hooks(torch, replace, pre_scale),
    )
    assert mine["n"] == ref["n"] == 1
    for k in ("gi", "go", "x", "w0", "w2"):
        _close(mine[k], ref[k])


class _TwoInputs:
    @staticmethod
    def make(lib: Any) -> Any:
        class M(lib.nn.Module):
            def forward(self, a: Any, flag: str, b: Any) -> Any:
                return a * b, (a + b).sum()

        return M()


def test_full_hook_positions_of_non_tensor_args_and_outputs() -> None:
    def run(lib: Any) -> Any:
        m = _TwoInputs.make(lib)
        got: list[Any] = []
        m.register_full_backward_hook(lambda mod, gi, go: got.append((gi, go)))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0])  # needs no gradient
        p, s = m(a, "x", b)
        (p.sum() * 2 + s).backward()
        return got

    (gi_e, go_e), = run(ember)  # fmt: skip
    (gi_t, go_t), = run(torch)  # fmt: skip
    assert len(gi_e) == len(gi_t) == 3 and len(go_e) == len(go_t) == 2
    for e, t in zip(gi_e + go_e, gi_t + go_t, strict=True):
        _close(e, t)


def test_full_hook_without_input_grads_warns_and_refuses_new_values() -> None:
    for lib in (ember, torch):
        m = lib.nn.Linear(3, 2)
        got: list[Any] = []
        m.register_full_backward_hook(lambda mod, gi, go, got=got: got.append(gi))
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            m(_x(lib, requires_grad=False)).sum().backward()
        assert got == [(None,)]
        m2 = lib.nn.Linear(3, 2)
        m2.register_full_backward_hook(lambda mod, gi, go, lib=lib: (lib.ones(5, 3),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="no input requires gradient should always"):
                m2(_x(lib, requires_grad=False)).sum().backward()


def test_hook_count_and_kind_errors_match_torch() -> None:
    for lib in (ember, torch):
        m = lib.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but exp"):
            m(_x(lib)).sum().backward()
        m = lib.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda mod, gi, go: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
            m.register_backward_hook(lambda mod, gi, go: None)


def test_removed_hooks_are_not_called_and_prepend_orders() -> None:
    m = ember.nn.Linear(3, 2)
    order: list[str] = []
    h = m.register_full_backward_hook(lambda mod, gi, go: order.append("a"))
    m.register_full_backward_hook(lambda mod, gi, go: order.append("b"))
    m.register_full_backward_hook(lambda mod, gi, go: order.append("first"), prepend=True)
    m(_x(ember)).sum().backward()
    assert order == ["first", "a", "b"]
    h.remove()
    order.clear()
    m(_x(ember)).sum().backward()
    assert order == ["first", "b"]


@pytest.mark.filterwarnings("ignore:Using a non-full backward hook:FutureWarning")
def test_legacy_backward_hook_sees_and_replaces_the_last_nodes_grads() -> None:
    def run(lib: Any) -> Any:
        m = lib.nn.Sigmoid()
        seen: list[Any] = []

        def hook(mod: Any, gi: Any, go: Any) -> Any:
            seen.append((gi, go))
            return (gi[0] * 10,)

        m.register_backward_hook(hook)
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        (m(x) * lib.tensor([1.0, 2.0])).sum().backward()
        return seen, x.grad

    (se, ge), (st, gt) = run(ember), run(torch)
    assert len(se) == len(st) == 1
    _close(se[0][0][0], st[0][0][0])
    _close(se[0][1][0], st[0][1][0])
    _close(ge, gt)


def test_state_dict_hooks_match_torch() -> None:
    def run(lib: Any) -> Any:
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        calls: list[Any] = []
        model[1].register_state_dict_pre_hook(lambda m, p, k: calls.append(("pre", p, k)))

        def post(m: Any, sd: Any, prefix: str, md: Any) -> None:
            calls.append(("post", prefix, md.get("version")))
            sd.pop(prefix + "num_batches_tracked")

        model[1].register_state_dict_post_hook(post)
        keys = list(model.state_dict(keep_vars=True))
        return calls, keys

    assert run(ember) == run(torch)


def test_state_dict_post_hook_must_return_none() -> None:
    for lib in (ember, torch):
        m = lib.nn.Linear(1, 1)
        m.register_state_dict_post_hook(lambda m, sd, p, md: {})
        with pytest.raises(RuntimeError):
            m.state_dict()


def test_load_state_dict_hooks_match_torch() -> None:
    def run(lib: Any) -> Any:
        model = lib.nn.Sequential(lib.nn.Linear(2, 2))
        saved = {"0.w_old": lib.ones(2, 2), "0.bias": lib.zeros(2), "extra": lib.zeros(1)}
        calls: list[Any] = []

        def rename(m: Any, sd: Any, prefix: str, md: Any, strict: bool, *lists: Any) -> None:
            calls.append(("pre", prefix, strict))
            if prefix + "w_old" in sd:
                sd[prefix + "weight"] = sd.pop(prefix + "w_old")

        def forgive(m: Any, keys: Any) -> None:
            calls.append(("post", list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.unexpected_keys.clear()

        model[0].register_load_state_dict_pre_hook(rename)
        model.register_load_state_dict_post_hook(forgive)
        result = model.load_state_dict(saved, strict=True)
        return calls, model[0].weight.tolist(), sorted(saved), repr(result)

    mine, ref = run(ember), run(torch)
    assert mine == ref


def test_get_parameter_and_get_buffer_match_torch() -> None:
    def run(lib: Any) -> list[Any]:
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        out: list[Any] = [tuple(model.get_parameter("0.weight").shape),
                          model.get_buffer("1.running_var").tolist()]  # fmt: skip
        for call, target in [("get_parameter", "0.nope"), ("get_parameter", "1.running_mean"),
                             ("get_buffer", "0.weight"), ("get_buffer", "2.x")]:  # fmt: skip
            try:
                getattr(model, call)(target)
                out.append(None)
            except AttributeError as e:
                out.append(str(e))
        return out

    assert run(ember) == run(torch)


def test_to_empty_keeps_parameters_shapes_and_dtypes() -> None:
    m = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3)).double()
    w = m[0].weight
    out = m.to_empty(device="cpu")
    assert out is m and m[0].weight is w and isinstance(w, ember.nn.Parameter)
    assert w.shape == (3, 2) and w.dtype == ember.float64 and w.requires_grad
    assert m[1].running_mean.shape == (3,) and m[1].num_batches_tracked.dtype == ember.int64
    m.to_empty(device="meta", recurse=False)  # no tensors of its own: nothing changes
    assert m[0].weight.device.type == "cpu"
