"""``ember.func``'s reverse transforms inside ordinary autograd, against ``torch.func``.

PyTorch treats ordinary autograd as the lowest transform level: what a transform computes
from tensors that level tracks (a captured parameter, an input that requires grad) stays
differentiable by ``backward`` (NOTE [reverse-mode transforms] in ``ember/func/_reverse.py``).
MAML's second-order step is the classic use. Random programs check every op of the
tester through the two compositions (``ember/testing/_internal/program_transforms.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import ember
from ember.testing._internal.program_transforms import check_composition
from ember.testing._internal.programs import Program, format_failure, minimize, programs

from .conftest import requires_torch, torch

pytestmark = requires_torch


def _np(t: Any) -> Any:
    return None if t is None else np.asarray(t.detach().numpy())


def _maml(lib: ModuleType) -> list[Any]:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    x = lib.tensor([3.0, 4.0])

    def inner(p: Any) -> Any:
        return ((p * x).sum() - 1) ** 2

    p2 = w - 0.1 * lib.func.grad(inner)(w)
    inner(p2).backward()
    return [w.grad]


def _captured(lib: ModuleType) -> list[Any]:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    x = lib.tensor([3.0, 4.0])
    out = (x * w).sum() + lib.func.grad(lambda a: ((a * w).sum()) ** 2)(x).sum()
    out.backward()
    return [w.grad]


def _input_requires_grad(lib: ModuleType) -> list[Any]:
    x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
    g = lib.func.grad(lambda a: (a.sin() * a).sum())(x)
    (g * g).sum().backward()
    return [x.grad]


def _vjp_pullback(lib: ModuleType) -> list[Any]:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    x = lib.tensor([3.0, 4.0])
    o, fn = lib.func.vjp(lambda a: a.sin() * w, x)
    (g,) = fn(lib.ones(2))
    (g.sum() + o.sum()).backward()
    return [w.grad]


def _vjp_cotangent(lib: ModuleType) -> list[Any]:
    c = lib.tensor([0.5, -1.5], requires_grad=True)
    _, fn = lib.func.vjp(lambda a: a * a, lib.tensor([1.0, 2.0]))
    (g,) = fn(c)
    (g * g).sum().backward()
    return [c.grad]


def _jacrev(lib: ModuleType) -> list[Any]:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    jac = lib.func.jacrev(lambda a: a.sin() * w)(lib.tensor([3.0, 4.0]))
    (jac * jac).sum().backward()
    return [w.grad]


def _hessian(lib: ModuleType) -> list[Any]:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    h = lib.func.hessian(lambda a: (a * a * a * w).sum())(lib.tensor([0.5, -1.0]))
    h.sum().backward()
    return [w.grad]


def _vmap_grad(lib: ModuleType) -> list[Any]:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    per = lib.func.vmap(lib.func.grad(lambda a: ((a * w).sum()) ** 2))(lib.ones(3, 2))
    per.sum().backward()
    return [w.grad]


def _grad_and_value(lib: ModuleType) -> list[Any]:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    g, v = lib.func.grad_and_value(lambda a: (a * a * w).sum())(lib.tensor([3.0, 4.0]))
    (g.sum() + v).backward()
    return [w.grad]


def _nested(lib: ModuleType) -> list[Any]:
    w = lib.tensor([0.3, -0.7], requires_grad=True)
    f = lib.func.grad(lib.func.grad(lambda a: (a.exp() * w).sum() * a.sum()))
    f(lib.tensor(0.25)).backward()
    return [w.grad]


CASES: dict[str, Callable[[ModuleType], list[Any]]] = {
    "maml": _maml,
    "captured": _captured,
    "input_requires_grad": _input_requires_grad,
    "vjp_pullback": _vjp_pullback,
    "vjp_cotangent": _vjp_cotangent,
    "jacrev": _jacrev,
    "hessian": _hessian,
    "vmap_grad": _vmap_grad,
    "grad_and_value": _grad_and_value,
    "nested": _nested,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_outer_backward_through_a_transform_matches_torch(case: str) -> None:
    expected = CASES[case](torch)
    actual = CASES[case](ember)
    for e, a in zip(expected, actual, strict=True):
        assert a is not None, f"{case}: no gradient reached the outer tensor"
        np.testing.assert_allclose(_np(a), _np(e), rtol=1e-5, atol=1e-6)


def _tracked(lib: ModuleType) -> list[tuple[bool, bool]]:
    """(requires_grad, has grad_fn) of what the transforms return, for each situation."""
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    x = lib.tensor([3.0, 4.0])
    xr = lib.tensor([3.0, 4.0], requires_grad=True)
    out = []

    def mark(t: Any) -> None:
        out.append((t.requires_grad, t.grad_fn is not None))

    mark(lib.func.grad(lambda a: (a * a).sum())(x))  # nothing outer: detached
    mark(lib.func.grad(lambda a: (a * a).sum())(xr))  # the input is tracked outside
    mark(lib.func.grad(lambda a: (a * w).sum())(x))  # a captured parameter
    mark(lib.func.grad(lambda a: (a * a).sum() + w.sum())(x))  # w only in the value
    g, v = lib.func.grad_and_value(lambda a: (a * a).sum() + (w * 1).sum())(x)
    mark(g)
    mark(v)
    with lib.no_grad():  # grad mode off where the transform is called
        mark(lib.func.grad(lambda a: (a * w).sum())(x))
    o, fn = lib.func.vjp(lambda a: a * 2, x)
    mark(o)
    mark(fn(lib.ones(2))[0])
    mark(fn(lib.ones(2, requires_grad=True))[0])
    o, fn = lib.func.vjp(lambda a: a * w, x)
    mark(o)
    mark(fn(lib.ones(2))[0])
    return out


def test_what_the_outer_level_tracks_matches_torch() -> None:
    assert _tracked(ember) == _tracked(torch)


def test_per_sample_gradients_stay_detached() -> None:
    """The usual recipe (parameters detached, passed as arguments) keeps no graph."""
    params = {"w": ember.randn(3, 2), "b": ember.randn(2)}

    def loss(p: Any, x: Any) -> Any:
        return ((x @ p["w"] + p["b"]) ** 2).sum()

    grads = ember.func.vmap(ember.func.grad(loss), in_dims=(None, 0))(params, ember.randn(5, 3))
    assert all(not g.requires_grad and g.grad_fn is None for g in grads.values())


UNHEALTHY = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def test_programs_through_transforms_in_backward_agree_with_pytorch(program_count: int) -> None:
    """Random programs as ``L(a)`` with their other inputs captured: MAML's step through
    ``grad`` and a pullback through ``vjp``, backpropagated, give PyTorch's gradients."""

    @settings(
        max_examples=max(program_count // 10, 1), suppress_health_check=UNHEALTHY,
        derandomize=True, database=None, deadline=None,
    )  # fmt: skip
    @given(programs())
    def check(program: Program) -> None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module="torch")  # PyTorch's, on odd inputs
            mismatches = check_composition(program, ember, torch)
        if mismatches:
            kind = mismatches[0].split(":")[0]

            def fails(p: Program) -> bool:
                return any(m.split(":")[0] == kind for m in check_composition(p, ember, torch))

            smallest = minimize(program, fails)
            raise AssertionError(
                format_failure(smallest, check_composition(smallest, ember, torch))
            )

    check()
