"""``ember.library.custom_op``: schema inference, fake rules, autograd and opcheck, each
checked on ember and on PyTorch's ``torch.library``."""

# no `from __future__ import annotations`: the ops under test read their hints at runtime

import importlib
import itertools
from typing import Any

import pytest

import ember

_names = itertools.count()


def fresh(name: str) -> str:
    """A name no earlier test defined (both libraries keep ops for the whole process)."""
    return f"ember_tests::{name}{next(_names)}"


def fake_mode(lib: Any) -> Any:
    return importlib.import_module(f"{lib.__name__}._subclasses.fake_tensor").FakeTensorMode()


def test_schema_is_inferred_from_type_hints(lib: Any) -> None:
    T = lib.Tensor

    def f(x: T, y: T | None, k: float = 2.0, n: int = 3, flag: bool = False) -> T:  # type: ignore[valid-type]
        return x.clone()

    op = lib.library.custom_op(fresh("f"), mutates_args=())(f)
    schema = str(op._opoverload._schema)
    assert schema.split("(", 1)[1] == (
        "Tensor x, Tensor? y, float k=2., SymInt n=3, bool flag=False) -> Tensor"
    )


def test_mutated_arguments_are_annotated_and_written(lib: Any) -> None:
    T = lib.Tensor

    def addto(x: T, out: T) -> None:  # type: ignore[valid-type]
        out.add_(x)

    op = lib.library.custom_op(fresh("addto"), mutates_args=("out",))(addto)
    assert "Tensor(a1!) out" in str(op._opoverload._schema)
    o = lib.zeros(2)
    assert op(lib.ones(2), o) is None and o.tolist() == [1.0, 1.0]


def test_fake_rule_and_fake_mode(lib: Any) -> None:
    T = lib.Tensor

    def twice(x: T) -> T:  # type: ignore[valid-type]
        return lib.from_numpy(x.numpy() * 2)

    op = lib.library.custom_op(fresh("twice"), mutates_args=())(twice)
    op.register_fake(lambda x: lib.empty_like(x))
    assert op(lib.ones(2)).tolist() == [2.0, 2.0]
    mode = fake_mode(lib)
    with mode:
        out = op(mode.from_tensor(lib.ones(3, 2)))
    assert type(out).__name__ == "FakeTensor" and tuple(out.shape) == (3, 2)


def test_register_autograd(lib: Any) -> None:
    T = lib.Tensor

    def scale(x: T, k: float) -> T:  # type: ignore[valid-type]
        return lib.from_numpy(x.numpy() * k)

    op = lib.library.custom_op(fresh("scale"), mutates_args=())(scale)

    def setup(ctx: Any, inputs: Any, output: Any) -> None:
        ctx.k = inputs[1]

    op.register_autograd(lambda ctx, g: (g * ctx.k, None), setup_context=setup)
    x = lib.ones(2, requires_grad=True)
    op(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_opcheck(lib: Any) -> None:
    T = lib.Tensor

    def neg(x: T) -> T:  # type: ignore[valid-type]
        return lib.from_numpy(-x.numpy())

    op = lib.library.custom_op(fresh("neg"), mutates_args=())(neg)
    op.register_fake(lambda x: lib.empty_like(x))
    results = lib.library.opcheck(op, (lib.ones(2),))
    assert results["test_schema"] == "SUCCESS" and results["test_faketensor"] == "SUCCESS"


def test_opcheck_catches_a_wrong_fake_rule() -> None:
    def grow(x: ember.Tensor) -> ember.Tensor:
        return ember.cat([x, x])

    op = ember.library.custom_op(fresh("grow"), mutates_args=())(grow)
    op.register_fake(lambda x: ember.empty_like(x))  # wrong: the real result is twice as long
    with pytest.raises(Exception, match="fake"):
        ember.library.opcheck(op, (ember.ones(2),))


def test_unannotated_parameter_is_a_clear_error() -> None:
    def f(x):  # noqa: ANN001, ANN202
        return x

    with pytest.raises(ValueError, match="type hint"):
        ember.library.custom_op(fresh("f"), mutates_args=())(f)
