"""Random programs (the generator of tests/test_random_programs.py) under ``vmap``: each
input batched (the program's input and a copy with its values permuted), the program's
values under vmap equal a loop of the program over the batch, dtypes exactly. A run the
loop cannot do (an example raises) is not compared; vmap may refuse a program only with
its own errors (a value read in control flow, a view without a rule), never another.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from hypothesis import HealthCheck, assume, given, settings

import ember
from ember.func import vmap
from ember.testing._internal.programs import Program, close, programs

from .conftest import requires_torch

pytestmark = requires_torch

BATCH = 2


def _run(program: Program, inputs: list[Any]) -> list[Any]:
    values = dict(zip([i.name for i in program.inputs], inputs, strict=True))
    for step in program.steps:
        values.update(zip(step.outputs, step.execute(ember, values), strict=True))
    return [values[n] for s in program.steps for n in s.outputs]


def _variant(x: Any, seed: int) -> Any:
    arr = np.array(x.detach().numpy(), copy=True)
    flat = arr.reshape(-1)
    np.random.default_rng(seed).shuffle(flat)
    return ember.from_numpy(flat.reshape(arr.shape).copy())


def _is_vmap_refusal(exc: BaseException) -> bool:
    return isinstance(exc, (RuntimeError, ValueError)) and str(exc).startswith("vmap")


@settings(
    max_examples=40,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(programs(min_steps=3, max_steps=8))
def test_programs_under_vmap_equal_a_loop(program: Program) -> None:
    base = [inp.make(ember).detach() for inp in program.inputs]
    examples = [[x if b == 0 else _variant(x, b) for x in base] for b in range(BATCH)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loop = [_run(program, ex) for ex in examples]
            batched = [ember.stack([ex[i] for ex in examples]) for i in range(len(base))]
    except Exception:  # noqa: BLE001 - an example the program cannot run: nothing to compare
        assume(False)
        return
    names = [n for s in program.steps for n in s.outputs]
    if any(
        not isinstance(v, ember.Tensor) or v.shape != loop[0][k].shape
        for r in loop
        for k, v in enumerate(r)
    ):
        assume(False)  # an output whose shape depends on the values cannot be batched
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = vmap(lambda *xs: tuple(_run(program, list(xs))))(*batched)
    except Exception as exc:  # noqa: BLE001
        assert _is_vmap_refusal(exc), f"{type(exc).__name__}: {exc}\n{program.to_source()}"
        return
    for k, name in enumerate(names):
        want = [r[k] for r in loop]
        g = got[k]
        assert g.dtype == want[0].dtype, f"{name}: {g.dtype} != {want[0].dtype}"
        tol = max(program.tolerances.get(name, 1e-3), 1e-5)
        for b in range(BATCH):
            a, e = g[b].detach().numpy(), want[b].detach().numpy()
            assert a.shape == e.shape, f"{name}[{b}]: {a.shape} != {e.shape}"
            if a.dtype.kind in "fc":
                bad = ~close(a, e, tol) & ~(np.isnan(a) & np.isnan(e))
                assert not bad.any(), f"{name}[{b}]\n{a}\n!=\n{e}\n{program.to_source()}"
            else:
                assert (a == e).all(), f"{name}[{b}]\n{a}\n!=\n{e}\n{program.to_source()}"
