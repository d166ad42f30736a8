"""Random programs against PyTorch (issue 13): values, dtypes, shapes and input gradients.

The generator lives in ``ember/testing/_internal/programs.py``. CI runs 300 programs; run
more with ``pytest tests/test_random_programs.py --programs 5000`` (or ``EMBER_PROGRAMS``).
A failure prints the shrunk program as Python to paste after ``import ember as torch``.
"""

from __future__ import annotations

import os
import types
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember
from ember.testing._internal.program_jvp import check_jvp
from ember.testing._internal.programs import (
    Builder,
    Input,
    Program,
    Step,
    check_program,
    close,
    format_failure,
    minimize,
    programs,
)

from .conftest import requires_torch, torch

pytestmark = requires_torch

UNHEALTHY = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def test_programs_agree_with_pytorch(program_count: int, pytestconfig: Any) -> None:
    # The default run checks the same programs every time (a repeatable CI); asking for a
    # count (--programs N or EMBER_PROGRAMS) explores new ones on each run.
    explore = pytestconfig.getoption("--programs") is not None or "EMBER_PROGRAMS" in os.environ

    @settings(
        max_examples=program_count,
        suppress_health_check=UNHEALTHY,
        derandomize=not explore,
        database=None if not explore else settings.default.database,
    )
    @given(programs())
    def check(program: Program) -> None:
        mismatches = check_program(program, ember, torch)
        if mismatches:
            kind = mismatches[0].split(":")[0]
            smallest = minimize(
                program,
                lambda p: any(m.split(":")[0] == kind for m in check_program(p, ember, torch)),
            )
            mismatches = check_program(smallest, ember, torch)
            raise AssertionError(format_failure(smallest, mismatches))

    check()


def _program(inputs: list[Input], *steps: tuple[str, tuple[str, ...], str]) -> Program:
    made = [Step(op, args, (code.split(" = ")[0],), code) for op, args, code in steps]
    tolerances = {i.name: 1e-3 for i in inputs} | {s.outputs[0]: 1e-3 for s in made}
    outputs = tuple(s.outputs[0] for s in made)
    return Program(inputs, made, outputs, tolerances | {"grad": 1e-3})


def _example() -> Program:
    x = Input(
        "x0",
        np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]]),
        "float32",
        ".transpose(0, -1)",
        requires_grad=True,
    )
    return _program(
        [x],
        ("mul", ("x0",), "v0 = x0 * 2"),
        ("sum", ("v0",), "v1 = v0.sum(dim=1, keepdim=True)"),
        ("exp", ("v1",), "v2 = torch.exp(v1)"),
    )


def test_agreeing_libraries_report_nothing() -> None:
    assert check_program(_example(), ember, torch) == []


class _Perturbed(types.ModuleType):
    """PyTorch with one function replaced: the tester must notice."""

    def __init__(self, name: str, fn: Any) -> None:
        super().__init__("perturbed_torch")
        self._name, self._fn = name, fn

    def __getattr__(self, attr: str) -> Any:
        return self._fn if attr == self._name else getattr(torch, attr)


def test_a_wrong_value_is_reported() -> None:
    wrong = _Perturbed("exp", lambda t: torch.exp(t) * (1 + 1e-2))
    mismatches = check_program(_example(), wrong, torch)
    assert any(m.startswith("v2:") for m in mismatches), mismatches
    assert not any(m.startswith("v1:") for m in mismatches)


def test_a_wrong_gradient_is_reported() -> None:
    class WrongGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            ctx.save_for_backward(t)
            return torch.exp(t)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (t,) = ctx.saved_tensors
            return g * torch.exp(t) * 2

    mismatches = check_program(_example(), _Perturbed("exp", WrongGrad.apply), torch)
    assert mismatches == [mismatches[0]] and mismatches[0].startswith("x0.grad:"), mismatches


def test_gradients_sharing_memory_are_reported(monkeypatch: Any) -> None:
    """ember's runs are also checked for a .grad aliasing another .grad or a value: with
    the engine made to keep every gradient as is, the two views of one gradient that
    AddBackward sends to x and y show up (NOTE [stealing gradients])."""
    from ember.autograd import engine

    x = Input("x", np.array([1.0, 2.0, 3.0]), "float32", "", requires_grad=True)
    y = Input("y", np.array([4.0, 5.0, 6.0]), "float32", "", requires_grad=True)
    steps = [
        Step("view", ("x",), ("v1",), "v1 = x.view(1, 3)"),
        Step("view", ("y",), ("v2",), "v2 = y.view(1, 3)"),
        Step("add", ("v1", "v2"), ("v3",), "v3 = v1 + v2"),
    ]
    tolerances = dict.fromkeys(["x", "y", "v1", "v2", "v3", "grad"], 1e-3)
    program = Program([x, y], steps, ("v3",), tolerances)  # the loss reads v3 alone
    assert check_program(program, ember, torch) == []
    monkeypatch.setattr(engine, "_owned", lambda g, shared: True)
    assert check_program(program, ember, torch) == ["x.grad: shares memory with y"]


def test_a_wrong_dtype_is_reported() -> None:
    wrong = _Perturbed("exp", lambda t: torch.exp(t).double())
    mismatches = check_program(_example(), wrong, torch)
    assert any("expected float32" in m for m in mismatches), mismatches


def test_an_error_is_reported_with_its_step() -> None:
    def broken(t: Any) -> Any:
        raise RuntimeError("no kernel")

    mismatches = check_program(_example(), _Perturbed("exp", broken), torch)
    assert "step 2 `v2 = torch.exp(v1)` raised RuntimeError: no kernel" in mismatches[0]


def test_a_broken_ember_op_is_caught_by_generated_programs(monkeypatch: Any) -> None:
    """Break ember's ``clone`` of float tensors (every in-place step starts with one) and
    generate programs: the tester must report the wrong values, pasteably."""
    clone = ember.Tensor.clone
    monkeypatch.setattr(
        ember.Tensor, "clone", lambda t: clone(t) + 0.5 if t.is_floating_point() else clone(t)
    )
    found = []

    @settings(max_examples=60, database=None, suppress_health_check=UNHEALTHY)
    @given(programs(min_steps=5, max_steps=8))
    def check(program: Program) -> None:
        if any(".clone()" in step.code for step in program.steps):
            mismatches = check_program(program, ember, torch)
            if mismatches:
                found.append(format_failure(program, mismatches))

    check()
    assert found, "a wrong clone went unnoticed in 60 programs"
    assert found[0].splitlines()[2] == "import ember as torch"


def test_to_source_runs_and_reproduces_the_run() -> None:
    @settings(max_examples=20, database=None, suppress_health_check=UNHEALTHY)
    @given(programs())
    def check(program: Program) -> None:
        namespace: dict[str, Any] = {}
        source = program.to_source("torch").replace("print(", "(")
        exec(compile(source, "<program>", "exec"), namespace)
        run = program.run(torch)
        assert run.error is None
        for name, value in run.values.items():
            pasted = namespace[name]
            assert pasted.dtype == value.dtype and pasted.shape == value.shape
            assert torch.equal(pasted, value) or pasted.is_floating_point()
        for name, grad in run.grads.items():
            assert (namespace[name].grad is None) == (grad is None)

    check()


def test_generated_programs_have_the_requested_length_and_only_stable_steps() -> None:
    @settings(max_examples=30, database=None, suppress_health_check=UNHEALTHY)
    @given(programs(min_steps=5, max_steps=15))
    def check(program: Program) -> None:
        assert len(program.steps) <= 15
        # every step the generator kept is one the oracle runs
        assert program.run(torch, backward=False).error is None

    check()


@given(st.data())
@settings(max_examples=1, database=None)
def test_unstable_steps_are_dropped(data: st.DataObject) -> None:
    """``floor`` at an exact integer and ``relu``'s gradient at 0 are dropped; the same ops
    away from their thresholds are kept."""
    b = Builder(data.draw, torch)
    for values, name in [([1.0, 2.0], "at"), ([1.5, 2.5], "off")]:
        b.pending.append(Input(name, np.array(values), "float64", requires_grad=True))
        b.commit_inputs()
    kept_before = len(b.steps)
    b.emit("floor", ["at"], "v0 = at.floor()")
    b.emit("floor", ["off"], "v0 = off.floor()")
    b.emit("relu", ["off"], "v1 = (off - 1.5).relu()", kinks=True)
    b.emit("relu", ["off"], "v1 = (off - 2.0).relu()", kinks=True)
    assert [s.code for s in b.steps[kept_before:]] == [
        "v0 = off.floor()",
        "v1 = (off - 2.0).relu()",
    ]
    assert b.dropped == 2


def test_close_scales_by_the_tensor_and_equates_nans() -> None:
    expected = np.array([1000.0, 1.0, np.nan, np.inf])
    assert close(np.array([1000.5, 1.05, np.nan, np.inf]), expected, 1e-3).all()
    assert not close(np.array([1000.0, 1.0, 0.0, np.inf]), expected, 1e-3)[2]
    assert not close(np.array([1000.0, 1.0, np.nan, -np.inf]), expected, 1e-3)[3]
    assert not close(np.array([1002.0, 1.0, np.nan, np.inf]), expected, 1e-3)[0]


def test_minimize_keeps_only_what_the_failure_needs() -> None:
    small = minimize(_example(), lambda p: any(s.op == "sum" for s in p.steps))
    assert [s.code for s in small.steps] == ["v0 = x0 * 2", "v1 = v0.sum(dim=1, keepdim=True)"]
    assert small.loss == () and [i.name for i in small.inputs] == ["x0"]


@pytest.mark.parametrize("module", ["ember", "torch"])
def test_failure_report_is_pasteable(module: str) -> None:
    report = format_failure(_example(), ["v2: got [1.0], expected [2.0]"], module)
    assert report.splitlines()[2] == f"import {module} as torch"
    assert "- v2: got [1.0], expected [2.0]" in report


def test_programs_under_jvp_agree_with_backward(program_count: int) -> None:
    """The random programs in forward mode: the loss's tangent equals the directional
    derivative the backward gradients give (``ember/testing/_internal/program_jvp.py``)."""

    @settings(
        max_examples=max(program_count // 10, 1), suppress_health_check=UNHEALTHY,
        derandomize=True, database=None,
    )  # fmt: skip
    @given(programs())
    def check(program: Program) -> None:
        mismatches = check_jvp(program, ember, torch)
        if mismatches:
            smallest = minimize(program, lambda p: bool(check_jvp(p, ember, torch)))
            raise AssertionError(format_failure(smallest, check_jvp(smallest, ember, torch)))

    check()


def test_a_wrong_forward_formula_is_reported() -> None:
    from ember.autograd.forward_ad import _rules

    op = ember.ops.aten.exp.default
    saved = _rules.WRITTEN.get(op)
    _rules.WRITTEN[op] = lambda op, args, kwargs, t, out: t[0] * out * 2  # twice the truth
    _rules._RULES.pop(op, None)
    try:
        assert check_jvp(_example(), ember), "a wrong exp tangent went unnoticed"
    finally:
        _rules.WRITTEN.pop(op)
        if saved is not None:
            _rules.WRITTEN[op] = saved
        _rules._RULES.pop(op, None)
    assert check_jvp(_example(), ember) == []
