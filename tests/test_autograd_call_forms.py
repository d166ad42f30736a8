"""``autograd.grad`` / ``autograd.backward`` / ``Tensor.backward``: the argument forms PyTorch
takes and the ones it refuses (a tensor or a sequence of them, ``GradientEdge`` mixes,
``grad_outputs`` normalised one per output, ``allow_unused`` with ``materialize_grads``,
``only_inputs``), each compared with PyTorch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import ember
from tests.conftest import requires_torch, torch


def _edge(L: Any, t: Any) -> Any:
    return L.autograd.graph.get_gradient_edge(t)


def _unused(L: Any, **kwargs: Any) -> Any:
    x, y, z = _graph(L)
    w = L.tensor([1.0], requires_grad=True)
    return L.autograd.grad(z, (x, w), **kwargs)


def _graph(L: Any) -> tuple[Any, Any, Any]:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = L.tensor([3.0, 4.0], requires_grad=True)
    return x, y, (x * y).sum()


def _grads(L: Any, call: Callable[..., Any]) -> Any:
    """Run ``call(x, y, z)`` for a backward; the leaves' ``.grad`` after it."""
    x, y, z = _graph(L)
    call(x, y, z)
    return x.grad, y.grad


G = lambda L, f: lambda: L.autograd.grad(*f(*_graph(L)))  # noqa: E731
CASES: dict[str, Callable[[Any], Any]] = {
    "one input": lambda L: G(L, lambda x, y, z: (z, x))(),
    "tuple of inputs": lambda L: G(L, lambda x, y, z: (z, (x, y)))(),
    "list of inputs": lambda L: G(L, lambda x, y, z: (z, [x, y]))(),
    "list of outputs": lambda L: G(L, lambda x, y, z: ([z], [x]))(),
    "iterators": lambda L: G(L, lambda x, y, z: (iter([z]), iter([x])))(),
    "grad_outputs tensor": lambda L: G(L, lambda x, y, z: (z, x, L.tensor(2.0)))(),
    "grad_outputs list": lambda L: G(L, lambda x, y, z: (z, x, [L.tensor(2.0)]))(),
    "grad_outputs None in list": lambda L: G(L, lambda x, y, z: (z, x, [None]))(),
    "grad_outputs float": lambda L: G(L, lambda x, y, z: (z, x, 2.0))(),
    "grad_outputs [float]": lambda L: G(L, lambda x, y, z: (z, x, [2.0]))(),
    "grad_outputs too many": lambda L: G(L, lambda x, y, z: (z, x, [L.tensor(1.0)] * 2))(),
    "grad_outputs too few": lambda L: G(L, lambda x, y, z: ([z, z], x, [L.tensor(1.0)]))(),
    "grad_outputs one tensor, two outputs": lambda L: G(
        L, lambda x, y, z: ([z, z], x, L.tensor(1.0))
    )(),
    "grad_outputs empty": lambda L: G(L, lambda x, y, z: (z, x, []))(),
    "grad_outputs shape": lambda L: G(L, lambda x, y, z: (z, x, L.ones(3)))(),
    "grad_outputs int": lambda L: G(L, lambda x, y, z: (z, x, L.tensor(1)))(),
    "grad_outputs float64": lambda L: G(
        L, lambda x, y, z: (z, x, L.tensor(1.0, dtype=L.float64))
    )(),
    "non-scalar output": lambda L: G(L, lambda x, y, z: (x * 2, x))(),
    "duplicate inputs": lambda L: G(L, lambda x, y, z: (z, [x, x]))(),
    "unused": lambda L: _unused(L),
    "allow_unused": lambda L: _unused(L, allow_unused=True),
    "materialize_grads": lambda L: _unused(L, materialize_grads=True),
    "materialize, allow_unused=True": lambda L: _unused(
        L, allow_unused=True, materialize_grads=True
    ),
    "materialize, allow_unused=False": lambda L: _unused(
        L, allow_unused=False, materialize_grads=True
    ),
    "edge input": lambda L: G(L, lambda x, y, z: (z, _edge(L, x)))(),
    "edge and tensor inputs": lambda L: G(L, lambda x, y, z: (z, (_edge(L, x), y)))(),
    "edge output": lambda L: G(L, lambda x, y, z: ([_edge(L, z)], [x], [L.tensor(1.0)]))(),
    "unused edge, materialize": lambda L: L.autograd.grad(
        _graph(L)[2],
        [_edge(L, L.ones(1, requires_grad=True))],
        allow_unused=True,
        materialize_grads=True,
    ),
    "empty inputs": lambda L: G(L, lambda x, y, z: (z, ()))(),
    "backward inputs=tensor": lambda L: _grads(L, lambda x, y, z: z.backward(inputs=x)),
    "backward inputs=[edge]": lambda L: _grads(
        L, lambda x, y, z: L.autograd.backward(z, inputs=[_edge(L, x)])
    ),
    "backward lists": lambda L: _grads(
        L, lambda x, y, z: L.autograd.backward([z], [L.tensor(2.0)])
    ),
    "backward float": lambda L: _grads(L, lambda x, y, z: L.autograd.backward(z, 2.0)),
    "backward [float]": lambda L: _grads(L, lambda x, y, z: L.autograd.backward(z, [2.0])),
    "Tensor.backward float": lambda L: _grads(L, lambda x, y, z: z.backward(2.0)),
    "backward two outputs, one grad": lambda L: _grads(
        L, lambda x, y, z: L.autograd.backward((z, z * 2), [L.tensor(1.0)])
    ),
    "backward inputs=[]": lambda L: _grads(L, lambda x, y, z: L.autograd.backward(z, inputs=[])),
}


def _outcome(L: Any, case: str) -> Any:
    try:
        out = CASES[case](L)
    except (RuntimeError, TypeError, ValueError) as e:
        return type(e).__name__
    return [None if g is None else g.tolist() for g in out]


@requires_torch
@pytest.mark.parametrize("case", list(CASES))
def test_grad_call_form_as_pytorch(case: str) -> None:
    assert _outcome(ember, case) == _outcome(torch, case)


@requires_torch
@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_messages_are_pytorchs(lib: Any) -> None:
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
        _unused(lib, allow_unused=False, materialize_grads=True)
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears"):
        _unused(lib)
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        CASES["grad_outputs too few"](lib)
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got float"):
        CASES["grad_outputs [float]"](lib)
    with pytest.raises(RuntimeError, match=r"shape of \w+\.Size\(\[3\]\) and output\[0\]"):
        CASES["grad_outputs shape"](lib)


@requires_torch
@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_only_inputs_false_warns_and_is_ignored(lib: Any) -> None:
    x, y, z = _graph(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (g,) = lib.autograd.grad(z, x, only_inputs=False)
    assert g.tolist() == [3.0, 4.0] and y.grad is None
    assert [w.category for w in caught] == [FutureWarning]
    assert "only_inputs argument is deprecated" in str(caught[0].message)


@requires_torch
@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_grad_variables_warns(lib: Any) -> None:
    x, y, z = _graph(lib)
    with pytest.warns(FutureWarning, match="`grad_variables` is deprecated"):
        lib.autograd.backward(z, grad_variables=[lib.tensor(3.0)])
    assert x.grad.tolist() == [9.0, 12.0]
