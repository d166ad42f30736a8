"""``ember.autograd.functional`` against ``torch.autograd.functional``: values, result
structures (Tensor or tuple, [output][input] nesting), ``requires_grad`` of results,
``create_graph`` (results differentiate again), ``strict`` errors and argument errors; and
the grad-mode and anomaly switches."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

pytestmark = requires_torch

RNG = np.random.default_rng(7)
A = RNG.standard_normal(3)
B = RNG.standard_normal((2, 3))
C = RNG.standard_normal((3, 3))


def _lib_inputs(X: Any, *arrays: np.ndarray, requires_grad: bool = False) -> tuple[Any, ...]:
    return tuple(X.tensor(a, requires_grad=requires_grad) for a in arrays)


def _same(e: Any, t: Any, path: str = "result") -> None:
    """Same nesting (Tensor or tuple), shapes, dtypes, values and ``requires_grad``."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{path}: {type(e).__name__} where torch has Tensor"
        assert tuple(e.shape) == tuple(t.shape), f"{path}: shape {e.shape} vs {t.shape}"
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1], path
        assert e.requires_grad == t.requires_grad, f"{path}: requires_grad"
        np.testing.assert_allclose(
            e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=path
        )
        return
    assert type(e) is type(t) and type(t) in (tuple, list), f"{path}: {type(e)} vs {type(t)}"
    assert len(e) == len(t), f"{path}: length {len(e)} vs {len(t)}"
    for i, (a, b) in enumerate(zip(e, t, strict=True)):
        _same(a, b, f"{path}[{i}]")


# functions of the library X, to differentiate
def f_single(X: Any) -> Callable[..., Any]:
    return lambda x: X.sin(x) * x


def f_scalar(X: Any) -> Callable[..., Any]:
    return lambda x: (x**3).sum() * x.sum()


def f_two_in(X: Any) -> Callable[..., Any]:
    return lambda x, y: (X.exp(x) * y).sum(0)


def f_two_in_two_out(X: Any) -> Callable[..., Any]:
    return lambda x, y: ((X.tanh(x) * y).sum(0), (x * x).sum())


def f_two_in_scalar(X: Any) -> Callable[..., Any]:
    return lambda x, y: (X.exp(x) * y).sum() + (x**2).sum() * (y**2).sum()


def f_matrix(X: Any) -> Callable[..., Any]:
    return lambda m: (m @ m).sum(1)


def f_unused(X: Any) -> Callable[..., Any]:
    return lambda x, y: x * 2.0  # independent of y


def f_linear(X: Any) -> Callable[..., Any]:
    return lambda x: (x * 3.0).sum()


# --------------------------------------------------------------------------- jacobian

JACOBIANS: dict[str, tuple[Callable[[Any], Callable[..., Any]], tuple[np.ndarray, ...], bool]] = {
    # name: (function, inputs, inputs passed as a tuple)
    "tensor -> tensor": (f_single, (A,), False),
    "tensor -> tensor, 1-tuple input": (f_single, (A,), True),
    "matrix -> vector": (f_matrix, (C,), False),
    "scalar output": (f_scalar, (A,), False),
    "two inputs -> tensor": (f_two_in, (A, B), True),
    "two inputs -> two outputs": (f_two_in_two_out, (A, B), True),
    "unused input gives zeros": (f_unused, (A, A), True),
}


@pytest.mark.parametrize("name", JACOBIANS, ids=list(JACOBIANS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_matches_pytorch(name: str, create_graph: bool) -> None:
    fn, arrays, as_tuple = JACOBIANS[name]
    got = []
    for X in (ember, torch):
        ins = _lib_inputs(X, *arrays, requires_grad=create_graph)
        got.append(X.autograd.functional.jacobian(fn(X), ins if as_tuple else ins[0], create_graph))
    _same(*got)


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_vectorize_and_forward_mode_give_the_same_jacobian(vectorize: bool) -> None:
    for strategy in ("reverse-mode", "forward-mode"):
        outcome = []
        for X in (ember, torch):
            ins = _lib_inputs(X, A, B)
            try:
                outcome.append(
                    X.autograd.functional.jacobian(
                        f_two_in_two_out(X), ins, vectorize=vectorize, strategy=strategy
                    )
                )
            except NotImplementedError as e:
                outcome.append(type(e).__name__)
        if isinstance(outcome[1], str):
            assert outcome[0] == outcome[1]
        else:
            _same(*outcome)


def test_jacobian_create_graph_differentiates_again() -> None:
    grads = []
    for X in (ember, torch):
        (x,) = _lib_inputs(X, A, requires_grad=True)
        jac = X.autograd.functional.jacobian(f_single(X), x, create_graph=True)
        (jac * X.arange(9.0, dtype=X.float64).reshape(3, 3)).sum().backward()
        grads.append(x.grad)
    _same(*grads)


def test_jacobian_does_not_touch_input_grads_or_grad_mode() -> None:
    x = ember.tensor(A, requires_grad=True)
    with ember.no_grad():
        jac = ember.autograd.functional.jacobian(f_single(ember), x)
        assert not ember.is_grad_enabled()
    assert x.grad is None and not jac.requires_grad


# --------------------------------------------------------------------------- hessian

HESSIANS: dict[str, tuple[Callable[[Any], Callable[..., Any]], tuple[np.ndarray, ...], bool]] = {
    "one input": (f_scalar, (A,), False),
    "one input as a tuple": (f_scalar, (A,), True),
    "two inputs": (f_two_in_scalar, (A, B), True),
    "linear function": (f_linear, (A,), False),
}


@pytest.mark.parametrize("name", HESSIANS, ids=list(HESSIANS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_matches_pytorch(name: str, create_graph: bool) -> None:
    fn, arrays, as_tuple = HESSIANS[name]
    got = []
    for X in (ember, torch):
        ins = _lib_inputs(X, *arrays, requires_grad=create_graph)
        got.append(X.autograd.functional.hessian(fn(X), ins if as_tuple else ins[0], create_graph))
    _same(*got)


# --------------------------------------------------------------------------- products

Case = tuple[Callable[[Any], Callable[..., Any]], tuple[np.ndarray, ...], bool, Any]
PRODUCTS: dict[str, Case] = {
    # name: (function, inputs, as a tuple, v as arrays (None: no v))
    "vjp tensor": (f_single, (A,), False, (A * 0.5,)),
    "vjp two inputs": (f_two_in, (A, B), True, (A,)),
    "vjp two outputs": (f_two_in_two_out, (A, B), True, (A, np.array(2.0))),
    "vjp scalar, v None": (f_scalar, (A,), False, None),
    "vjp unused input": (f_unused, (A, A), True, (A,)),
}  # fmt: skip


@pytest.mark.parametrize("name", PRODUCTS, ids=list(PRODUCTS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_matches_pytorch(name: str, create_graph: bool) -> None:
    fn, arrays, as_tuple, v = PRODUCTS[name]
    got = []
    for X in (ember, torch):
        ins = _lib_inputs(X, *arrays, requires_grad=create_graph)
        vs = None if v is None else _lib_inputs(X, *v)
        vs = vs if vs is None or len(vs) > 1 else vs[0]
        got.append(
            X.autograd.functional.vjp(
                fn(X), ins if as_tuple else ins[0], vs, create_graph=create_graph
            )
        )
    _same(*got)


JVPS: dict[str, tuple[Callable[[Any], Callable[..., Any]], tuple[np.ndarray, ...], bool, Any]] = {
    "jvp tensor": (f_single, (A,), False, (A * 0.5,)),
    "jvp two inputs": (f_two_in, (A, B), True, (A, B)),
    "jvp two outputs": (f_two_in_two_out, (A, B), True, (A, B * 2)),
    "jvp matrix": (f_matrix, (C,), False, (C.T,)),
    "jvp one-element input, v None": (f_single, (A[:1],), False, None),
}  # fmt: skip


@pytest.mark.parametrize("name", JVPS, ids=list(JVPS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_jvp_matches_pytorch(name: str, create_graph: bool) -> None:
    fn, arrays, as_tuple, v = JVPS[name]
    got = []
    for X in (ember, torch):
        ins = _lib_inputs(X, *arrays, requires_grad=create_graph)
        vs = None if v is None else _lib_inputs(X, *v)
        vs = vs if vs is None or as_tuple else vs[0]
        got.append(
            X.autograd.functional.jvp(
                fn(X), ins if as_tuple else ins[0], vs, create_graph=create_graph
            )
        )
    _same(*got)


def test_jvp_equals_jacobian_times_v() -> None:
    x, v = ember.tensor(C), ember.tensor(C.T)
    _, jv = ember.autograd.functional.jvp(f_matrix(ember), x, v)
    jac = ember.autograd.functional.jacobian(f_matrix(ember), x)
    np.testing.assert_allclose(jv.numpy(), (jac * v).sum((1, 2)).numpy(), rtol=1e-12)


HESSIAN_PRODUCTS: dict[str, Case] = {
    "one input": (f_scalar, (A,), False, (A,)),
    "two inputs": (f_two_in_scalar, (A, B), True, (A, B)),
    "linear function": (f_linear, (A,), False, (A,)),
    "one-element input, v None": (f_scalar, (A[:1],), False, None),
}  # fmt: skip


@pytest.mark.parametrize("product", ["vhp", "hvp"])
@pytest.mark.parametrize("name", HESSIAN_PRODUCTS, ids=list(HESSIAN_PRODUCTS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_products_match_pytorch(product: str, name: str, create_graph: bool) -> None:
    fn, arrays, as_tuple, v = HESSIAN_PRODUCTS[name]
    got = []
    for X in (ember, torch):
        ins = _lib_inputs(X, *arrays, requires_grad=create_graph)
        vs = None if v is None else _lib_inputs(X, *v)
        vs = vs if vs is None or as_tuple else vs[0]
        call = getattr(X.autograd.functional, product)
        got.append(call(fn(X), ins if as_tuple else ins[0], vs, create_graph=create_graph))
    _same(*got)


def test_hvp_create_graph_differentiates_again() -> None:
    grads = []
    for X in (ember, torch):
        x, v = _lib_inputs(X, A, A * 2, requires_grad=True)
        _, hv = X.autograd.functional.hvp(f_scalar(X), x, v, create_graph=True)
        hv.sum().backward()
        grads.append((x.grad, v.grad))
    _same(*grads)


# --------------------------------------------------------------------------- errors

ERRORS: dict[str, Callable[[Any], Any]] = {
    "inputs not tensors": lambda X: X.autograd.functional.jacobian(f_single(X), [1.0]),
    "tuple with a non-tensor": lambda X: X.autograd.functional.vjp(
        f_two_in(X), (X.ones(3), 2.0), X.ones(3)
    ),
    "output not a tensor": lambda X: X.autograd.functional.jacobian(lambda x: 3.0, X.ones(2)),
    "v None with many outputs": lambda X: X.autograd.functional.vjp(f_single(X), X.ones(3)),
    "v None with many inputs": lambda X: X.autograd.functional.jvp(f_single(X), X.ones(3)),
    "v wrong size": lambda X: X.autograd.functional.vjp(f_single(X), X.ones(3), X.ones(4)),
    "v entry wrong size": lambda X: X.autograd.functional.jvp(
        f_two_in(X), (X.ones(3), X.ones(2, 3)), (X.ones(3), X.ones(3))
    ),
    "v wrong length": lambda X: X.autograd.functional.jvp(
        f_two_in(X), (X.ones(3), X.ones(2, 3)), (X.ones(3),)
    ),
    "v tuple for one input": lambda X: X.autograd.functional.jvp(
        f_single(X), X.ones(3), (X.ones(3), X.ones(3))
    ),
    "hessian of a vector function": lambda X: X.autograd.functional.hessian(f_single(X), X.ones(3)),
    "hessian of a tuple function": lambda X: X.autograd.functional.hessian(
        lambda x: (x.sum(), x.sum()), X.ones(3)
    ),
    "hvp of a vector function": lambda X: X.autograd.functional.hvp(
        f_single(X), X.ones(3), X.ones(3)
    ),
    "vhp of a tuple function": lambda X: X.autograd.functional.vhp(
        lambda x: (x.sum(),), X.ones(3), X.ones(3)
    ),
    "bad strategy": lambda X: X.autograd.functional.jacobian(
        f_single(X), X.ones(3), strategy="sideways"
    ),
    "forward-mode with create_graph": lambda X: X.autograd.functional.jacobian(
        f_single(X), X.ones(3), create_graph=True, strategy="forward-mode", vectorize=True
    ),
    "forward-mode with strict": lambda X: X.autograd.functional.jacobian(
        f_single(X), X.ones(3), strict=True, strategy="forward-mode", vectorize=True
    ),
    "vectorize with strict": lambda X: X.autograd.functional.jacobian(
        f_single(X), X.ones(3), strict=True, vectorize=True
    ),
    "strict: output independent of input": lambda X: X.autograd.functional.jacobian(
        f_unused(X), (X.ones(3), X.ones(3)), strict=True
    ),
    "strict: output does not require grad": lambda X: X.autograd.functional.vjp(
        lambda x: X.ones(3), X.ones(3), X.ones(3), strict=True
    ),
    "strict: vjp unused input": lambda X: X.autograd.functional.vjp(
        f_unused(X), (X.ones(3), X.ones(3)), X.ones(3), strict=True
    ),
    "strict: jvp of a linear function": lambda X: X.autograd.functional.jvp(
        lambda x: x * 2.0, X.ones(3), X.ones(3), strict=True
    ),
    "strict: hessian of a linear function": lambda X: X.autograd.functional.hessian(
        f_linear(X), X.ones(3), strict=True
    ),
    "strict: hvp of a linear function": lambda X: X.autograd.functional.hvp(
        f_linear(X), X.ones(3), X.ones(3), strict=True
    ),
    "strict: vhp of a linear function": lambda X: X.autograd.functional.vhp(
        f_linear(X), X.ones(3), X.ones(3), strict=True
    ),
    "strict with create_graph: constant jacobian": lambda X: X.autograd.functional.jacobian(
        lambda x: x * 2.0, X.ones(3), strict=True, create_graph=True
    ),
    "strict: quadratic has a constant hessian": lambda X: X.autograd.functional.hvp(
        lambda x: (x * x).sum(), X.ones(3), X.ones(3), strict=True, create_graph=True
    ),
}


@pytest.mark.parametrize("case", ERRORS, ids=list(ERRORS))
def test_errors_match_pytorch(case: str) -> None:
    fn = ERRORS[case]
    outcome = []
    for X in (ember, torch):
        try:
            fn(X)
            outcome.append(("ok", ""))
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            outcome.append((type(e).__name__, str(e).replace("torch", "X").replace("ember", "X")))
    assert outcome[0] == outcome[1]


# --------------------------------------------------------------------------- switches


def test_set_grad_enabled_as_call_block_and_decorator() -> None:
    for X in (ember, torch):
        assert X.is_grad_enabled()
        X.set_grad_enabled(False)  # a plain call: from now on
        try:
            assert not X.is_grad_enabled()
            assert not (X.ones(1, requires_grad=True) * 2).requires_grad
        finally:
            X.set_grad_enabled(True)
        with X.set_grad_enabled(False):
            assert not X.is_grad_enabled()
            with X.set_grad_enabled(True):
                assert X.is_grad_enabled()
            assert not X.is_grad_enabled()
        assert X.is_grad_enabled()

        @X.set_grad_enabled(False)
        def inside(lib: Any = X) -> bool:
            return bool(lib.is_grad_enabled())

        assert X.is_grad_enabled()  # decorating does not switch
        assert inside() is False and X.is_grad_enabled()


def test_set_detect_anomaly_call_and_block() -> None:
    for X in (ember, torch):
        ag = X.autograd
        mode = ag.set_detect_anomaly(True)
        try:
            assert _anomaly(X) == (True, True)
        finally:
            ag.set_detect_anomaly(False)
        assert _anomaly(X)[0] is False
        with ag.set_detect_anomaly(True, check_nan=False):
            assert _anomaly(X) == (True, False)
        assert _anomaly(X)[0] is False
        assert mode is not None


def _anomaly(X: Any) -> tuple[bool, bool]:
    if X is torch:
        return torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()
    return X.autograd.is_anomaly_enabled(), X.autograd.is_anomaly_check_nan_enabled()


def _nan_backward(X: Any) -> None:
    x = X.tensor([0.0], requires_grad=True)
    (X.sqrt(x) * 0.0).sum().backward()  # 0 * inf = nan in SqrtBackward0


@pytest.mark.filterwarnings("ignore:Error detected in")  # PyTorch's traceback of the node
def test_detect_anomaly_warns_and_check_nan_decides() -> None:
    for X in (ember, torch):
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            block = X.autograd.detect_anomaly()
        with block, pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
            _nan_backward(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quiet = X.autograd.detect_anomaly(check_nan=False)
        with quiet:
            _nan_backward(X)  # no error: NaN is not checked
        with X.autograd.set_detect_anomaly(True), pytest.raises(RuntimeError, match="nan"):
            _nan_backward(X)
        _nan_backward(X)  # mode is off again


@requires_torch
def test_jacobian_forward_mode_runs_no_backward_pass(monkeypatch: Any) -> None:
    # strategy="forward-mode" pushes tangents (forward AD), as PyTorch's does
    import ember.autograd.engine as engine

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a backward pass ran")

    monkeypatch.setattr(engine, "run_backward", refuse)
    x = np.random.default_rng(0).standard_normal(3)
    y = np.random.default_rng(1).standard_normal((3, 2))

    def f(m: Any) -> Any:
        return lambda a, b: ((a.sin() * b[:, 0]).cumsum(0), (a.unsqueeze(1) * b).sum(0).exp())

    kw = {"vectorize": True, "strategy": "forward-mode"}
    got = ember.autograd.functional.jacobian(f(ember), (ember.tensor(x), ember.tensor(y)), **kw)
    want = torch.autograd.functional.jacobian(f(torch), (torch.tensor(x), torch.tensor(y)), **kw)
    assert type(got) is type(want) and type(got[0]) is type(want[0])
    for grow, wrow in zip(got, want, strict=True):
        for g, w in zip(grow, wrow, strict=True):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
    one = ember.autograd.functional.jacobian(ember.sin, ember.tensor(x), **kw)
    np.testing.assert_allclose(one.numpy(), np.diag(np.cos(x)), rtol=1e-12)


@requires_torch
def test_hessian_forward_over_reverse_equals_torch() -> None:
    x = np.random.default_rng(0).standard_normal(4)

    def f(m: Any) -> Any:
        return lambda v: (v.sin() * v.exp()).sum() + (v[0] * v[1:]).pow(2).sum()

    kw = {"vectorize": True, "outer_jacobian_strategy": "forward-mode"}
    got = ember.autograd.functional.hessian(f(ember), ember.tensor(x), **kw)
    want = torch.autograd.functional.hessian(f(torch), torch.tensor(x), **kw)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10)
