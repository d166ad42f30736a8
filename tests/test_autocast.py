"""Automatic mixed precision on "cpu" (``ember.autocast``, the AutocastCPU key, NOTE
[autocast as a dispatch key]), ``custom_fwd``/``custom_bwd`` and ``GradScaler``, each
compared with PyTorch on the same inputs."""

from __future__ import annotations

import functools
import pickle
import threading
import warnings
from collections.abc import Callable
from importlib import resources
from typing import Any

import numpy as np
import pytest

import ember
from ember.amp import _kernel, _policy
from ember.utils._python_dispatch import TorchDispatchMode

from .conftest import requires_torch, torch

pytestmark = [
    requires_torch,
    pytest.mark.skipif(not hasattr(ember, "bfloat16"), reason="bfloat16 needs ml_dtypes"),
]

# --------------------------------------------------------------------------- helpers


def _lib(name: str) -> Any:
    return ember if name == "ember" else torch


def _arrays(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {
        "a": f(4, 4), "b": f(4, 4), "v": f(4), "x4": f(2, 3, 8, 8), "w4": f(2, 3, 3, 3),
        "x3": f(2, 3, 8), "w3": f(2, 3, 3), "p": rng.uniform(0.05, 0.95, (4, 4)).astype(np.float32),
        "x5": f(1, 2, 4, 4, 4),
    }  # fmt: skip


def _inputs(lib: Any, dtype_name: str) -> dict[str, Any]:
    dtype = getattr(lib, dtype_name)
    return {k: lib.from_numpy(v.copy()).to(dtype) for k, v in _arrays().items()}


#: name -> fn(lib, F, inputs); run under autocast in both libraries
CASES: dict[str, Callable[[Any, Any, dict[str, Any]], Any]] = {
    # lower precision
    "mm": lambda L, F, t: L.mm(t["a"], t["b"]),
    "matmul": lambda L, F, t: t["a"] @ t["b"],
    "addmm": lambda L, F, t: L.addmm(t["a"], t["a"], t["b"]),
    "bmm": lambda L, F, t: L.bmm(t["a"][None], t["b"][None]),
    "baddbmm": lambda L, F, t: L.baddbmm(t["a"][None], t["a"][None], t["b"][None]),
    "addbmm": lambda L, F, t: L.addbmm(t["a"], t["a"][None], t["b"][None]),
    "linear": lambda L, F, t: F.linear(t["a"], t["b"], t["v"]),
    "conv1d": lambda L, F, t: F.conv1d(t["x3"], t["w3"]),
    "conv2d": lambda L, F, t: F.conv2d(t["x4"], t["w4"], padding=1),
    "conv2d_same": lambda L, F, t: F.conv2d(t["x4"], t["w4"], padding="same"),
    "conv_transpose2d": lambda L, F, t: F.conv_transpose2d(t["x4"], t["w4"].transpose(0, 1)),
    "prelu": lambda L, F, t: F.prelu(t["a"], t["v"][:1]),
    "sdpa": lambda L, F, t: F.scaled_dot_product_attention(
        t["a"][None], t["b"][None], t["a"][None]
    ),
    # float32
    "mse_loss": lambda L, F, t: F.mse_loss(t["a"], t["b"]),
    "l1_loss": lambda L, F, t: F.l1_loss(t["a"], t["b"]),
    "bce": lambda L, F, t: F.binary_cross_entropy(t["p"], t["p"]),
    "bce_logits": lambda L, F, t: F.binary_cross_entropy_with_logits(t["a"], t["p"]),
    "cross_entropy": lambda L, F, t: F.cross_entropy(t["a"], L.tensor([0, 1, 2, 3])),
    "nll_loss": lambda L, F, t: F.nll_loss(t["a"], L.tensor([0, 1, 2, 3])),
    "kl_div": lambda L, F, t: F.kl_div(t["a"], t["p"], reduction="batchmean"),
    "smooth_l1": lambda L, F, t: F.smooth_l1_loss(t["a"], t["b"]),
    "huber": lambda L, F, t: F.huber_loss(t["a"], t["b"]),
    "prod": lambda L, F, t: L.prod(t["p"]),
    "prod_dim": lambda L, F, t: L.prod(t["p"], 0),
    "cdist": lambda L, F, t: L.cdist(t["a"], t["b"]),
    "trace": lambda L, F, t: L.trace(t["a"]),
    "avg_pool3d": lambda L, F, t: F.avg_pool3d(t["x5"], 2),
    "reflection_pad2d": lambda L, F, t: F.pad(t["x4"], (1, 1, 1, 1), mode="reflect"),
    "quantile": lambda L, F, t: L.quantile(t["a"], 0.5),
    "inverse": lambda L, F, t: L.linalg.inv(t["a"].float() + 4 * L.eye(4)),
    # through (keep their input's dtype)
    "relu": lambda L, F, t: F.relu(t["a"]),
    "softmax": lambda L, F, t: F.softmax(t["a"], -1),
    "log_softmax": lambda L, F, t: F.log_softmax(t["a"], -1),
    "layer_norm": lambda L, F, t: F.layer_norm(t["a"], (4,)),
    "sum": lambda L, F, t: t["a"].sum(),
    "cumsum": lambda L, F, t: L.cumsum(t["a"], 0),
    "norm": lambda L, F, t: L.linalg.vector_norm(t["a"]),
    "mv": lambda L, F, t: L.mv(t["a"], t["v"]),
    "max_pool2d": lambda L, F, t: F.max_pool2d(t["x4"], 2),
    "add": lambda L, F, t: t["a"] + t["b"],
    # promote
    "cat": lambda L, F, t: L.cat([t["a"], t["b"]]),
    "cat_mixed": lambda L, F, t: L.cat([t["a"], t["b"].float()]),
    "stack_mixed": lambda L, F, t: L.stack([t["a"].float(), t["b"]]),
    "index_copy_mixed": lambda L, F, t: t["a"].index_copy(0, L.tensor([1]), t["b"][:1].float()),
}


def _run(lib_name: str, case: str, input_dtype: str, amp_dtype: str = "bfloat16") -> Any:
    L = _lib(lib_name)
    t = _inputs(L, input_dtype)
    with L.autocast("cpu", dtype=getattr(L, amp_dtype)):
        return CASES[case](L, L.nn.functional, t)


def _dtype_name(x: Any) -> str:
    return str(x.dtype).split(".")[-1]


# --------------------------------------------------------------------------- the policy


@pytest.mark.parametrize("input_dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_output_dtype_matches_torch(case: str, input_dtype: str) -> None:
    """Each policy class (lower precision, float32, through, promote) gives PyTorch's output
    dtype, for float32 inputs (lower-precision ops cast), bfloat16 inputs (float32 ops cast
    up) and float64 inputs (never cast)."""
    if input_dtype != "float32" and case in ("inverse", "cdist", "quantile", "sdpa", "conv2d_same"):
        pytest.skip("PyTorch has no bfloat16 kernel for it outside autocast")
    try:
        theirs = _run("torch", case, input_dtype)
    except RuntimeError:  # (index_copy of float32 into float64) then ember refuses it too
        with pytest.raises(RuntimeError):
            _run("ember", case, input_dtype)
        return
    ours = _run("ember", case, input_dtype)
    assert _dtype_name(ours) == _dtype_name(theirs), (case, input_dtype)


@pytest.mark.parametrize("case", ["mm", "linear", "conv2d", "addmm", "cat_mixed", "bce"])
def test_float16_region(case: str) -> None:
    theirs = _run("torch", case, "float32", "float16")
    ours = _run("ember", case, "float32", "float16")
    assert _dtype_name(ours) == _dtype_name(theirs)


@pytest.mark.parametrize(
    "case", ["mm", "linear", "conv2d", "conv1d", "baddbmm", "prelu", "mse_loss", "cross_entropy"]
)
def test_values_close_to_torch(case: str) -> None:
    theirs = _run("torch", case, "float32").float().detach().numpy()
    ours = _run("ember", case, "float32").float().detach().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=2e-2, atol=2e-2)


def test_policy_names_are_torch_cpu_autocast_ops() -> None:
    """The lists are PyTorch's: every overload named has an AutocastCPU kernel in PyTorch's
    dispatcher, and every overload with one is named."""
    names = torch._C._dispatch_get_all_op_names()
    theirs = {
        n.split("::", 1)[1]
        for n in names
        if n.startswith("aten::")
        and torch._C._dispatch_has_kernel_for_dispatch_key(n, "AutocastCPU")
    }
    assert set(_policy.POLICY) == theirs
    assert set(_kernel.missing()) < set(_policy.POLICY)
    assert "mm" not in _kernel.missing() and "conv2d" not in _kernel.missing()


def test_promote_rejects_a_third_floating_dtype() -> None:
    """bfloat16 autocast with a float16 argument: PyTorch's prioritize error, clearer."""
    with ember.autocast("cpu"), pytest.raises(RuntimeError, match="widest of float32"):
        ember.cat([ember.ones(2, dtype=ember.float16), ember.ones(2, dtype=ember.bfloat16)])
    with torch.autocast("cpu"), pytest.raises(RuntimeError, match="prioritize"):
        torch.cat([torch.ones(2, dtype=torch.float16), torch.ones(2, dtype=torch.bfloat16)])


def test_integer_and_out_variants_are_not_cast() -> None:
    with ember.autocast("cpu"):
        i = ember.ones(2, 2, dtype=ember.int64)
        assert ember.mm(i, i).dtype == ember.int64
        out = ember.empty(2, 2)
        ember.mm(ember.ones(2, 2), ember.ones(2, 2), out=out)
        assert out.dtype == ember.float32
        y = ember.ones(2, 2)
        y.addmm_(y, y)  # in-place: not cast, as in PyTorch
        assert y.dtype == ember.float32


# --------------------------------------------------------------------------- gradients


def test_gradients_reach_float32_parameters_as_torch() -> None:
    arrs = _arrays()
    grads = {}
    for name in ("ember", "torch"):
        L = _lib(name)
        w = L.from_numpy(arrs["b"].copy()).requires_grad_()
        bias = L.from_numpy(arrs["v"].copy()).requires_grad_()
        x = L.from_numpy(arrs["a"].copy())
        with L.autocast("cpu"):
            out = L.nn.functional.linear(x, w, bias).relu()
            loss = L.nn.functional.cross_entropy(out, L.tensor([0, 1, 2, 3]))
            assert out.dtype == L.bfloat16 and loss.dtype == L.float32
        loss.backward()
        assert w.grad.dtype == L.float32 and bias.grad.dtype == L.float32
        grads[name] = (w.grad.numpy(), bias.grad.numpy(), loss.item())
    for ours, theirs in zip(grads["ember"], grads["torch"], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=2e-2, atol=2e-2)


# --------------------------------------------------------------------------- regions


def test_nested_and_disabled_regions_restore_state() -> None:
    lin = ember.nn.Linear(4, 3)
    x = ember.ones(2, 4)
    assert not ember.is_autocast_enabled("cpu")
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu") and lin(x).dtype == ember.bfloat16
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu") and lin(x).dtype == ember.float32
            with ember.autocast("cpu", dtype=ember.float16):
                # a fresh module: lin's bfloat16 cast is still cached (the outermost region
                # has not exited), and PyTorch's cache would hand it to float16 ops too
                assert ember.nn.Linear(4, 3)(x).dtype == ember.float16
                assert ember.get_autocast_dtype("cpu") == ember.float16
            assert not ember.is_autocast_enabled("cpu")
        assert ember.get_autocast_dtype("cpu") == ember.bfloat16
        assert lin(x).dtype == ember.bfloat16
    assert not ember.is_autocast_enabled("cpu") and lin(x).dtype == ember.float32
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16
    assert not ember.is_autocast_enabled()  # no argument: "cuda", as PyTorch's


def test_state_restored_after_an_exception() -> None:
    with pytest.raises(ValueError), ember.autocast("cpu"):
        raise ValueError
    assert not ember.is_autocast_enabled("cpu")
    assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype == ember.float32


def test_set_autocast_enabled_and_deprecated_forms() -> None:
    ember.set_autocast_enabled("cpu", True)
    try:
        assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype == ember.bfloat16
        with pytest.warns(DeprecationWarning, match="is_autocast_enabled"):
            assert ember.is_autocast_cpu_enabled()
    finally:
        ember.set_autocast_enabled("cpu", False)
    assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype == ember.float32
    with pytest.warns(FutureWarning, match="torch.amp.autocast"):
        region = ember.cpu.amp.autocast()
    with region:
        assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype == ember.bfloat16
    assert ember.amp.autocast is ember.autocast and ember.amp.is_autocast_available("cpu")


def test_autocast_is_thread_local() -> None:
    seen = []
    with ember.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append(ember.is_autocast_enabled("cpu")))
        t.start()
        t.join()
    assert seen == [False]


def test_decorator() -> None:
    @ember.autocast("cpu")
    def f(a: Any) -> Any:
        """doc"""
        return a @ a

    @torch.autocast("cpu")
    def g(a: Any) -> Any:
        return a @ a

    assert f(ember.ones(2, 2)).dtype == ember.bfloat16 and f.__doc__ == "doc"
    assert g(torch.ones(2, 2)).dtype == torch.bfloat16
    assert not ember.is_autocast_enabled("cpu")


def test_unsupported_devices_and_dtypes() -> None:
    for device in ("mps", "xpu", "meta", "lazy", "foo"):
        with pytest.raises(RuntimeError, match=f"'{device}' is not supported.*autocast\\('cpu'"):
            ember.autocast(device)
    with pytest.raises(ValueError, match="of type `str`"):
        ember.autocast(3)  # type: ignore[arg-type]
    with pytest.warns(UserWarning, match="CUDA is not available"):
        region = ember.autocast("cuda")
    with region:  # as PyTorch without CUDA: a disabled region
        assert ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype == ember.float32
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        region = ember.autocast("cpu", dtype=ember.float64)
    with region:
        assert not ember.is_autocast_enabled("cpu")


# --------------------------------------------------------------------------- cast cache


class _Log(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        names = tuple(_dtype_name(a) for a in args if hasattr(a, "dtype") and hasattr(a, "shape"))
        self.calls.append((str(func).replace("aten.", "").split(".")[0], names))
        return out


def _log_lib(lib_name: str) -> Any:
    if lib_name == "ember":
        return _Log
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

    class TorchLog(TorchMode):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[str, tuple[str, ...]]] = []

        __torch_dispatch__ = _Log.__torch_dispatch__

    return TorchLog


@pytest.mark.parametrize("cache", [True, False])
def test_weight_cast_cache_as_torch(cache: bool) -> None:
    counts = {}
    for name in ("ember", "torch"):
        L = _lib(name)
        w = L.ones(4, 4, requires_grad=True)
        x = L.ones(2, 4)
        log = _log_lib(name)()
        with log, L.autocast("cpu", cache_enabled=cache):
            L.mm(x, w)
            L.mm(x, w)
            L.mm(x, w[:2].t())  # a view: never cached
        counts[name] = [c for c, _ in log.calls].count("_to_copy")
    assert counts["ember"] == counts["torch"] == (5 if cache else 6)


def test_cache_emptied_when_the_outermost_region_exits() -> None:
    w = ember.ones(4, 4, requires_grad=True)
    with ember.autocast("cpu"):
        a = ember.mm(ember.ones(2, 4), w)
        with ember.autocast("cpu"):
            b = ember.mm(ember.ones(2, 4), w)
        assert ember.amp._state.local.cache  # the inner exit keeps it
    assert not ember.amp._state.local.cache
    # one cast node feeds both products; backward sums into w.grad once per use
    assert a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0]
    (a.sum() + b.sum()).backward()
    assert w.grad.dtype == ember.float32 and float(w.grad[0, 0]) == 4.0


def test_dispatch_mode_sees_what_torch_shows() -> None:
    """A TorchDispatchMode over Linear + ReLU + cross_entropy, forward and backward: the
    same ops with the same dtypes as under PyTorch (docs/fidelity.md lists the rest: the
    ``_to_copy`` kwargs of ToCopyBackward, and the order of two independent backward ops)."""
    logs = {}
    for name in ("ember", "torch"):
        L = _lib(name)
        L.manual_seed(0)
        lin = L.nn.Linear(4, 3)
        log = _log_lib(name)()
        with log:
            with L.autocast("cpu"):
                loss = L.nn.functional.cross_entropy(L.relu(lin(L.ones(2, 4))), L.tensor([0, 2]))
            forward = len(log.calls)
            loss.backward()
        logs[name] = (log.calls[:forward], sorted(log.calls[forward:]))
    assert logs["ember"][0] == logs["torch"][0]
    assert logs["ember"][1] == logs["torch"][1]


# --------------------------------------------------------------------------- custom Functions


def _scaled_mm(lib: Any, cast_inputs: Any) -> Any:
    seen: dict[str, Any] = {}

    class MM(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            seen["fwd"] = (lib.is_autocast_enabled("cpu"), a.dtype, b.dtype)
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx: Any, g: Any) -> Any:
            a, b = ctx.saved_tensors
            seen["bwd"] = lib.is_autocast_enabled("cpu")
            return g.mm(b.t()), a.t().mm(g)

    return MM, seen


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_and_bwd_as_torch(cast_inputs: str | None) -> None:
    results = {}
    for name in ("ember", "torch"):
        L = _lib(name)
        MM, seen = _scaled_mm(L, None if cast_inputs is None else getattr(L, cast_inputs))
        a = L.ones(2, 3, dtype=L.bfloat16, requires_grad=True)
        b = L.ones(3, 2, requires_grad=True)
        with L.autocast("cpu"):
            out = MM.apply(a, b)
        out.float().sum().backward()
        results[name] = (
            seen["fwd"][0], str(seen["fwd"][1]).split(".")[-1], str(seen["fwd"][2]).split(".")[-1],
            seen["bwd"], _dtype_name(out), _dtype_name(a.grad), _dtype_name(b.grad),
        )  # fmt: skip
    assert results["ember"] == results["torch"]


def test_custom_fwd_checks_device_type() -> None:
    with pytest.raises(ValueError, match="of type `str`"):
        ember.amp.custom_fwd(device_type=None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- GradScaler


def _scaler_run(lib_name: str, grads: list[float]) -> tuple[list[Any], ...]:
    """Steps of SGD through a GradScaler whose gradients are ``grads`` (inf skips a step);
    the scale, the parameter and the state dict after each update."""
    L = _lib(lib_name)
    p = L.nn.Parameter(L.ones(2))
    opt = L.optim.SGD([p], lr=0.1)
    scaler = L.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    scales, params, states = [], [], []
    for g in grads:
        opt.zero_grad()
        loss = scaler.scale((p * g).sum())
        loss.backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        params.append(p.detach().numpy().copy())
        states.append(scaler.state_dict())
    return scales, params, states


def test_grad_scaler_matches_torch() -> None:
    grads = [1.0, 2.0, float("inf"), 1.0, float("nan"), 3.0, 1.0]
    ours = _scaler_run("ember", grads)
    theirs = _scaler_run("torch", grads)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(np.array(ours[1]), np.array(theirs[1]), rtol=1e-6)
    assert ours[2] == theirs[2]
    # the inf and nan steps were skipped: the parameter did not move there
    np.testing.assert_array_equal(ours[1][2], ours[1][1])


def test_grad_scaler_unscale_and_errors() -> None:
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.1)
    scaler = ember.amp.GradScaler("cpu", init_scale=8.0)
    with pytest.raises(AssertionError, match="scaler.scale"):
        scaler.step(opt)
    scaler.scale(p.sum()).backward()
    assert p.grad.tolist() == [8.0, 8.0]
    scaler.unscale_(opt)
    assert p.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: 0.0)
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.get_scale() == scaler.get_scale() == 8.0
    other = ember.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict() == scaler.state_dict()
    off = ember.amp.GradScaler("cpu", enabled=False)
    assert off.scale(ember.tensor(2.0)).item() == 2.0 and off.state_dict() == {}
    with pytest.warns(UserWarning, match="CUDA is not available"):
        assert not ember.amp.GradScaler().is_enabled()
    with pytest.warns(FutureWarning, match="GradScaler\\('cpu'"):
        assert ember.cpu.amp.GradScaler().is_enabled()


# --------------------------------------------------------------------------- training


def _digits(n: int) -> tuple[np.ndarray, np.ndarray]:
    with (resources.files("ember") / "data" / "digits.npz").open("rb") as f, np.load(f) as npz:
        images, labels = npz["images"][:n], npz["labels"][:n]
    return (images / 16.0).astype(np.float32), labels.astype(np.int64)


def _mlp(nn: Any) -> Any:
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


def _cnn(nn: Any) -> Any:
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(4 * 4 * 4, 10),
    )  # fmt: skip


def _train(lib: Any, model: Any, x: np.ndarray, y: np.ndarray, scaled: bool) -> list[float]:
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", enabled=scaled, init_scale=2.0**10)
    xs, ys = lib.from_numpy(x.copy()), lib.from_numpy(y.copy())
    losses = []
    for _ in range(5):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = model(xs)
            assert out.dtype == lib.bfloat16
            loss = lib.nn.functional.cross_entropy(out, ys)
        scaler.scale(loss).backward()
        assert all(p.grad.dtype == lib.float32 for p in model.parameters())
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("scaled", [False, True])
@pytest.mark.parametrize("build", [_mlp, _cnn])
def test_training_under_autocast_matches_torch(build: Callable[[Any], Any], scaled: bool) -> None:
    x, y = _digits(64)
    if build is _cnn:
        x = x.reshape(-1, 1, 8, 8)
    ember.manual_seed(0)
    ours = build(ember.nn)
    theirs = build(torch.nn)
    theirs.load_state_dict(
        {k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    )
    a = _train(ember, ours, x, y, scaled)
    b = _train(torch, theirs, x, y, scaled)
    assert a[-1] < a[0]
    np.testing.assert_allclose(a, b, rtol=3e-2, atol=3e-2)


# --------------------------------------------------------------------------- compile, lazy


@pytest.mark.parametrize("backend", ["ember", "aot_eager"])
def test_compiled_module_under_autocast(backend: str) -> None:
    ember.manual_seed(0)
    model = _mlp(ember.nn)
    x, y = (ember.from_numpy(a) for a in _digits(16))

    def run(m: Any) -> tuple[Any, list[Any]]:
        with ember.autocast("cpu"):
            out = m(x)
            loss = ember.nn.functional.cross_entropy(out, y)
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        return out, grads

    eager, g1 = run(model)
    compiled = ember.compile(model, backend=backend)
    out, g2 = run(compiled)
    assert out.dtype == eager.dtype == ember.bfloat16
    np.testing.assert_allclose(out.float().detach().numpy(), eager.float().detach().numpy())
    for a, b in zip(g1, g2, strict=True):
        assert b.dtype == ember.float32
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    # outside the region the compiled module retraces (autocast is part of its guards)
    assert compiled(x).dtype == ember.float32


def test_autocast_inside_a_compiled_function() -> None:
    @ember.compile
    def f(a: Any, b: Any) -> Any:
        with ember.autocast("cpu"):
            return ember.mm(a, b).relu()

    out = f(ember.ones(2, 3), ember.ones(3, 2))
    assert out.dtype == ember.bfloat16 and out.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert not ember.is_autocast_enabled("cpu")


def test_lazy_tensors_are_cast() -> None:
    a = ember.ones(2, 3, device="lazy")
    with ember.autocast("cpu"):
        out = ember.mm(a, a.t())
        loss = ember.nn.functional.mse_loss(out, out)
    assert out.device.type == "lazy" and out.dtype == ember.bfloat16
    assert loss.dtype == ember.float32
    assert out.cpu().tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_meta_tensors_are_not_cast() -> None:
    """As in PyTorch: autocast for "cpu" casts CPU tensors only."""
    a = ember.ones(2, 2, device="meta")
    with ember.autocast("cpu"):
        assert ember.mm(a, a).dtype == ember.float32


def test_bfloat16_convolution_stays_bfloat16() -> None:
    """A fix found on the way: NumPy's matmul of bfloat16 arrays returns float32."""
    x = ember.ones(1, 2, 4, 4, dtype=ember.bfloat16, requires_grad=True)
    w = ember.ones(3, 2, 3, 3, dtype=ember.bfloat16, requires_grad=True)
    out = ember.nn.functional.conv2d(x, w, ember.ones(3, dtype=ember.bfloat16))
    assert out.dtype == ember.bfloat16
    out.sum().backward()
    assert x.grad.dtype == w.grad.dtype == ember.bfloat16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = ember.nn.functional.conv_transpose2d(x, w.transpose(0, 1))
    assert t.dtype == ember.bfloat16


def test_cuda_amp_spellings_warn_and_stay_disabled() -> None:
    """As on PyTorch's CPU-only build: a script written for a GPU runs, in float32."""
    with pytest.warns(FutureWarning, match="torch.amp.autocast\\('cuda'"):
        region = ember.cuda.amp.autocast()
    with region:
        assert not ember.is_autocast_enabled("cuda") and not ember.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning, match="GradScaler\\('cuda'"):
        scaler = ember.cuda.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.scale(ember.tensor(3.0)).item() == 3.0
    with torch.autocast("cuda", enabled=False):  # PyTorch accepts it the same way
        assert not torch.is_autocast_enabled("cuda")


def test_backward_inside_the_region_as_torch() -> None:
    """``backward()`` called inside the region runs its ops under autocast too, in both."""
    arrs = _arrays()
    grads = {}
    for name in ("ember", "torch"):
        L = _lib(name)
        w = L.from_numpy(arrs["b"].copy()).requires_grad_()
        with L.autocast("cpu"):
            loss = L.nn.functional.mse_loss(L.mm(L.from_numpy(arrs["a"].copy()), w), L.zeros(4, 4))
            loss.backward()
        grads[name] = w.grad
    assert grads["ember"].dtype == ember.float32 and grads["torch"].dtype == torch.float32
    np.testing.assert_allclose(grads["ember"].numpy(), grads["torch"].numpy(), rtol=2e-2, atol=2e-2)


def test_forward_ad_and_vmap_under_autocast() -> None:
    """The transforms' keys sit below AutocastCPU: a tangent goes through the casts, and a
    vmapped product runs in bfloat16, as in PyTorch."""
    import ember.autograd.forward_ad as fwAD

    results = {}
    for name in ("ember", "torch"):
        L = _lib(name)
        fw = fwAD if name == "ember" else torch.autograd.forward_ad
        a, w = L.ones(2, 3), L.ones(3, 2)
        with fw.dual_level(), L.autocast("cpu"):
            out = L.mm(fw.make_dual(a, L.ones(2, 3)), w)
            tangent = fw.unpack_dual(out).tangent
        vm = L.func.vmap(functools.partial(L.matmul, other=w))
        with L.autocast("cpu"):
            batched = vm(L.ones(4, 3))
        results[name] = (_dtype_name(out), _dtype_name(tangent), tangent.float().tolist(),
                         _dtype_name(batched))  # fmt: skip
    assert results["ember"] == results["torch"]


def test_cast_cached_under_no_grad_keeps_its_history() -> None:
    """A weight first cast inside ``no_grad``: the cached cast is recorded anyway, so the
    later op with grad reaches the weight, as in PyTorch."""
    grads = {}
    for name in ("ember", "torch"):
        L = _lib(name)
        w, x = L.ones(2, 2, requires_grad=True), L.ones(2, 2)
        with L.autocast("cpu"):
            with L.no_grad():
                assert not L.mm(x, w).requires_grad
            out = L.mm(x, w)
        out.float().sum().backward()
        grads[name] = w.grad.tolist()
    assert grads["ember"] == grads["torch"] == [[2.0, 2.0], [2.0, 2.0]]
