"""ember.while_loop (and the HigherOrderOperator class) against torch.while_loop: values,
gradients through the iterations, int carries, and the refusals PyTorch makes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember._higher_order_ops.base import HigherOrderOperator
from ember._ops import HigherOrderOperator as FromOps

torch = pytest.importorskip("torch")


def _collatz(lib: Any) -> Any:
    def cond_fn(n: Any, steps: Any) -> Any:
        return n > 1

    def body_fn(n: Any, steps: Any) -> Any:
        odd = n % 2 == 1
        return lib.where(odd, 3 * n + 1, n // 2), steps + 1

    return cond_fn, body_fn


def test_values_equal_torch() -> None:
    c, b = _collatz(ember)
    tc, tb = _collatz(torch)
    got = ember.while_loop(c, b, (ember.tensor(27), ember.tensor(0)))
    want = torch.while_loop(tc, tb, (torch.tensor(27), torch.tensor(0)))
    assert [int(v) for v in got] == [int(v) for v in want] == [1, 111]


def test_gradients_flow_through_every_iteration_as_torch() -> None:
    def run(lib: Any) -> tuple[Any, Any]:
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        w = lib.tensor([1.5, 0.5, -0.5])
        _, y = lib.while_loop(
            lambda i, y: i < 4, lambda i, y: (i + 1, (y * w).sin()), (lib.tensor(0), x)
        )
        y.sum().backward()
        return y.detach().numpy(), x.grad.numpy()

    (ev, eg), (tv, tg) = run(ember), run(torch)
    np.testing.assert_allclose(ev, tv, rtol=1e-6)
    np.testing.assert_allclose(eg, tg, rtol=1e-5)


def test_an_int_carry_stays_an_int() -> None:
    got = ember.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2), (0, ember.ones(2)))
    want = torch.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2), (0, torch.ones(2)))
    assert got[0] == want[0] == 3 and isinstance(got[0], int)
    assert got[1].tolist() == want[1].tolist()


def test_a_condition_false_at_once_returns_the_inputs_values() -> None:
    """As PyTorch's: new tensors with the inputs' values, in the body's structure (a lone
    tensor here: the body returns one bare)."""
    for lib in (ember, torch):
        x = lib.ones(2)
        out = lib.while_loop(lambda x: x.sum() > 5, lambda x: x + 1, (x,))
        assert isinstance(out, lib.Tensor) and out is not x and out.tolist() == [1.0, 1.0]
        i, y = lib.while_loop(lambda i, y: i < 0, lambda i, y: (i + 1, y * 2), (lib.tensor(1), x))
        assert y is not x and y.tolist() == [1.0, 1.0] and i.item() == 1


@pytest.mark.parametrize(
    ("body", "carried", "match"),
    [
        (lambda i, x: (i + 1, ember.ones(3)), (ember.tensor(0), ember.ones(2)), r"\[3\].*\[2\]"),
        (lambda i, x: (i + 1, x.double()), (ember.tensor(0), ember.ones(2)), "float64"),
        (lambda i, x: (i + 1,), (ember.tensor(0), ember.ones(2)), "returned 1 values for 2"),
        (lambda i, x: (i + 1, x), (ember.tensor(0), ember.ones(2)), "is its input"),
        (lambda i, x: (i + 0.5, x * 1), (0, ember.ones(2)), "is an int"),
    ],
)
def test_a_body_that_changes_its_carry_is_refused(body: Any, carried: Any, match: str) -> None:
    with pytest.raises(RuntimeError, match=match):
        ember.while_loop(lambda i, x: i < 2, body, carried)


def test_bad_conditions_and_carries_are_refused() -> None:
    with pytest.raises(RuntimeError, match="one element"):
        ember.while_loop(lambda x: x, lambda x: x + 1, (ember.zeros(2),))
    with pytest.raises(RuntimeError, match="boolean tensor with one element"):
        ember.while_loop(lambda x: x, lambda x: x + 1, (ember.tensor(0.0),))
    with pytest.raises(RuntimeError, match=r"carried_inputs\[0\] is a str"):
        ember.while_loop(lambda x: False, lambda x: x, ("a",))
    with pytest.raises(RuntimeError, match="tuple or list"):
        ember.while_loop(lambda x: False, lambda x: x, ember.ones(1))


def test_the_operators_are_higher_order_operators_at_torchs_paths() -> None:
    assert FromOps is HigherOrderOperator
    for name in ("cond", "while_loop"):
        op = getattr(ember.ops.higher_order, name)
        assert isinstance(op, HigherOrderOperator)
        assert op.name() == getattr(torch.ops.higher_order, name).name() == name
        assert op.namespace == "higher_order"
    assert callable(ember.while_loop) and callable(torch.while_loop)


def test_a_compiled_loop_is_traced_unrolled_and_equals_eager() -> None:
    def f(x: Any) -> Any:
        return ember.while_loop(lambda k, y: k < 3, lambda k, y: (k + 1, y * 2 + 1), (0, x))[1]

    g = ember.compile(f, backend="aot_eager")
    x = ember.ones(2, requires_grad=True)
    out = g(x)
    assert out.tolist() == f(x).tolist() == [15.0, 15.0]
    out.sum().backward()
    assert x.grad.tolist() == [8.0, 8.0]
    assert g.graph_breaks == []
