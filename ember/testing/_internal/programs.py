"""Random programs of everyday tensor code, run by two libraries and compared.

A :class:`Program` is a list of input tensors and a list of :class:`Step` s, each one or two
lines of ordinary PyTorch code (``v3 = torch.sum(v1, dim=0, keepdim=True)``) naming the op it
exercises, the values it reads and the values it defines. The same text is what runs and what
a failure prints, so a report can be pasted after ``import ember as torch``:

    program = hypothesis_example(programs())
    mismatches = check_program(program, ember, torch)     # values, dtypes, shapes, gradients
    print(format_failure(program, mismatches))

``Program.run(lib, device=...)`` runs it against any module with PyTorch's API (``ember``,
``torch``), on any device, so the lazy device can check itself against eager with the same
programs. The hypothesis strategy :func:`programs` builds programs of 5 to 15 steps over a
vocabulary of pointwise ops, reductions, views, in-place writes through views, indexing,
matmul and einsum, ``nn.functional``, casts and mixed dtypes, special functions, order
statistics, shape and selection ops, contractions and counting ops (``docs/testing.md``).

NOTE [stable steps]: an op whose result jumps at a threshold (floor, comparisons, argmax,
fmod, a cast to int) or whose derivative jumps at a kink (relu, abs, max) would make two
correct libraries disagree whenever an input sits on the threshold up to rounding. While it
builds a program, the strategy runs each candidate step with the oracle in float64 on its
inputs and on the inputs nudged by ±1e-5 of their scale; a step whose outputs (or, for ops
with kinks, whose input gradients) move by more than a few times the nudge is ill-conditioned
there, and is dropped: it is never part of the program, so it neither passes nor fails. The
same test drops catastrophic cancellation and division by almost zero, where the two
libraries' rounding would be amplified past any tolerance. Steps the oracle rejects (shape
errors, dtype errors, non-finite results) are dropped the same way. The comparison tolerance
(1e-3 of a value's scale for anything computed in float32) is larger than what a stable step
may amplify the nudge to, so rounding differences never fail a program.
"""

from __future__ import annotations

import importlib
import math
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ember._tensor import Tensor
from ember.dispatch.codegen import define

FLOATS = ("float32", "float64")
INTS = ("int64", "int32", "int16", "int8", "uint8")
TOLERANCE = {"float32": 1e-3, "float64": 1e-8}
NUDGE = 1e-5  # relative size of the perturbation in the stability test
AMPLIFICATION = 30.0  # how much a stable step may amplify the nudge
MAX_NUMEL = 400


def _dtype_name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _scale(a: np.ndarray, floor: float = 1e-3) -> np.ndarray:
    """Elementwise magnitude a difference is measured against: the value, a tenth of the
    tensor's largest finite magnitude, and a small floor."""
    mag = np.abs(a)
    finite = mag[np.isfinite(mag)]
    return np.asarray(mag + 0.1 * (finite.max() if finite.size else 0.0) + floor)


#: the floor of a gradient's scale: a gradient that is zero in exact arithmetic (a conv bias
#: through a training batch_norm) is the cancellation of terms of the loss's own scale, so
#: its rounding noise is measured against that (a 10,000-program run found -1.9e-7 against
#: PyTorch's -1.6e-6)
GRAD_FLOOR = 1e-2


def close(actual: np.ndarray, expected: np.ndarray, tol: float, floor: float = 1e-3) -> np.ndarray:
    """Elementwise: ``actual`` equals ``expected`` up to ``tol`` of the scale (NaN equals NaN,
    an infinity only itself)."""
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        ok = (np.abs(a - e) <= tol * _scale(e, floor)) & np.isfinite(a) & np.isfinite(e)
    return ok | (a == e) | (np.isnan(a) & np.isnan(e))


# --------------------------------------------------------------------------------------------
# The representation


@dataclass(eq=False)
class Input:
    """An input tensor: its data, dtype, layout (a view making it non-contiguous) and whether
    it requires grad. ``data`` holds the base tensor the layout views."""

    name: str
    data: np.ndarray
    dtype: str
    layout: str = ""  # "", ".transpose(0, -1)", "[::2]" or "[..., ::2]"
    requires_grad: bool = False
    _code: Any = field(default=None, repr=False)

    def expression(self, device: bool = False) -> str:
        """The Python expression building this input (``torch`` the library)."""
        where = ", device=device" if device else ""
        grad = ".requires_grad_()" if self.requires_grad else ""
        if self.data.size == 0 and self.data.ndim != 1:
            # a nested empty list loses the shape: torch.tensor([]) is 1-d
            shape = list(self.data.shape)
            return f"torch.empty({shape}, dtype=torch.{self.dtype}{where}){self.layout}{grad}"
        literal = repr(self.data.tolist())
        return f"torch.tensor({literal}, dtype=torch.{self.dtype}{where}){self.layout}{grad}"

    def make(self, lib: ModuleType, device: Any = None) -> Any:
        """This input as a tensor of ``lib`` on ``device`` (the library's default if None)."""
        if self._code is None:
            self._code = define(
                ["def make(torch, device):", f"    return {self.expression(device=True)}"],
                {}, "make", f"input {self.name}",
            )  # fmt: skip
        return self._code(lib, device)


@dataclass(eq=False)
class Step:
    """One step: ``code`` (statements in terms of ``torch``, ``F`` and earlier values) runs
    ``op`` on the values ``args`` and defines the values ``outputs``."""

    op: str
    args: tuple[str, ...]
    outputs: tuple[str, ...]
    code: str
    _compiled: Any = field(default=None, repr=False)

    def execute(self, lib: ModuleType, values: dict[str, Any]) -> list[Any]:
        """Run the step with ``lib``; ``values`` maps names to tensors. Returns the outputs."""
        if self._compiled is None:  # the step as a function of the library and its values
            body = [f"    {line}" for line in self.code.splitlines()]
            self._compiled = define(
                [f"def step(torch, F, {', '.join(self.args)}):", *body,
                 f"    return ({', '.join(self.outputs)},)"],
                {}, "step", f"step {self.op}",
            )  # fmt: skip
        return list(self._compiled(lib, lib.nn.functional, *(values[n] for n in self.args)))


@dataclass
class Run:
    """What one library computed: every value, the gradients of the inputs that require grad
    (None where the library gives none), and the error that stopped the run, if any."""

    values: dict[str, Any]
    grads: dict[str, Any]
    error: str | None = None


def _weights(lib: ModuleType, v: Any) -> Any:
    return lib.arange(v.numel(), dtype=v.dtype, device=v.device).mul(0.7).cos().reshape(v.shape)


@dataclass(eq=False)
class Program:
    """Inputs, steps, the float values whose weighted sum is the loss, and each value's
    comparison tolerance (0 for exact; ``"grad"`` for the input gradients)."""

    inputs: list[Input]
    steps: list[Step]
    loss: tuple[str, ...]
    tolerances: dict[str, float]
    dropped: int = 0

    def run(self, lib: ModuleType, device: Any = None, backward: bool = True) -> Run:
        """Run the program with ``lib`` on ``device``; then, if ``backward``, backpropagate
        the loss ``sum((v * weights(v)).sum() for v in loss)`` into the inputs."""
        values: dict[str, Any] = {}
        run = Run(values, {})
        for inp in self.inputs:
            values[inp.name] = inp.make(lib, device)
        for i, step in enumerate(self.steps):
            try:
                outs = step.execute(lib, values)
            except Exception as exc:  # noqa: BLE001 - the error is the finding
                run.error = f"step {i} `{step.code}` raised {type(exc).__name__}: {exc}"
                return run
            values.update(zip(step.outputs, outs, strict=True))
        if not backward or not self.loss:
            return run
        try:
            loss = sum((values[n] * _weights(lib, values[n])).sum() for n in self.loss)
            loss.backward()
        except Exception as exc:  # noqa: BLE001
            run.error = f"backward raised {type(exc).__name__}: {exc}"
            return run
        for inp in self.inputs:
            if inp.requires_grad:
                run.grads[inp.name] = values[inp.name].grad
        return run

    def __repr__(self) -> str:
        return f"Program(dropped={self.dropped}):\n{self.to_source()}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # hypothesis shows a falsifying program as its source

    def to_source(self, module: str = "ember") -> str:
        """The program as Python to paste: imports, inputs, steps, loss and backward, and a
        line printing the results and gradients."""
        lines = [f"import {module} as torch", "F = torch.nn.functional"]
        lines += [f"{inp.name} = {inp.expression()}" for inp in self.inputs]
        lines += [step.code for step in self.steps]
        if self.loss:
            lines.append(
                "w = lambda v: torch.arange(v.numel(), dtype=v.dtype)"
                ".mul(0.7).cos().reshape(v.shape)"
            )
            lines.append("loss = " + " + ".join(f"({n} * w({n})).sum()" for n in self.loss))
            lines.append("loss.backward()")
        shown = [o for step in self.steps for o in step.outputs][-3:]
        lines.append(f"print({', '.join(shown)})")
        grads = [f"{inp.name}.grad" for inp in self.inputs if inp.requires_grad]
        if grads and self.loss:
            lines.append(f"print({', '.join(grads)})")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Comparing two runs


def _numpy(t: Any) -> np.ndarray:
    if getattr(t, "_is_zerotensor", lambda: False)():  # PyTorch's efficient zeros (sgn's grad)
        return np.zeros(tuple(t.shape), dtype=_numpy(t.new_zeros(())).dtype)
    return np.asarray(t.detach().cpu().numpy())


def _describe(t: Any) -> str:
    try:
        return f"{_dtype_name(t.dtype)}{list(t.shape)} {_numpy(t).tolist()}"
    except Exception as exc:  # noqa: BLE001
        return f"<{type(t).__name__} that cannot be read: {type(exc).__name__}: {exc}>"


def _compare_tensor(
    what: str, actual: Any, expected: Any, tol: float, floor: float = 1e-3
) -> str | None:
    if expected is None or actual is None:
        if expected is None and actual is None:
            return None
        return f"{what}: got {_describe(actual) if actual is not None else None}, " + (
            f"expected {_describe(expected) if expected is not None else None}"
        )
    try:
        a = _numpy(actual)
        a_dtype, a_shape = _dtype_name(actual.dtype), tuple(actual.shape)
    except Exception as exc:  # noqa: BLE001
        return f"{what}: cannot be read ({type(exc).__name__}: {exc}); expected " + _describe(
            expected
        )
    e = _numpy(expected)
    e_dtype, e_shape = _dtype_name(expected.dtype), tuple(expected.shape)
    if a_dtype != e_dtype or a_shape != e_shape or a.shape != e_shape:
        return (
            f"{what}: got {a_dtype}{list(a_shape)} (data {a.shape}), "
            f"expected {e_dtype}{list(e_shape)}"
        )
    if e_dtype in FLOATS and tol > 0:
        ok = close(a, e, tol, floor)
    else:
        ok = (a == e) | (np.isnan(a) & np.isnan(e)) if e_dtype in FLOATS else a == e
    if not np.all(ok):
        return f"{what}: got {a.tolist()}, expected {e.tolist()}"
    if bool(getattr(actual, "requires_grad", False)) != bool(expected.requires_grad):
        return f"{what}: requires_grad {actual.requires_grad}, expected {expected.requires_grad}"
    return None


def compare(program: Program, actual: Run, expected: Run) -> list[str]:
    """The differences of ``actual`` from ``expected``: errors, then every value (dtype,
    shape, values to the program's tolerance, requires_grad), then the input gradients."""
    problems = []
    if actual.error != expected.error:
        problems.append(f"error: got {actual.error}, expected {expected.error}")
    for name, exp in expected.values.items():
        if name in actual.values:
            found = _compare_tensor(name, actual.values[name], exp, program.tolerances[name])
            if found:
                problems.append(found)
    for name, exp in expected.grads.items():
        found = _compare_tensor(
            f"{name}.grad", actual.grads.get(name), exp, program.tolerances["grad"], GRAD_FLOOR
        )
        if found:
            problems.append(found)
    return problems


def program_settings(default: int) -> Any:
    """Hypothesis settings for a run of random programs: ``EMBER_COMPILE_PROGRAMS`` of them
    (else ``default``), derandomised unless ``EMBER_COMPILE_EXPLORE`` is set.

    >>> from ember.testing._internal.programs import program_settings
    >>> program_settings(5).database is None
    True
    """
    return settings(
        max_examples=int(os.environ.get("EMBER_COMPILE_PROGRAMS", default)),
        derandomize="EMBER_COMPILE_EXPLORE" not in os.environ,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def check_lazy_against_eager(lib: ModuleType, max_examples: int) -> None:
    """Run ``max_examples`` random programs (derandomised) on ``lib``'s lazy device and
    eagerly, asserting that :func:`compare` finds no difference (the failing program's
    source in the message)."""

    @settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(programs())
    def check(program: Program) -> None:
        problems = compare(program, program.run(lib, device="lazy"), program.run(lib))
        assert not problems, f"{program.to_source()}\n" + "\n".join(problems)

    check()


def check_program(program: Program, lib: ModuleType, oracle: ModuleType) -> list[str]:
    """Run ``program`` with ``lib`` and with ``oracle``; return the mismatches (empty if
    they agree), and for ember, any input gradient sharing memory with another or with a
    value of the program (``aliased_grads``)."""
    actual = program.run(lib)
    found = compare(program, actual, program.run(oracle))
    if getattr(lib, "__name__", "") == "ember":
        found += aliased_grads(actual)
    return found


def _array(t: Any) -> np.ndarray | None:
    data = getattr(t, "_edata", None)
    return data if type(data) is np.ndarray else None


def aliased_grads(run: Run) -> list[str]:
    """Gradients that share memory with another input's gradient or with a value: a write
    into one ``.grad`` (an optimizer's in-place step, ``clip_grad_norm_``) would change the
    other. PyTorch allows two leaves' gradients to alias through views (its issue #34082);
    ember never does (NOTE [stealing gradients] in ember/autograd/engine.py)."""
    problems = []
    grads = [(n, _array(g)) for n, g in run.grads.items() if g is not None]
    values = [(n, _array(v)) for n, v in run.values.items() if isinstance(v, Tensor)]
    for i, (name, g) in enumerate(grads):
        if g is None or not g.size:
            continue
        for other, v in grads[i + 1 :] + values:
            if v is not None and v.size and np.shares_memory(g, v, max_work=10**6):
                problems.append(f"{name}.grad: shares memory with {other}")
                break
    return problems


def _pruned(program: Program, steps: list[Step], loss: tuple[str, ...]) -> Program:
    defined = {n for s in steps for n in s.outputs}
    read = {a for s in steps for a in s.args}
    inputs = [i for i in program.inputs if i.name in read]
    kept = tuple(n for n in loss if n in defined)
    return Program(inputs, steps, kept, program.tolerances, program.dropped)


def minimize(program: Program, fails: Callable[[Program], bool]) -> Program:
    """The smallest program found by deleting steps (with the steps that read them) and loss
    terms while ``fails`` still holds; hypothesis shrinks values, this shrinks structure."""
    changed = True
    while changed:
        changed = False
        candidates = []
        for i in reversed(range(len(program.steps))):
            gone = set(program.steps[i].outputs)
            keep = []
            for j, step in enumerate(program.steps):
                if j == i or gone & set(step.args):
                    gone |= set(step.outputs)
                else:
                    keep.append(step)
            candidates.append(_pruned(program, keep, program.loss))
        for n in program.loss:
            loss = tuple(m for m in program.loss if m != n)
            candidates.append(_pruned(program, program.steps, loss))
        for smaller in candidates:
            if fails(smaller):
                program, changed = smaller, True
                break
    return program


def format_failure(program: Program, mismatches: Sequence[str], module: str = "ember") -> str:
    """A report: the program as pasteable Python, then each mismatch (got = ``module``)."""
    return (
        "A random program gives a different answer than PyTorch:\n\n"
        + program.to_source(module)
        + "\n\n"
        + "\n".join(f"- {m}" for m in mismatches)
    )


# --------------------------------------------------------------------------------------------
# Building programs


class _Reject(Exception):
    """A candidate step the oracle rejects or that is not stable (NOTE [stable steps])."""


class Builder:
    """Builds a program step by step, running each candidate with the oracle to learn its
    outputs' shapes and dtypes and to keep only stable steps."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any], oracle: ModuleType):
        self.draw = draw
        self.torch = oracle
        self.inputs: list[Input] = []
        self.steps: list[Step] = []
        self.values: dict[str, Any] = {}  # name -> the oracle's tensor (detached)
        self.tolerances: dict[str, float] = {}
        self.pending: list[Input] = []
        self.dropped = 0
        self.counter = 0

    # drawing ----------------------------------------------------------------------------
    def choice(self, options: Sequence[Any]) -> Any:
        return self.draw(st.sampled_from(options))

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def pick(self, *preds: Callable[[Any], bool]) -> str:
        names = [n for n, v in self.values.items() if all(p(v) for p in preds)]
        if not names:
            raise _Reject("no value fits")
        return self.choice(names)

    def t(self, name: str) -> Any:
        return self.values[name]

    def dim(self, name: str) -> int:
        n = max(self.values[name].dim(), 1)
        return self.integer(-n, n - 1)

    def dims(self, name: str) -> tuple[int, ...]:
        n = self.values[name].dim()
        if n == 0:
            return ()
        chosen = self.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        return tuple(d - n if self.flag() else d for d in chosen)

    def scalar(self, kind: str = "any") -> str:
        if kind == "int" or (kind == "any" and self.flag()):
            return repr(self.choice([2, -1, 3, 1, 0, -2]))
        if kind == "bool":
            return repr(self.flag())
        return repr(self.choice([0.5, -1.5, 2.0, 0.25, 3.0, -0.75, 1.0]))

    # inputs ------------------------------------------------------------------------------
    def new_input(
        self,
        shape: Sequence[int],
        dtype: str,
        *,
        requires_grad: bool | None = None,
        low: int | None = None,
        high: int | None = None,
        unique_along: int | None = None,
        layout: bool = True,
    ) -> str:
        """Add an input (committed with the step that asks for it) and return its name.
        Integer data lies in ``[low, high)``; ``unique_along`` draws a dimension's entries
        from a permutation (scatter targets without duplicates)."""
        seed = self.integer(0, 2**16)
        rng = np.random.default_rng(seed)
        shape = tuple(shape)
        if dtype in FLOATS:
            mode = self.choice(["normal", "normal", "zeros", "constant", "integral"])
            data = np.round(rng.uniform(-3, 3, shape), 3)
            if mode == "zeros":
                data = np.where(rng.random(shape) < 0.4, 0.0, data)
            elif mode == "constant":
                data = np.full(shape, float(data.flat[0]) if data.size else 1.0)
            elif mode == "integral":
                data = np.round(data)
            data = data + 0.0  # no negative zeros in the printed literal
        elif dtype == "bool":
            data = rng.random(shape) < 0.5
        else:
            lo = low if low is not None else (0 if dtype == "uint8" else -4)
            hi = high if high is not None else 6
            if unique_along is not None:
                moved = list(shape)
                moved.append(moved.pop(unique_along))
                if moved[-1] > hi:
                    raise _Skip()
                flat = [rng.permutation(hi)[: moved[-1]] for _ in range(math.prod(moved[:-1]))]
                data = np.moveaxis(np.array(flat, dtype=np.int64).reshape(moved), -1, unique_along)
            else:
                data = rng.integers(lo, hi, shape)
        view = ""
        if layout and len(shape) >= 1 and all(s > 0 for s in shape):
            view = self.choice(["", "", "", ".transpose(0, -1)", "[::2]", "[..., ::2]"])
            if view == ".transpose(0, -1)":
                if len(shape) < 2 or shape[0] == shape[-1] == 1:
                    view = ""
                else:
                    data = np.swapaxes(data, 0, -1)
            elif view:
                axis = 0 if view == "[::2]" else -1
                n = data.shape[axis]
                data = np.repeat(data, 2, axis=axis).take(np.arange(2 * n - 1), axis=axis)
        if requires_grad is None:
            requires_grad = dtype in FLOATS and self.draw(st.integers(0, 3)) > 0
        name = f"x{len(self.inputs) + len(self.pending)}"
        inp = Input(name, np.array(data), dtype, view, requires_grad)
        self.pending.append(inp)
        return name

    def random_shape(self) -> tuple[int, ...]:
        ndim = self.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
        return tuple(
            self.choice([1, 2, 3, 4, 2, 3, 0] if i == 0 else [1, 2, 3, 4]) for i in range(ndim)
        )

    # steps -------------------------------------------------------------------------------
    def outputs(self, n: int = 1) -> list[str]:
        return [f"v{self.counter + i}" for i in range(n)]

    def emit(
        self,
        op: str,
        args: Sequence[str],
        code: str,
        n_out: int = 1,
        *,
        kinks: bool = False,
    ) -> None:
        """Try a step: run it with the oracle, test its stability, keep it if it passes."""
        names = self.outputs(n_out)
        reads = tuple(dict.fromkeys([*args, *(p.name for p in self.pending)]))
        step = Step(op, reads, tuple(names), code)
        values = dict(self.values)
        for p in self.pending:
            values[p.name] = p.make(self.torch)
        try:
            outs = self._check(step, values, kinks)
        except _Reject:
            self.dropped += 1
            return
        finally:
            new_inputs, self.pending = self.pending, []
        self.commit_inputs(new_inputs, values)
        tol = max([self.tolerances[a] for a in reads] + [0.0])
        for name, out in zip(names, outs, strict=True):
            kind = _dtype_name(out.dtype)
            self.values[name] = out
            self.tolerances[name] = max(tol, TOLERANCE[kind]) if kind in FLOATS else 0.0
        self.steps.append(step)
        self.counter += n_out

    def commit_inputs(
        self, inputs: list[Input] | None = None, values: dict[str, Any] | None = None
    ) -> None:
        """Make inputs (by default the pending ones) part of the program."""
        if inputs is None:
            inputs, self.pending = self.pending, []
        for p in inputs:
            self.inputs.append(p)
            value = values[p.name] if values else p.make(self.torch)
            self.values[p.name] = value
            self.tolerances[p.name] = TOLERANCE.get(p.dtype, 0.0)

    def _run(self, step: Step, values: dict[str, Any]) -> list[Any]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outs = step.execute(self.torch, values)
        except Exception as exc:  # noqa: BLE001 - any error rejects the candidate
            raise _Reject(str(exc)) from exc
        for out in outs:
            if not isinstance(out, self.torch.Tensor):
                raise _Reject("not a tensor")
        return outs

    def _check(self, step: Step, values: dict[str, Any], kinks: bool) -> list[Any]:
        T = self.torch
        outs = self._run(step, values)
        for out, again in zip(outs, self._run(step, values), strict=True):
            first, second = out.detach().numpy(), again.detach().numpy()
            if not np.array_equal(first, second, equal_nan=first.dtype.kind == "f"):
                raise _Reject("the oracle reads uninitialized memory")
        for out in outs:
            if out.numel() > MAX_NUMEL:
                raise _Reject("too large")
            if out.is_floating_point() and not bool(T.isfinite(out).all()):
                raise _Reject("not finite")
            if _dtype_name(out.dtype) not in (*FLOATS, *INTS, "bool"):
                raise _Reject("dtype outside the vocabulary")
        wide = {
            n: (v.detach().double() if v.is_floating_point() else v.detach())
            for n, v in values.items()
        }
        floats = [n for n in step.args if wide[n].is_floating_point()]
        rng = np.random.default_rng(len(self.steps))
        # a random sign and a magnitude in [0.5, 1] per element: two equal elements (a tie a
        # sort or argmax resolves by rounding) always move apart, so the nudge reveals them
        # (with signs alone, equal ones moved together half the time; found by a
        # 10,000-program run: the order of two equal variances)
        signs = {
            n: T.from_numpy(
                np.asarray(
                    rng.choice([-1.0, 1.0], tuple(wide[n].shape))
                    * rng.uniform(0.5, 1.0, tuple(wide[n].shape))
                )
            )
            for n in floats
        }
        nudged = []
        for sign in (1.0, -1.0):
            moved = dict(wide)
            for n in floats:
                scale = T.from_numpy(_scale(wide[n].numpy()))
                moved[n] = wide[n] + sign * NUDGE * signs[n] * scale
            nudged.append(moved)
        base = self._run(step, wide)
        for moved in nudged:
            self._same(base, self._run(step, moved))
        if kinks and floats:
            cot = [T.from_numpy(np.asarray(rng.uniform(-1, 1, tuple(o.shape)))) for o in base]
            g0 = self._vjp(step, wide, floats, cot)
            for moved in nudged:
                self._same(g0, self._vjp(step, moved, floats, cot))
        return outs

    def _same(self, base: Sequence[Any], moved: Sequence[Any]) -> None:
        for b, m in zip(base, moved, strict=True):
            if (b is None) != (m is None):
                raise _Reject("gradient appears")
            if b is None:
                continue
            if b.dtype != m.dtype or b.shape != m.shape:
                raise _Reject("shape moved")
            bn, mn = b.detach().numpy(), m.detach().numpy()
            if b.is_floating_point():
                if not np.all(close(mn, bn, AMPLIFICATION * NUDGE)):
                    raise _Reject("unstable")
            elif not np.array_equal(bn, mn):
                raise _Reject("unstable")

    def _vjp(
        self, step: Step, values: dict[str, Any], floats: list[str], cot: list[Any]
    ) -> list[Any]:
        T = self.torch
        values = dict(values)
        leaves = [values[n].detach().clone().requires_grad_() for n in floats]
        values.update(zip(floats, leaves, strict=True))
        outs = self._run(step, values)
        terms = [(o.double() * c).sum() for o, c in zip(outs, cot, strict=True) if o.requires_grad]
        if not terms:
            return [None] * len(leaves)
        try:
            return list(T.autograd.grad(sum(terms), leaves, allow_unused=True))
        except Exception as exc:  # noqa: BLE001 - a backward the oracle cannot do
            raise _Reject(str(exc)) from exc

    def program(self) -> Program:
        """The program built so far; the loss takes each float value that requires grad
        with probability 3/4 (so some outputs stay unused)."""
        prog = Program(list(self.inputs), list(self.steps), (), dict(self.tolerances))
        ran = prog.run(self.torch, backward=False)
        for step in self.steps:
            for n in step.outputs:
                if (
                    n in ran.values
                    and ran.values[n].requires_grad
                    and self.draw(st.integers(0, 3)) > 0
                ):
                    prog.loss += (n,)
        prog.tolerances["grad"] = max([*self.tolerances.values(), 0.0])
        if prog.loss and prog.run(self.torch).error:
            prog.loss = ()  # a derivative the oracle does not implement (floor_divide)
        prog.dropped = self.dropped
        return prog


# --------------------------------------------------------------------------------------------
# The vocabulary: one generator per family; each draws its operands and emits one step.


def _is_float(v: Any) -> bool:
    return bool(v.is_floating_point())


def _is_int(v: Any) -> bool:
    return not v.is_floating_point() and _dtype_name(v.dtype) != "bool"


def _is_intlike(v: Any) -> bool:
    return not v.is_floating_point()


def _nonempty(v: Any) -> bool:
    return v.numel() > 0


def _ndim(k: int) -> Callable[[Any], bool]:
    return lambda v: v.dim() >= k


def _call(b: Builder, fn: str, x: str, rest: str = "") -> str:
    """``torch.fn(x, rest)`` or ``x.fn(rest)``, drawn."""
    if b.flag():
        return f"{x}.{fn}({rest})"
    return f"torch.{fn}({x}{', ' + rest if rest else ''})"


# unary ops on floats: (name, code template, kinks)
_UNARY = [
    ("abs", "{call}", True),
    ("neg", "{call}", False),
    ("exp", "{call}", False),
    ("sin", "{call}", False),
    ("cos", "{call}", False),
    ("tan", "{call}", False),
    ("tanh", "{call}", False),
    ("sigmoid", "{call}", False),
    ("relu", "{call}", True),
    ("erf", "{call}", False),
    ("square", "{call}", False),
    ("expm1", "{call}", False),
    ("reciprocal", "{call}", False),
    ("positive", "{call}", False),
    ("sign", "{call}", False),
    ("floor", "{call}", False),
    ("ceil", "{call}", False),
    ("round", "{call}", False),
    ("trunc", "{call}", False),
    ("log", "torch.log({x}.square() + 0.5)", False),
    ("log", "{call}", False),
    ("log1p", "torch.log1p({x}.square())", False),
    ("log2", "({x}.square() + 1).log2()", False),
    ("sqrt", "({x}.square() + 0.25).sqrt()", False),
    ("sqrt", "{call}", False),
    ("rsqrt", "({x}.square() + 0.5).rsqrt()", False),
    ("pow", "({x}.square() + 0.5).pow({p})", False),
    ("pow", "{x} ** 2", False),
    ("pow", "{x}.pow(3)", False),
    ("round", "torch.round({x}, decimals=1)", False),
    ("clamp", "{x}.clamp({lo}, {hi})", True),
    ("clamp", "torch.clamp({x}, min={lo})", True),
    ("clamp_max", "{x}.clamp_max({hi})", True),
    ("nan_to_num", "torch.nan_to_num({x})", False),
    ("silu", "F.silu({x})", False),
    ("gelu", "F.gelu({x})", False),
    ("gelu", "F.gelu({x}, approximate='tanh')", False),
    ("neg", "-{x}", False),
    ("asin", "({x}.tanh() * 0.9).asin()", False),
    ("arcsin", "torch.arcsin({x}.tanh() * 0.9)", False),
    ("acos", "({x}.tanh() * 0.9).acos()", False),
    ("arccos", "({x}.tanh() * 0.9).arccos()", False),
    ("atan", "{call}", False),
    ("arctan", "{call}", False),
    ("sinh", "{call}", False),
    ("cosh", "{call}", False),
    ("asinh", "{call}", False),
    ("arcsinh", "{call}", False),
    ("acosh", "({x}.square() + 1.5).acosh()", False),
    ("arccosh", "torch.arccosh({x}.square() + 1.5)", False),
    ("atanh", "({x}.tanh() * 0.9).atanh()", False),
    ("arctanh", "torch.arctanh({x}.tanh() * 0.9)", False),
    ("log10", "({x}.square() + 1).log10()", False),
    ("frac", "{call}", True),
    ("fix", "{call}", False),
    ("sgn", "{call}", False),
    ("deg2rad", "{call}", False),
    ("rad2deg", "{call}", False),
    ("angle", "{call}", False),
    ("negative", "{call}", False),
]


def unary(b: Builder) -> None:
    """A float pointwise op (some behind a domain guard such as ``x.square() + 0.5``)."""
    x = b.pick(_is_float)
    name, template, kinks = b.choice(_UNARY)
    lo = b.choice([-1.0, -0.5, 0.0])
    code = template.format(
        call=_call(b, name, x), x=x, p=b.choice([0.5, 2, -1, 1.5]), lo=lo, hi=lo + b.choice([1, 2])
    )
    [o] = b.outputs()
    b.emit(name, [x], f"{o} = {code}", kinks=kinks)


_INT_UNARY = [
    ("abs", "{x}.abs()"),
    ("neg", "torch.neg({x})"),
    ("sign", "{x}.sign()"),
    ("square", "{x}.square()"),
    ("bitwise_not", "torch.bitwise_not({x})"),
    ("bitwise_not", "~{x}"),
    ("logical_not", "{x}.logical_not()"),
    ("clamp", "{x}.clamp(-1, 2)"),
    ("clamp", "torch.clamp({x}, max=1)"),
]


def int_unary(b: Builder) -> None:
    """A pointwise op on an integer or bool tensor."""
    x = b.pick(_is_intlike)
    name, template = b.choice(_INT_UNARY)
    [o] = b.outputs()
    b.emit(name, [x], f"{o} = {template.format(x=x)}")


# binary ops: (name, function form, operator or None, kinks)
_BINARY = [
    ("add", "torch.add", "+", False),
    ("sub", "torch.sub", "-", False),
    ("mul", "torch.mul", "*", False),
    ("div", "torch.div", "/", False),
    ("floor_divide", "torch.floor_divide", "//", False),
    ("remainder", "torch.remainder", "%", False),
    ("fmod", "torch.fmod", None, False),
    ("pow", "torch.pow", "**", False),
    ("maximum", "torch.maximum", None, True),
    ("minimum", "torch.minimum", None, True),
    ("atan2", "torch.atan2", None, False),
    ("eq", "torch.eq", "==", False),
    ("ne", "torch.ne", "!=", False),
    ("lt", "torch.lt", "<", False),
    ("le", "torch.le", "<=", False),
    ("gt", "torch.gt", ">", False),
    ("ge", "torch.ge", ">=", False),
    ("logical_and", "torch.logical_and", None, False),
    ("logical_or", "torch.logical_or", None, False),
    ("logical_xor", "torch.logical_xor", None, False),
    ("bitwise_and", "torch.bitwise_and", "&", False),
    ("bitwise_or", "torch.bitwise_or", "|", False),
    ("bitwise_xor", "torch.bitwise_xor", "^", False),
    ("hypot", "torch.hypot", None, True),
    ("logaddexp", "torch.logaddexp", None, False),
    ("logaddexp2", "torch.logaddexp2", None, False),
    ("copysign", "torch.copysign", None, True),
    ("nextafter", "torch.nextafter", None, True),
    ("fmax", "torch.fmax", None, True),
    ("fmin", "torch.fmin", None, True),
    ("true_divide", "torch.true_divide", None, False),
]
#: binary ops PyTorch has kernels for only when an operand is floating (a float result)
_FLOAT_BINARY = {"hypot", "logaddexp", "logaddexp2", "nextafter"}
_SCALAR_OK = {
    "add",
    "sub",
    "mul",
    "div",
    "floor_divide",
    "remainder",
    "fmod",
    "pow",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
}


def _broadcastable(b: Builder, x: str) -> str:
    shape = tuple(b.t(x).shape)
    names = []
    for n, v in b.values.items():
        try:
            b.torch.broadcast_shapes(shape, tuple(v.shape))
        except RuntimeError:
            continue
        names.append(n)
    return b.choice(names)


def binary(b: Builder) -> None:
    """A binary pointwise op: tensor-tensor with broadcasting and promotion, or with a Python
    scalar on either side; function, method or operator form."""
    name, fn, sym, kinks = b.choice(_BINARY)
    x = b.pick(_is_float) if name in _FLOAT_BINARY else b.pick()
    form = b.choice(["tensor", "tensor", "scalar", "rscalar"])
    if name not in _SCALAR_OK:
        form = "tensor"
    if name == "pow" and b.t(x).is_floating_point():
        x_src = f"({x}.square() + 0.5)"
    else:
        x_src = x
    [o] = b.outputs()
    if form == "tensor":
        y = _broadcastable(b, x)
        if name == "atan2" and "uint8" in (_dtype_name(b.t(x).dtype), _dtype_name(b.t(y).dtype)):
            # PyTorch's atan2 gradient negates the uint8 operand in uint8 (it wraps: -5 is
            # 251), so a float operand's gradient is not atan2's derivative; ember's is.
            raise _Skip()
        args = [x, y]
        style = b.choice(["fn", "method", "op"])
        if style == "op" and sym:
            code = f"{x_src} {sym} {y}"
        elif style == "method":
            code = f"{x_src}.{name}({y})"
        else:
            code = f"{fn}({x_src}, {y})"
        if name in ("add", "sub") and b.integer(0, 3) == 0:
            code = f"{fn}({x_src}, {y}, alpha={b.scalar('int' if _is_intlike(b.t(y)) else 'any')})"
        if name == "div" and b.integer(0, 2) == 0:
            code = f"torch.div({x}, {y}, rounding_mode={b.choice(['trunc', 'floor'])!r})"
    else:
        args = [x]
        s = b.scalar("float" if name == "pow" and form == "rscalar" else "any")
        if name == "pow" and form == "scalar":
            s = b.choice(["2", "3", "0.5", "-1", "2.5"])
        if form == "scalar":
            code = f"{x_src} {sym} {s}" if b.flag() else f"{fn}({x_src}, {s})"
        else:
            if name == "pow":
                s = b.choice(["2.0", "0.5", "1.5"])
            code = f"{s} {sym} {x_src}"
    b.emit(name, args, f"{o} = {code}", kinks=kinks)


def ternary(b: Builder) -> None:
    """``where``, ``lerp``, ``addcmul``, ``addcdiv`` and ``clamp`` with tensor bounds."""
    kind = b.choice(["where", "where_scalar", "lerp", "lerp_tensor", "addcmul", "addcdiv", "clamp"])
    [o] = b.outputs()
    x = b.pick()
    y = _broadcastable(b, x)
    if kind in ("where", "where_scalar"):
        c = _broadcastable(b, y)
        cond = c if _dtype_name(b.t(c).dtype) == "bool" else f"{c} > 0"
        other = b.scalar() if kind == "where_scalar" else y
        code = f"{o} = torch.where({cond}, {x}, {other})"
        b.emit("where", [c, x, y], code)
    elif kind == "lerp":
        b.emit("lerp", [x, y], f"{o} = torch.lerp({x}, {y}, {b.scalar('float')})")
    elif kind == "lerp_tensor":
        w = _broadcastable(b, y)
        b.emit("lerp", [x, y, w], f"{o} = {x}.lerp({y}, {w})")
    elif kind in ("addcmul", "addcdiv"):
        z = _broadcastable(b, y)
        den = f"({z}.square() + 1)" if kind == "addcdiv" else z
        value = f", value={b.scalar('float')}" if b.flag() else ""
        b.emit(kind, [x, y, z], f"{o} = torch.{kind}({x}, {y}, {den}{value})")
    else:
        z = _broadcastable(b, y)
        fn = b.choice(["clamp", "clip"])
        b.emit(fn, [x, y, z], f"{o} = {x}.{fn}({y}, {y} + {z}.abs())", kinks=True)


def reduction(b: Builder) -> None:
    """A reduction with one of its dim/keepdim forms (or a scan, softmax or sort)."""
    kind = b.choice(
        [
            "sum",
            "mean",
            "prod",
            "amax",
            "amin",
            "max",
            "min",
            "max_dim",
            "min_dim",
            "argmax",
            "argmin",
            "std",
            "var",
            "var_mean",
            "std_mean",
            "logsumexp",
            "cumsum",
            "cumprod",
            "norm",
            "all",
            "any",
            "softmax",
            "log_softmax",
            "sort",
            "argsort",
            "topk",
            "sum_dtype",
            "nansum",
            "nanmean",
            "count_nonzero",
            "aminmax",
            "cummax",
            "cummin",
            "logcumsumexp",
        ]
    )
    anything = ("sum", "prod", "all", "any", "sum_dtype", "count_nonzero")
    x = b.pick(_is_float) if kind not in anything else b.pick()
    keep = b.flag()
    kd = f", keepdim={keep}" if keep or b.flag() else ""
    outs = b.outputs(2)
    o = outs[0]
    form = b.integer(0, 2)  # 0: no dim, 1: one dim, 2: a tuple of dims
    if kind in ("sum", "mean", "prod", "amax", "amin", "logsumexp", "std", "var"):
        if kind == "prod" or (kind == "logsumexp" and form == 0):
            form = max(form, 0 if kind == "prod" else 1)
        if kind == "prod" and form == 2:
            form = 1
        if form == 0 and kind in ("amax", "amin") and b.flag():
            code = _call(b, kind, x)
        elif form == 0:
            code = _call(b, kind, x)
        else:
            d = b.dim(x) if form == 1 else b.dims(x)
            rest = f"dim={d}{kd}" if b.flag() else f"{d}{kd}"
            if kind in ("std", "var") and b.flag():
                rest += f", correction={b.choice([0, 1, 2])}"
            elif kind in ("std", "var") and b.flag():
                rest = f"{d}, unbiased={b.flag()}{kd}"
            code = _call(b, kind, x, rest)
        # std has a kink where a slice is constant (its gradient there is 0 by convention,
        # and noise in the last bit of a constant decides it otherwise)
        kinks = kind in ("amax", "amin", "std")
        b.emit(kind, [x], f"{o} = {code}", kinks=kinks)
    elif kind == "sum_dtype":
        dt = b.choice(["float64", "int64", "float32"])
        code = f"{o} = torch.sum({x}, {b.dims(x) or 0}, dtype=torch.{dt})"
        if b.flag():
            code = f"{o} = {x}.sum(dtype=torch.{dt})"
        b.emit("sum", [x], code)
    elif kind in ("max", "min"):
        b.emit(kind, [x], f"{o} = {_call(b, kind, x)}", kinks=True)
    elif kind in ("max_dim", "min_dim"):
        fn = kind[:3]
        rest = f"{b.dim(x)}{kd}" if b.flag() else f"dim={b.dim(x)}{kd}"
        if b.flag():
            code = f"{outs[0]}, {outs[1]} = {_call(b, fn, x, rest)}"
            b.emit(fn, [x], code, 2, kinks=True)
        else:
            field_ = b.choice(["values", "indices"])
            b.emit(fn, [x], f"{o} = {_call(b, fn, x, rest)}.{field_}", kinks=True)
    elif kind in ("argmax", "argmin"):
        rest = "" if form == 0 else f"dim={b.dim(x)}{kd}"
        b.emit(kind, [x], f"{o} = {_call(b, kind, x, rest)}")
    elif kind in ("var_mean", "std_mean"):
        rest = "" if form == 0 else f"{b.dims(x) if form == 2 else b.dim(x)}{kd}"
        if b.flag():
            rest += (", " if rest else "") + f"correction={b.choice([0, 1])}"
        b.emit(
            kind,
            [x],
            f"{outs[0]}, {outs[1]} = torch.{kind}({x}{', ' + rest if rest else ''})",
            2,
            kinks=kind == "std_mean",
        )
    elif kind in ("cumsum", "cumprod"):
        dt = f", dtype=torch.{b.choice(['float64', 'float32'])}" if b.integer(0, 3) == 0 else ""
        b.emit(kind, [x], f"{o} = {_call(b, kind, x, f'{b.dim(x)}{dt}')}")
    elif kind in ("nansum", "nanmean"):
        rest = "" if form == 0 else f"{b.dims(x) if form == 2 else b.dim(x)}{kd}"
        b.emit(kind, [x], f"{o} = {_call(b, kind, x, rest)}")
    elif kind == "count_nonzero":
        rest = "" if form == 0 else str(b.dims(x)) if form == 2 else f"dim={b.dim(x)}"
        b.emit(kind, [x], f"{o} = {_call(b, kind, x, rest)}")
    elif kind == "aminmax":
        rest = "" if form == 0 else f"dim={b.dim(x)}{kd}"
        code = f"{outs[0]}, {outs[1]} = {_call(b, kind, x, rest)}"
        b.emit(kind, [x], code, 2, kinks=True)
    elif kind in ("cummax", "cummin"):
        if b.flag():
            code = f"{outs[0]}, {outs[1]} = {_call(b, kind, x, str(b.dim(x)))}"
            b.emit(kind, [x], code, 2, kinks=True)
        else:
            b.emit(kind, [x], f"{o} = {_call(b, kind, x, f'dim={b.dim(x)}')}.values", kinks=True)
    elif kind == "logcumsumexp":
        b.emit(kind, [x], f"{o} = {_call(b, kind, x, str(b.dim(x)))}")
    elif kind == "norm":
        p = b.choice([2, 1, "float('inf')", 3])
        if form == 0:
            code = f"{o} = {x}.norm({p if b.flag() else ''})"
        else:
            code = f"{o} = torch.norm({x}, {p}, dim={b.dims(x) if form == 2 else b.dim(x)}{kd})"
        b.emit("norm", [x], code, kinks=True)
    elif kind in ("all", "any"):
        rest = "" if form == 0 else f"{b.dim(x)}{kd}"
        src = x if not b.t(x).is_floating_point() else f"({x} > 0)"
        b.emit(kind, [x], f"{o} = {src}.{kind}({rest})")
    elif kind in ("softmax", "log_softmax"):
        call = f"F.{kind}({x}, dim={b.dim(x)})" if b.flag() else f"{x}.{kind}({b.dim(x)})"
        b.emit(kind, [x], f"{o} = {call}")
    elif kind in ("sort", "argsort"):
        desc = f", descending={b.flag()}" if b.flag() else ""
        if kind == "argsort":
            b.emit(kind, [x], f"{o} = {x}.argsort({b.dim(x)}{desc})")
        else:
            code = f"{outs[0]}, {outs[1]} = torch.sort({x}, {b.dim(x)}{desc})"
            b.emit(kind, [x], code, 2, kinks=True)
    else:  # topk
        values = b.t(x).detach().numpy()
        if np.unique(values).size < values.size:
            raise _Skip()  # which of tied values topk returns first is unspecified
        d = b.dim(x)
        size = b.t(x).shape[d] if b.t(x).dim() else 1
        k = b.integer(0, max(size, 0))
        largest = f", largest={b.flag()}" if b.flag() else ""
        code = f"{outs[0]}, {outs[1]} = {x}.topk({k}, dim={d}{largest})"
        b.emit("topk", [x], code, 2, kinks=True)


def _slice_index(b: Builder, x: str) -> str:
    parts = []
    for size in b.t(x).shape:
        kind = b.choice(["all", "range", "step", "int", "none", "neg"])
        if kind == "all":
            parts.append(":")
        elif kind == "range":
            lo = b.integer(0, max(size - 1, 0))
            parts.append(f"{lo}:{b.integer(lo, size)}")
        elif kind == "step":
            parts.append(f"{b.integer(0, 1)}::{b.integer(2, 3)}")
        elif kind == "int" and size > 0:
            parts.append(str(b.integer(-size, size - 1)))
        elif kind == "none":
            parts.extend(["None", ":"])
        else:
            parts.append(f"-{b.integer(1, max(size, 1))}:")
    if b.integer(0, 3) == 0:
        parts = (parts[:1] if parts else []) + ["..."]
    return ", ".join(parts) or "..."


def view(b: Builder) -> None:
    """A view or shape op: transpose, permute, slicing with steps, select, narrow, expand,
    reshape/view, (un)squeeze, flatten, t, movedim, diagonal, split, flip, cat/stack, swapaxes,
    moveaxis, ravel, unfold, tensor_split..."""
    x = b.pick()
    t = b.t(x)
    n = t.dim()
    shape = tuple(t.shape)
    kind = b.choice(
        [
            "transpose",
            "permute",
            "t",
            "slice",
            "select",
            "narrow",
            "expand",
            "reshape",
            "view",
            "unsqueeze",
            "squeeze",
            "flatten",
            "mT",
            "movedim",
            "unflatten",
            "diagonal",
            "broadcast_to",
            "split",
            "chunk",
            "unbind",
            "flip",
            "roll",
            "tril",
            "triu",
            "repeat",
            "contiguous",
            "clone",
            "cat",
            "stack",
            "T",
            "swapaxes",
            "moveaxis",
            "ravel",
            "unfold",
            "tensor_split",
        ]
    )
    [o] = b.outputs()
    if kind == "transpose":
        code = f"{x}.transpose({b.dim(x)}, {b.dim(x)})"
    elif kind == "permute":
        perm = b.draw(st.permutations(range(n))) if n else []
        code = (
            f"{x}.permute({', '.join(map(str, perm))})"
            if b.flag()
            else f"torch.permute({x}, {tuple(perm)})"
        )
    elif kind == "t":
        code = f"{x}.t()" if b.flag() else f"torch.t({x})"
    elif kind == "mT" and n >= 2:  # mT of fewer dims is deprecated
        code = f"{x}.mT"
    elif kind in ("T", "mT"):
        # .T of other than 2 dims and .mT of fewer are deprecated (PyTorch warns once)
        code = f"{x}.T" if n == 2 else f"{x}.mT" if n > 2 else f"{x}.t()"
    elif kind == "slice":
        code = f"{x}[{_slice_index(b, x)}]"
    elif kind == "select":
        d = b.dim(x)
        size = shape[d] if n else 1
        i = b.integer(-size, max(size - 1, -size))
        code = (
            f"{x}.select({d}, {i})"
            if b.flag()
            else f"{x}[{', '.join([':'] * (d % max(n, 1)) + [str(i)])}]"
        )
    elif kind == "narrow":
        d = b.dim(x)
        size = shape[d] if n else 0
        start = b.integer(0, max(size - 1, 0))
        code = f"{x}.narrow({d}, {start}, {b.integer(0, size - start)})"
    elif kind in ("expand", "broadcast_to"):
        target = [s if s != 1 else b.choice([1, 2, 3]) for s in shape]
        target = [b.choice([2, 3])] * b.integer(0, 1) + target
        if kind == "expand" and target and b.flag():
            target[-1] = -1
        code = (
            f"{x}.expand({', '.join(map(str, target))})"
            if kind == "expand" and target
            else (f"{x}.broadcast_to({tuple(target)})")
        )
    elif kind in ("reshape", "view"):
        numel = t.numel()
        options = [(numel,), (-1,), (1, numel), (numel, 1), shape[::-1]]
        if numel % 2 == 0 and numel > 0:
            options += [(2, -1), (-1, 2, 1)]
        target = b.choice(options)
        code = f"{x}.{kind}({', '.join(map(str, target))})" if target else f"{x}.{kind}(())"
    elif kind == "unsqueeze":
        code = _call(b, "unsqueeze", x, str(b.integer(-n - 1, n)))
    elif kind == "squeeze":
        code = _call(b, "squeeze", x, str(b.dim(x)) if b.flag() else "")
    elif kind == "flatten":
        code = f"{x}.flatten()" if b.flag() or n == 0 else f"torch.flatten({x}, {b.dim(x)})"
    elif kind == "movedim":
        code = f"{x}.movedim({b.dim(x)}, {b.dim(x)})"
    elif kind == "unflatten":
        d = b.dim(x)
        size = shape[d] if n else 1
        sizes = (1, size) if size % 2 else (2, size // 2)
        code = f"{x}.unflatten({d}, {sizes if b.flag() else sizes[::-1]})"
    elif kind == "diagonal":
        code = (
            f"{x}.diagonal({b.integer(-1, 1)})"
            if b.flag()
            else f"torch.diagonal({x}, 0, {b.dim(x)}, {b.dim(x)})"
        )
    elif kind in ("split", "chunk"):
        d = b.dim(x)
        code = f"{x}.{kind}({b.integer(1, 3)}, {d})[{b.integer(-1, 0)}]"
    elif kind == "unbind":
        code = f"{x}.unbind({b.dim(x)})[0]"
    elif kind == "swapaxes":
        code = _call(b, b.choice(["swapaxes", "swapdims"]), x, f"{b.dim(x)}, {b.dim(x)}")
    elif kind == "moveaxis":
        code = f"torch.moveaxis({x}, {b.dim(x)}, {b.dim(x)})"
    elif kind == "ravel":
        code = _call(b, "ravel", x)
    elif kind == "unfold":
        d = b.dim(x)
        size = b.integer(0, shape[d] if n else 1)
        code = f"{x}.unfold({d}, {size}, {b.integer(1, 3)})"
    elif kind == "tensor_split":
        if n == 0:
            raise _Skip()
        d = b.dim(x)
        how = b.integer(1, 3) if b.flag() else sorted({b.integer(0, shape[d]) for _ in range(2)})
        code = f"{_call(b, 'tensor_split', x, f'{how}, {d}')}[{b.integer(-1, 0)}]"
    elif kind == "flip":
        code = f"{x}.flip({b.dims(x) or (0,)})"
    elif kind == "roll":
        code = f"{x}.roll({b.integer(-2, 3)}, {b.dim(x)})"
    elif kind in ("tril", "triu"):
        code = _call(b, kind, x, str(b.integer(-1, 1)) if b.flag() else "")
    elif kind == "repeat":
        reps = [b.integer(1, 2) for _ in range(n + b.integer(0, 1))]
        code = f"{x}.repeat({', '.join(map(str, reps))})" if reps else f"{x}.repeat(())"
    elif kind == "contiguous":
        code = f"{x}.contiguous()"
    elif kind == "clone":
        code = f"{x}.clone()"
    else:  # cat / stack
        y = b.pick()
        d = b.dim(x)
        fn = kind
        b.emit(fn, [x, y], f"{o} = torch.{fn}([{x}, {y}], {d})")
        return
    b.emit(kind, [x], f"{o} = {code}")


_INPLACE = [
    ("add_", "{v}.add_({s})", False),
    ("mul_", "{v}.mul_({s})", False),
    ("sub_", "{v}.sub_({y})", False),
    ("div_", "{v}.div_(2)", False),
    ("mul_", "{v}.mul_({y})", False),
    ("add_", "{v} += {y}", False),
    ("clamp_", "{v}.clamp_(-1, 1)", True),
    ("fill_", "{v}.fill_({s})", False),
    ("zero_", "{v}.zero_()", False),
    ("copy_", "{v}.copy_({y})", False),
    ("relu_", "{v}.relu_()", True),
    ("exp_", "{v}.exp_()", False),
    ("neg_", "{v}.neg_()", False),
    ("sigmoid_", "{v}.sigmoid_()", False),
    ("pow_", "{v}.pow_(2)", False),
    ("masked_fill_", "{v}.masked_fill_({v} > 0, {s})", False),
    ("addcmul_", "{v}.addcmul_({y}, {y}, value=0.5)", False),
    ("lerp_", "{v}.lerp_({y}, 0.25)", False),
    ("floor_", "{v}.floor_()", False),
    ("setitem", "{v}[...] = {s}", False),
    ("clip_", "{v}.clip_(-0.5, 1)", True),
    ("exp2_", "{v}.exp2_()", False),
    ("erfc_", "{v}.erfc_()", False),
    ("sinc_", "{v}.sinc_()", False),
    ("xlogy_", "{v}.xlogy_({y}.square() + 0.5)", False),
]


def inplace(b: Builder) -> None:
    """An in-place op on a clone, directly or through a view of it (``y = x.clone();
    y[1:].mul_(2)``); the clone, and sometimes the view, are the step's outputs."""
    x = b.pick()
    n = b.t(x).dim()
    through = b.choice(
        [
            "",
            f"[{_slice_index(b, x)}]",
            ".t()" if n <= 2 else ".mT",
            f".transpose(0, {n - 1})" if n else "",
            f".select({b.dim(x)}, 0)",
            f".narrow({b.dim(x)}, 0, 1)",
            ".diagonal()" if n >= 2 else "",
            ".view(-1)",
            "[..., :1]",
        ]
    )
    name, template, kinks = b.choice(_INPLACE)
    y = b.pick()
    outs = b.outputs(2)
    keep_view = through != "" and b.flag()
    target = outs[1] if keep_view else f"{outs[0]}{through}"
    scalar = b.scalar("float" if b.t(x).is_floating_point() else "int")
    op = template.format(v=target, y=y, s=scalar)
    lines = [f"{outs[0]} = {x}.clone()"]
    if keep_view:
        lines.append(f"{outs[1]} = {outs[0]}{through}")
    lines.append(op)
    b.emit(name, [x, y], "\n".join(lines), 2 if keep_view else 1, kinks=kinks)


def indexing(b: Builder) -> None:
    """Advanced indexing, index_select, gather, scatter, scatter_add, masked_fill, index_put
    and assignment through indices."""
    kind = b.choice(
        [
            "adv",
            "list",
            "mask",
            "index_select",
            "gather",
            "scatter",
            "scatter_value",
            "scatter_add",
            "masked_fill",
            "index_put",
            "setitem",
            "setitem_mask",
            "nonzero",
        ]
    )
    x = b.pick(_ndim(1))
    t = b.t(x)
    shape = tuple(t.shape)
    d = b.dim(x)
    size = shape[d]
    [o] = b.outputs()
    if kind == "adv":
        idx = b.new_input([b.integer(0, 4)], "int64", low=-size, high=max(size, 1), layout=False)
        pre = ":, " * (d % t.dim())
        b.emit("index", [x], f"{o} = {x}[{pre}{idx}]")
    elif kind == "list":
        picks = (
            [b.integer(-shape[0], shape[0] - 1) for _ in range(b.integer(1, 3))]
            if shape[0]
            else [0]
        )
        if t.dim() >= 2 and shape[1] and b.flag():
            second = [b.integer(0, shape[1] - 1) for _ in picks]
            b.emit("index", [x], f"{o} = {x}[{picks}, {second}]")
        else:
            b.emit("index", [x], f"{o} = {x}[{picks}]")
    elif kind == "mask":
        src = f"{x} > 0" if t.is_floating_point() else f"{x} != 0"
        b.emit("index", [x], f"{o} = {x}[{src}]")
    elif kind == "index_select":
        idx = b.new_input([b.integer(0, 4)], "int64", low=0, high=max(size, 1), layout=False)
        b.emit("index_select", [x], f"{o} = {_call(b, 'index_select', x, f'{d}, {idx}')}")
    elif kind == "gather":
        ishape = [b.integer(1, s) if s else 0 for s in shape]
        ishape[d] = b.integer(0, 4)
        idx = b.new_input(ishape, "int64", low=0, high=max(size, 1))
        b.emit("gather", [x], f"{o} = {_call(b, 'gather', x, f'{d}, {idx}')}")
    elif kind in ("scatter", "scatter_value", "scatter_add"):
        ishape = [b.integer(1, s) if s else 0 for s in shape]
        ishape[d] = b.integer(0, size)
        unique = d % t.dim() if kind != "scatter_add" else None
        idx = b.new_input(ishape, "int64", low=0, high=max(size, 1), unique_along=unique)
        if kind == "scatter_value":
            b.emit("scatter", [x], f"{o} = {x}.scatter({d}, {idx}, {b.scalar()})")
            return
        src = b.new_input(ishape, _dtype_name(t.dtype))
        fn = "scatter" if kind == "scatter" else "scatter_add"
        b.emit(fn, [x], f"{o} = {_call(b, fn, x, f'{d}, {idx}, {src}')}")
    elif kind == "masked_fill":
        m = _broadcastable(b, x)
        cond = m if _dtype_name(b.t(m).dtype) == "bool" else f"{m} > 0"
        value = b.scalar("float" if t.is_floating_point() else "int")
        b.emit("masked_fill", [x, m], f"{o} = {_call(b, 'masked_fill', x, f'{cond}, {value}')}")
    elif kind in ("index_put", "setitem"):
        idx = b.new_input([b.integer(1, 3)], "int64", low=0, high=max(size, 1), unique_along=0)
        vals = b.new_input([1], _dtype_name(t.dtype))
        if kind == "index_put":
            acc = b.flag()
            code = f"{o} = {x}.index_put(({idx},), {vals}, accumulate={acc})"
            b.emit("index_put", [x], code)
        else:
            code = f"{o} = {x}.clone()\n{o}[{':, ' * (d % t.dim())}{idx}] = {vals}"
            b.emit("index_put_", [x], code)
    elif kind == "setitem_mask":
        src = f"{o} > 0" if t.is_floating_point() else f"{o} != 0"
        value = b.scalar("float" if t.is_floating_point() else "int")
        code = f"{o} = {x}.clone()\n{o}[{src}] = {value}"
        b.emit("index_put_", [x], code)
    else:
        b.emit("nonzero", [x], f"{o} = {x}.nonzero()")


def linalg(b: Builder) -> None:
    """matmul (1-D to 3-D operands), mm, bmm, mv, dot, vdot, outer, addmm, addmv, addr, baddbmm,
    addbmm, inner, kron and einsum, with new weight inputs of matching shape (and sometimes
    another dtype)."""
    kind = b.choice(
        ["matmul", "mm", "bmm", "mv", "dot", "outer", "addmm", "einsum", "@", "addmv", "addr",
         "baddbmm", "inner", "kron", "vdot"]
    )  # fmt: skip
    x = b.pick(_is_float)
    t = b.t(x)
    shape = tuple(t.shape)
    dt = _dtype_name(t.dtype)
    if b.integer(0, 4) == 0:
        dt2 = b.choice(FLOATS)  # type promotion where the op allows it
    else:
        dt2 = dt
    if t.numel() == 0:
        dt2 = dt  # PyTorch's einsum skips its dtype check for an empty operand (ember's not)
    [o] = b.outputs()
    k = shape[-1] if shape else 1
    if kind in ("matmul", "@"):
        if not shape:
            raise _Skip()
        w_shape = b.choice([(k,), (k, b.integer(1, 3)), (b.integer(1, 2), k, 2)])
        w = b.new_input(w_shape, dt2)
        code = f"{x} @ {w}" if kind == "@" else f"torch.matmul({x}, {w})"
        b.emit("matmul", [x], f"{o} = {code}")
    elif kind == "mm":
        w = b.new_input((k, b.integer(1, 3)), dt)
        b.emit("mm", [x], f"{o} = {_call(b, 'mm', x, w)}")
    elif kind == "bmm":
        w = b.new_input((shape[0] if shape else 1, shape[-1] if len(shape) == 3 else 1, 2), dt)
        b.emit("bmm", [x], f"{o} = {_call(b, 'bmm', x, w)}")
    elif kind == "mv":
        w = b.new_input((k,), dt)
        b.emit("mv", [x], f"{o} = {_call(b, 'mv', x, w)}")
    elif kind == "dot":
        w = b.new_input((k,), dt)
        b.emit("dot", [x], f"{o} = {_call(b, 'dot', x, w)}")
    elif kind == "vdot":
        w = b.new_input((k,), dt)
        b.emit("vdot", [x], f"{o} = {_call(b, 'vdot', x, w)}")
    elif kind == "outer":
        w = b.new_input((b.integer(1, 3),), dt)
        b.emit("outer", [x], f"{o} = {_call(b, 'outer', x, w)}")
    elif kind == "addmm":
        m = b.integer(1, 3)
        w = b.new_input((k, m), dt)
        c = b.new_input(b.choice([(m,), (shape[0] if shape else 1, m), (1, m)]), dt)
        extra = f", beta={b.scalar('float')}, alpha={b.scalar('float')}" if b.flag() else ""
        b.emit("addmm", [x], f"{o} = torch.addmm({c}, {x}, {w}{extra})")
    elif kind == "addmv":
        if t.dim() != 2 or t.numel() == 0:  # PyTorch's shape differs: docs/fidelity.md
            raise _Skip()
        v = b.new_input((k,), dt)
        c = b.new_input(b.choice([(shape[0],), (1,), ()]), dt)
        extra = f", beta={b.scalar('float')}, alpha={b.scalar('float')}" if b.flag() else ""
        b.emit("addmv", [x], f"{o} = torch.addmv({c}, {x}, {v}{extra})")
    elif kind == "addr":
        if t.dim() != 1:
            raise _Skip()
        v = b.new_input((b.integer(1, 3),), dt2)
        c = b.new_input(b.choice([(k, 1), (1,), ()]), dt)
        extra = f", beta={b.scalar('float')}, alpha={b.scalar('float')}" if b.flag() else ""
        b.emit("addr", [x], f"{o} = torch.addr({c}, {x}, {v}{extra})")
    elif kind == "baddbmm":
        if t.dim() != 3:
            raise _Skip()
        w = b.new_input((shape[0], k, 2), dt)
        c = b.new_input(b.choice([(shape[0], shape[1], 2), (2,), (shape[1], 1)]), dt)
        extra = f", beta={b.scalar('float')}, alpha={b.scalar('float')}" if b.flag() else ""
        fn = b.choice(["baddbmm", "addbmm"])
        if fn == "addbmm":
            c = b.new_input(b.choice([(shape[1], 2), (2,)]), dt)
        b.emit(fn, [x], f"{o} = torch.{fn}({c}, {x}, {w}{extra})")
    elif kind == "inner":
        w = b.new_input(b.choice([(k,), (2, k)]), dt)
        b.emit("inner", [x], f"{o} = {_call(b, 'inner', x, w)}")
    elif kind == "kron":
        w = b.new_input(b.choice([(2,), (2, 1), (1, 2, 2)]), dt2)
        b.emit("kron", [x], f"{o} = {_call(b, 'kron', x, w)}")
    else:
        n = t.dim()
        letters = "abcd"[:n]
        eq_kind = b.choice(["contract", "transpose", "sum", "diag", "batch"])
        if eq_kind == "contract" and n >= 1:
            w = b.new_input((k, 2), dt2)
            eq = f"{letters},{letters[-1]}z->{letters[:-1]}z"
            b.emit("einsum", [x], f"{o} = torch.einsum({eq!r}, {x}, {w})")
            return
        if eq_kind == "batch" and n == 3:
            w = b.new_input((shape[0], shape[2], 2), dt2)
            b.emit("einsum", [x], f"{o} = torch.einsum('bij,bjk->bik', {x}, {w})")
            return
        if eq_kind == "diag" and n == 2 and shape[0] == shape[1]:
            b.emit("einsum", [x], f"{o} = torch.einsum('ii->i', {x})")
            return
        if eq_kind == "sum":
            b.emit("einsum", [x], f"{o} = torch.einsum('{letters}->', {x})")
            return
        b.emit("einsum", [x], f"{o} = torch.einsum('{letters}->{letters[::-1]}', {x})")


class _Skip(Exception):
    """A family drew operands it has no form for; the builder draws again."""


def _spread(t: Any, dims: tuple[int, ...]) -> bool:
    """Every slice a norm normalizes over ``dims`` has values apart, absolutely and relative
    to their mean: normalizing a (nearly) constant slice divides rounding noise by sqrt(eps),
    and one whose spread is small against its mean loses digits to ``x - mean``, so two
    correct float32 libraries disagree (found by 10,000-program runs: batch_norm of a
    repeated value; layer_norm of [2.785, 2.877], whose gradient PyTorch's float32 gets
    0.25% off the float64 one, ember's 0.01%)."""
    x = t.detach().double()
    var = x.var(dim=dims, unbiased=False)
    mean = x.mean(dim=dims)
    return bool(((var > 1e-4) & (var > 1e-2 * mean * mean)).all())


def functional(b: Builder) -> None:
    """``nn.functional``: softmax/log_softmax, layer_norm, linear, cross_entropy, nll_loss,
    mse_loss, l1_loss, BCE with logits, dropout with p=0, conv2d, pooling, pad, one_hot,
    embedding, batch_norm."""
    kind = b.choice(
        [
            "layer_norm",
            "linear",
            "cross_entropy",
            "nll_loss",
            "mse_loss",
            "l1_loss",
            "bce_logits",
            "dropout",
            "conv2d",
            "max_pool2d",
            "avg_pool2d",
            "fractional_max_pool2d",
            "pad",
            "one_hot",
            "embedding",
            "batch_norm",
            "relu",
            "sigmoid",
            "tanh",
        ]
    )
    [o] = b.outputs()
    reduction = b.choice(["mean", "sum", "none"])
    red = f", reduction={reduction!r}" if reduction != "mean" or b.flag() else ""
    if kind == "one_hot":
        n = b.integer(1, 4)
        idx = b.new_input([b.integer(0, 3)] * b.integer(1, 2), "int64", low=0, high=n)
        b.emit("one_hot", [], f"{o} = F.one_hot({idx}, {n})")
        return
    if kind == "embedding":
        w = b.new_input((b.integer(1, 4), b.integer(1, 3)), b.choice(FLOATS))
        n = b.pending[-1].data.shape[0]
        idx = b.new_input([b.integer(0, 3)] * b.integer(1, 2), "int64", low=0, high=n)
        b.emit("embedding", [], f"{o} = F.embedding({idx}, {w})")
        return
    x = b.pick(_is_float)
    t = b.t(x)
    shape = tuple(t.shape)
    dt = _dtype_name(t.dtype)
    if kind in ("relu", "sigmoid", "tanh"):
        b.emit(kind, [x], f"{o} = F.{kind}({x})", kinks=kind == "relu")
    elif kind == "layer_norm":
        if not shape:
            raise _Skip()
        k = b.integer(1, len(shape))
        ns = shape[-k:]
        if math.prod(ns) < 2:  # normalizing one element amplifies rounding by 1/sqrt(eps)
            raise _Skip()
        if not _spread(t, tuple(range(len(shape) - k, len(shape)))):
            raise _Skip()
        extra = ""
        if b.flag():
            w = b.new_input(ns, dt)
            bias = b.new_input(ns, dt) if b.flag() else "None"
            extra = f", {w}, {bias}"
        b.emit("layer_norm", [x], f"{o} = F.layer_norm({x}, {list(ns)}{extra})")
    elif kind == "linear":
        k = shape[-1] if shape else 1
        if not shape:
            raise _Skip()
        m = b.integer(1, 3)
        w = b.new_input((m, k), dt)
        bias = f", {b.new_input((m,), dt)}" if b.flag() else ""
        b.emit("linear", [x], f"{o} = F.linear({x}, {w}{bias})")
    elif kind in ("cross_entropy", "nll_loss"):
        if not 1 <= len(shape) <= 3 or 0 in shape:
            raise _Skip()
        c = shape[1] if len(shape) >= 2 else shape[0]
        tshape = (shape[0], *shape[2:]) if len(shape) >= 2 else ()
        if kind == "cross_entropy" and b.flag():
            target = b.new_input(shape, dt, requires_grad=False)
            target_src = f"{target}.softmax({1 if len(shape) >= 2 else 0})"
        else:
            target_src = b.new_input(tshape, "int64", low=0, high=c)
        ls = (
            f", label_smoothing={b.choice([0.1, 0.0])}"
            if kind == "cross_entropy" and b.flag()
            else ""
        )
        b.emit(kind, [x], f"{o} = F.{kind}({x}, {target_src}{red}{ls})")
    elif kind in ("mse_loss", "l1_loss", "bce_logits"):
        y = b.new_input(shape, dt, requires_grad=b.flag())
        fn = "binary_cross_entropy_with_logits" if kind == "bce_logits" else kind
        target = f"{y}.sigmoid()" if kind == "bce_logits" else y
        b.emit(fn, [x], f"{o} = F.{fn}({x}, {target}{red})", kinks=kind == "l1_loss")
    elif kind == "dropout":
        b.emit("dropout", [x], f"{o} = F.dropout({x}, p=0.0, training={b.flag()})")
    elif kind == "fractional_max_pool2d":
        # the samples given (the same in both libraries), one per (batch, channel) plane
        if len(shape) < 2 or 0 in shape or min(shape[-2:]) < 2:
            raise _Skip()
        src = x if len(shape) in (3, 4) else f"{x}.reshape(1, 1, {shape[-2]}, {shape[-1]})"
        lead = (1, shape[0]) if len(shape) == 3 else (shape[0], shape[1])
        if len(shape) not in (3, 4):
            lead = (1, 1)
        oh, ow = b.integer(1, shape[-2] - 1), b.integer(1, shape[-1] - 1)
        u = b.choice([0.13, 0.5, 0.87])
        like = f"dtype={x}.dtype, device={x}.device"  # (a lazy program's samples are lazy)
        samples = f"torch.full(({lead[0]}, {lead[1]}, 2), {u}, {like})"
        size = f"output_size=({oh}, {ow})"
        code = f"F.fractional_max_pool2d({src}, 2, {size}, _random_samples={samples})"
        b.emit(kind, [x], f"{o} = {code}", kinks=True)
    elif kind in ("conv2d", "max_pool2d", "avg_pool2d"):
        if len(shape) < 2 or 0 in shape:
            raise _Skip()
        src = x if len(shape) in (3, 4) else f"{x}.reshape(1, 1, {shape[-2]}, {shape[-1]})"
        h, w_ = shape[-2:]
        c = shape[-3] if len(shape) >= 3 else 1
        if kind != "conv2d":
            ks = b.integer(1, min(h, w_, 2))
            stride = f", stride={b.integer(1, 2)}" if b.flag() else ""
            b.emit(kind, [x], f"{o} = F.{kind}({src}, {ks}{stride})", kinks=kind == "max_pool2d")
            return
        groups = c if c > 1 and b.flag() else 1
        oc = groups * b.integer(1, 2)
        kh, kw = b.integer(1, min(h, 2)), b.integer(1, min(w_, 2))
        weight = b.new_input((oc, c // groups, kh, kw), dt)
        opts = ""
        if b.flag():
            opts += f", {b.new_input((oc,), dt)}"
        if b.flag():
            opts += f", stride={b.integer(1, 2)}, padding={b.integer(0, 1)}"
        if groups > 1:
            opts += f", groups={groups}"
        b.emit("conv2d", [x], f"{o} = F.conv2d({src}, {weight}{opts})")
    elif kind == "pad":
        pads = [b.integer(0, 2) for _ in range(2 * b.integer(1, max(min(len(shape), 2), 1)))]
        value = f", value={b.scalar('float')}" if b.flag() else ""
        b.emit("pad", [x], f"{o} = F.pad({x}, {pads}{value})")
    else:  # batch_norm
        if len(shape) < 2 or 0 in shape or not t.is_contiguous():
            # a contiguous input: PyTorch's backward misreads some strided ones (its bias
            # gradient is not the sum of the output gradient; tests/test_regressions.py)
            raise _Skip()
        c = shape[1]
        # contiguous weight and bias: PyTorch's batch_norm backward misreads a strided weight
        # (its input gradient differs from the one with .contiguous(); ember's equals that)
        w = b.new_input((c,), dt, layout=False)
        bias = b.new_input((c,), dt, layout=False)
        if b.flag():
            rm = b.new_input((c,), dt, requires_grad=False, layout=False)
            rv = b.new_input((c,), dt, requires_grad=False, layout=False)
            code = f"{o} = F.batch_norm({x}, {rm}, {rv}.abs() + 0.5, {w}, {bias}, training=False)"
        elif t.numel() >= 2 * c and _spread(t, (0, *range(2, len(shape)))):
            # one element per channel, or equal ones (a repeat): as layer_norm of one element
            code = f"{o} = F.batch_norm({x}, None, None, {w}, {bias}, training=True)"
        else:
            raise _Skip()
        b.emit("batch_norm", [x], code)


def cast(b: Builder) -> None:
    """A cast: ``.to(dtype)``, ``.float()``, ``.double()``, ``.long()``, ``.int()``,
    ``.bool()``, ``type_as``; float to integer or bool casts are threshold ops."""
    x = b.pick()
    kind = b.choice(["to", "float", "double", "long", "int", "bool", "type_as", "to_other"])
    [o] = b.outputs()
    if kind == "to":
        target = b.choice([*FLOATS, "int64", "int32", "bool", "int16", "uint8", "int8"])
        code = f"{x}.to(torch.{target})" if b.flag() else f"{x}.to(dtype=torch.{target})"
    elif kind in ("type_as", "to_other"):
        y = b.pick()
        target = _dtype_name(b.t(y).dtype)
        code = f"{x}.type_as({y})" if kind == "type_as" else f"{x}.to({y}.dtype)"
        b.emit(kind, [x, y], f"{o} = {code}")
        return
    else:
        target = {"float": "float32", "double": "float64", "long": "int64", "int": "int32"}.get(
            kind, "bool"
        )
        code = f"{x}.{kind}()"
    if target == "uint8" and b.t(x).is_floating_point():
        code = f"{x}.abs().to(torch.uint8)"  # negative floats to uint8 are undefined
    b.emit("to", [x], f"{o} = {code}")


# pointwise ops beyond the everyday ones, special functions among them: (name, code, kinks,
# accepts an integer input). The guards keep arguments inside the domain (erfinv's (-1, 1),
# logit's (0, 1), digamma's poles); the stability test drops what is near a pole anyway.
_SPECIAL_UNARY = [
    ("exp2", "{call}", False, True),
    ("erfc", "{call}", False, True),
    ("erfinv", "torch.erfinv({x}.tanh() * 0.9)", False, False),
    ("erfinv", "({x}.sigmoid() - 0.5).erfinv()", False, False),
    ("lgamma", "torch.lgamma({x}.square() + 0.5)", False, False),
    # lgamma and digamma of a raw value: near the poles at negative integers a float32
    # rounding of the argument moves the gradient by more than the tolerance (lgamma of an
    # entr of -189 differed by 0.5%), so the argument is kept positive
    ("lgamma", "torch.lgamma({x}.abs() + 0.25)", True, True),
    ("digamma", "({x}.square() + 0.5).digamma()", False, False),
    ("digamma", "({x}.abs() + 0.25).digamma()", True, False),
    ("logit", "torch.logit({x}.sigmoid())", False, False),
    ("logit", "{x}.sigmoid().logit(eps={eps})", True, False),
    ("sinc", "{call}", False, True),
    ("clip", "{x}.clip({lo}, {hi})", True, False),
    ("clip", "torch.clip({x}, max={hi})", True, True),
    ("polygamma", "torch.polygamma({n}, {x}.square() + 0.5)", False, False),
    ("polygamma", "({x}.square() + 0.5).polygamma({n})", False, False),
    ("special.expit", "torch.special.expit({x})", False, True),
    ("special.entr", "torch.special.entr({x}.square() + 0.1)", False, False),
    ("special.entr", "torch.special.entr({x}.sigmoid())", False, False),
    ("special.gammaln", "torch.special.gammaln({x}.square() + 0.25)", False, False),
    ("special.digamma", "torch.special.digamma({x}.abs() + 0.5)", True, False),
    ("special.psi", "torch.special.psi({x}.square() + 1)", False, False),
    ("special.erf", "torch.special.erf({x})", False, True),
    ("special.erfc", "torch.special.erfc({x})", False, False),
    ("special.erfcx", "torch.special.erfcx({x})", False, False),
    ("special.erfinv", "torch.special.erfinv({x}.tanh() * 0.5)", False, False),
    ("special.logit", "torch.special.logit({x}.sigmoid())", False, False),
    ("special.ndtr", "torch.special.ndtr({x})", False, True),
    ("special.ndtri", "torch.special.ndtri({x}.sigmoid())", False, False),
    ("special.log_ndtr", "torch.special.log_ndtr({x})", False, False),
    ("special.i0", "torch.special.i0({x})", False, True),
    ("special.i0e", "torch.special.i0e({x})", False, False),
    ("special.i1", "torch.special.i1({x})", False, False),
    ("special.i1e", "torch.special.i1e({x})", False, False),
    ("special.sinc", "torch.special.sinc({x})", False, False),
    ("special.exp2", "torch.special.exp2({x})", False, True),
    ("special.expm1", "torch.special.expm1({x})", False, False),
    ("special.log1p", "torch.special.log1p({x}.square())", False, False),
    ("special.round", "torch.special.round({x})", False, False),
    ("special.polygamma", "torch.special.polygamma({n}, {x}.square() + 1)", False, False),
    ("special.multigammaln", "torch.special.multigammaln({x}.square() + 1.5, {p})", False, False),
    ("special.log_softmax", "torch.special.log_softmax({x}, {d})", False, False),
    ("special.softmax", "torch.special.softmax({x}, {d})", False, False),
    ("special.logsumexp", "torch.special.logsumexp({x}, {d})", False, False),
    # orthogonal polynomials (outputs that never require grad), inside and past [-1, 1]
    (
        "special.chebyshev_polynomial_t",
        "torch.special.chebyshev_polynomial_t({x}.tanh(), {p} + 7)",
        False,
        False,
    ),
    (
        "special.legendre_polynomial_p",
        "torch.special.legendre_polynomial_p({x}, {n} + 2)",
        False,
        True,
    ),
    (
        "special.hermite_polynomial_he",
        "torch.special.hermite_polynomial_he({x}, {n} + 1)",
        False,
        True,
    ),
]

# binary special functions: (name, code); ``y`` is the second operand
_SPECIAL_BINARY = [
    ("xlogy", "torch.xlogy({x}, {y}.square() + 0.5)"),
    ("xlogy", "{x}.xlogy({y}.abs() + 0.25)"),
    ("xlogy", "torch.xlogy({x}, {s})"),
    ("xlogy", "torch.xlogy({s}, {y}.square() + 1)"),
    ("xlogy", "torch.xlogy({x}, {y})"),
    ("special.xlogy", "torch.special.xlogy({x}, {y}.square() + 0.5)"),
    ("special.xlog1py", "torch.special.xlog1py({x}, {y}.square())"),
    ("special.xlog1py", "torch.special.xlog1py({x}, {y})"),
]


def special(b: Builder) -> None:
    """Pointwise special functions (``exp2``, ``erfinv``, ``lgamma``, ``digamma``,
    ``polygamma``, ``logit``, ``sinc``, ``clip``, ``xlogy`` and ``ember.special``), behind
    domain guards, on floats and (where they promote) on integers."""
    [o] = b.outputs()
    if b.integer(0, 3) == 0:
        name, template = b.choice(_SPECIAL_BINARY)
        x = b.pick(_is_float)
        y = _broadcastable(b, x)
        code = template.format(x=x, y=y, s=b.choice(["2.0", "0.5", "3"]))
        b.emit(name, [x, y], f"{o} = {code}")
        return
    name, template, kinks, ints = b.choice(_SPECIAL_UNARY)
    x = b.pick() if ints else b.pick(_is_float)
    if not b.t(x).is_floating_point() and _dtype_name(b.t(x).dtype) == "bool":
        raise _Skip()
    lo = b.choice([-1.0, -0.5, 0.0])
    code = template.format(
        call=_call(b, name, x),
        x=x,
        lo=lo,
        hi=lo + b.choice([1, 2]),
        eps=b.choice([0.1, 0.25, 1e-6]),
        n=b.choice([0, 1, 2]),
        p=b.choice([1, 2]),
        d=b.dim(x),
    )
    b.emit(name, [x], f"{o} = {code}", kinks=kinks)


def order(b: Builder) -> None:
    """Order statistics: ``median`` and ``nanmedian`` (whole and along a dim), ``mode``,
    ``kthvalue``, ``quantile`` and ``nanquantile`` (scalar or tensor q, each interpolation).
    Ties make the index (and with it the gradient) unspecified: on floats the stability test
    drops them (a nudge moves tied elements apart); on integers only the values are
    compared."""
    kind = b.choice(
        ["median", "median_dim", "nanmedian", "mode", "kthvalue", "quantile", "nanquantile"]
    )
    floats_only = kind in ("quantile", "nanquantile")
    x = b.pick(_is_float, _nonempty) if floats_only else b.pick(_nonempty)
    t = b.t(x)
    if _dtype_name(t.dtype) == "bool":
        raise _Skip()
    is_float = t.is_floating_point()
    if is_float:
        values = t.detach().numpy()
        if np.unique(values).size < values.size:
            # which of tied floats is picked (the index, and the element the gradient goes
            # to) is unspecified; the nudge does not always reveal it: the middle of three
            # tied elements stays the middle when the nudge is reversed
            raise _Skip()
    outs = b.outputs(2)
    o = outs[0]
    keep = b.flag()
    kd = f", keepdim={keep}" if keep or b.flag() else ""
    d = b.dim(x)
    size = t.shape[d] if t.dim() else 1
    if kind in ("median_dim", "nanmedian") and t.dim() and t.stride(d) == 0 and size > 1:
        # PyTorch 2.13's median along a dim of stride 0 (an expanded one) reads garbage
        # ([0, 3, 343680612] for the median over dim 0 of [0, -4, 3] expanded to 3 rows)
        raise _Skip()
    if kind == "nanmedian":
        src = f"{x}.masked_fill({x} > 1, float('nan'))" if is_float else x
        if b.flag():
            b.emit("nanmedian", [x], f"{o} = {src}.nanmedian()", kinks=True)
            return
        call = f"torch.nanmedian({src}, {d}{kd})"
    elif kind == "median":
        b.emit("median", [x], f"{o} = {_call(b, 'median', x)}", kinks=True)
        return
    elif kind == "median_dim":
        kind = "median"
        call = _call(b, "median", x, f"dim={d}{kd}" if b.flag() else f"{d}{kd}")
    elif kind == "mode":
        call = _call(b, "mode", x, f"{d}{kd}" if b.flag() else "")
    elif kind == "kthvalue":
        k = b.integer(1, max(size, 1))
        call = _call(b, "kthvalue", x, f"{k}, {d}{kd}" if b.flag() else str(k))
    else:  # quantile
        q = b.choice(["0.5", "0.25", "0.0", "1.0", "0.9", "tensor", "tensor"])
        if q == "tensor":
            qs = sorted({b.choice([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]) for _ in range(3)})
            q = f"torch.tensor({qs}, dtype={x}.dtype, device={x}.device)"
        rest = q
        if b.flag():
            rest += f", dim={d}{kd}"
        interp = b.choice(["linear", "lower", "higher", "nearest", "midpoint", ""])
        if interp:
            rest += f", interpolation={interp!r}"
        if kind == "nanquantile":
            src = f"{x}.masked_fill({x} > 1, float('nan'))"
            b.emit(kind, [x], f"{o} = torch.nanquantile({src}, {rest})", kinks=True)
        else:
            b.emit(kind, [x], f"{o} = {_call(b, 'quantile', x, rest)}", kinks=True)
        return
    if is_float:
        b.emit(kind, [x], f"{outs[0]}, {outs[1]} = {call}", 2, kinks=True)
    else:  # which of tied integers is the index is unspecified
        b.emit(kind, [x], f"{o} = {call}.values")


def _atleast(shape: tuple[int, ...], n: int) -> tuple[int, ...]:
    """The shape ``atleast_{n}d`` gives (1-D becomes (1, k), then (1, k, 1))."""
    if len(shape) >= n:
        return shape
    if n == 1 or not shape:
        return (1,) * (n - len(shape)) + shape if n == 1 else (1,) * n
    if len(shape) == 1:
        return (1, shape[0]) if n == 2 else (1, shape[0], 1)
    return (*shape, 1)


def shaping(b: Builder) -> None:
    """Shape and manipulation ops: ``diag``, ``diag_embed``, ``diagonal`` with offsets and
    dims, ``trace``, ``tril``/``triu`` with diagonals, ``rot90``, ``roll`` of several dims,
    ``diff``, ``repeat_interleave``, ``view_as``/``expand_as``/``reshape_as``, ``hstack``/
    ``vstack``/``dstack``/``column_stack``/``concat``, ``block_diag``, ``cartesian_prod``,
    ``combinations`` and ``meshgrid``."""
    kind = b.choice(
        [
            "diag",
            "diag_embed",
            "diagonal",
            "trace",
            "tril",
            "triu",
            "rot90",
            "roll",
            "flip",
            "diff",
            "repeat_interleave",
            "repeat_interleave_tensor",
            "as",
            "stack",
            "block_diag",
            "cartesian_prod",
            "combinations",
            "meshgrid",
        ]
    )
    x = b.pick()
    t = b.t(x)
    n = t.dim()
    shape = tuple(t.shape)
    dt = _dtype_name(t.dtype)
    outs = b.outputs(2)
    o = outs[0]
    if kind == "diag":
        if n not in (1, 2):
            raise _Skip()
        k = b.integer(-2, 2)
        b.emit("diag", [x], f"{o} = {_call(b, 'diag', x, str(k) if k or b.flag() else '')}")
    elif kind == "diag_embed":
        if n > 3:
            raise _Skip()
        m = n + 1
        d1 = b.integer(-m, m - 1)
        d2 = b.integer(-m, m - 1)
        rest = f"{b.integer(-2, 2)}, {d1}, {d2}" if b.flag() else f"offset={b.integer(-1, 1)}"
        b.emit("diag_embed", [x], f"{o} = torch.diag_embed({x}, {rest})")
    elif kind == "diagonal":
        if n < 2:
            raise _Skip()
        off = b.integer(-3, 3)
        d1, d2 = b.dim(x), b.dim(x)
        if b.flag():
            code = f"{x}.diagonal(offset={off}, dim1={d1}, dim2={d2})"
        else:
            code = f"torch.diagonal({x}, {off}, {d1}, {d2})"
        b.emit("diagonal", [x], f"{o} = {code}")
    elif kind == "trace":
        b.emit("trace", [x], f"{o} = {_call(b, 'trace', x)}")
    elif kind in ("tril", "triu"):
        k = b.integer(-3, 3)
        rest = f"diagonal={k}" if b.flag() else str(k)
        b.emit(kind, [x], f"{o} = {_call(b, kind, x, rest)}")
    elif kind == "rot90":
        if n < 2:
            raise _Skip()
        k = b.integer(-3, 4)
        dims = [b.dim(x), b.dim(x)]
        code = f"torch.rot90({x}, {k}, {dims})" if b.flag() else f"{x}.rot90({k}, {dims})"
        b.emit("rot90", [x], f"{o} = {code}")
    elif kind == "roll":
        dims = b.dims(x)
        if not dims or b.integer(0, 3) == 0:
            code = f"torch.roll({x}, {b.integer(-5, 5)})"
        else:
            shifts = tuple(b.integer(-4, 4) for _ in dims)
            code = (
                f"{x}.roll({shifts}, {dims})"
                if b.flag()
                else f"torch.roll({x}, {shifts}, dims={dims})"
            )
        b.emit("roll", [x], f"{o} = {code}")
    elif kind == "flip":
        b.emit("flip", [x], f"{o} = torch.flip({x}, {b.dims(x) or ()})")
    elif kind == "diff":
        if n == 0:
            raise _Skip()
        d = b.dim(x)
        rest = f"n={b.integer(1, 3)}, dim={d}" if b.flag() else f"dim={d}"
        if b.flag():
            side = b.choice(["prepend", "append"])
            extra = list(shape)
            extra[d] = b.integer(1, 2)
            rest += f", {side}={b.new_input(extra, dt)}"
        b.emit("diff", [x], f"{o} = {_call(b, 'diff', x, rest)}")
    elif kind == "repeat_interleave":
        r = b.integer(0, 3)
        rest = f"{r}, dim={b.dim(x)}" if n and b.flag() else str(r)
        b.emit("repeat_interleave", [x], f"{o} = {_call(b, 'repeat_interleave', x, rest)}")
    elif kind == "repeat_interleave_tensor":
        if n == 0:
            raise _Skip()
        d = b.dim(x)
        reps = b.new_input((shape[d],), "int64", low=0, high=4, layout=False)
        if b.integer(0, 4) == 0:
            b.emit("repeat_interleave", [], f"{o} = torch.repeat_interleave({reps})")
            return
        b.emit("repeat_interleave", [x], f"{o} = {x}.repeat_interleave({reps}, dim={d})")
    elif kind == "as":
        fn = b.choice(["view_as", "expand_as", "reshape_as"])
        if fn == "expand_as":
            target = [s if s != 1 else b.choice([1, 2, 3]) for s in shape]
            target = [b.choice([2, 3])] * b.integer(0, 1) + target
        else:
            numel = t.numel()
            target = b.choice([(numel,), shape[::-1], (1, numel), (numel, 1, 1)])
        y = b.new_input(target, b.choice(FLOATS), requires_grad=b.flag())
        b.emit(fn, [x], f"{o} = {x}.{fn}({y})")
    elif kind == "stack":
        fn = b.choice(["hstack", "vstack", "dstack", "column_stack", "concat", "concatenate"])
        if fn == "column_stack":
            base = (shape[0], 1) if n == 1 else (1, 1) if n == 0 else shape
            axis = 1
        else:
            rank = {"hstack": 1, "vstack": 2, "dstack": 3}.get(fn, 1)
            base = _atleast(shape, rank)
            axis = {"hstack": 0 if len(base) == 1 else 1, "vstack": 0, "dstack": 2}.get(fn, 0)
            if fn in ("concat", "concatenate"):
                if n == 0:
                    raise _Skip()
                axis = b.dim(x) % n
        other = list(base)
        other[axis] = b.integer(0, 3)
        if fn == "column_stack" and n <= 1:
            other = [shape[0] if n else 1] if b.flag() else other
        dt2 = dt if b.integer(0, 3) else b.choice([*FLOATS, "int64"])
        y = b.new_input(other, dt2)
        if fn in ("concat", "concatenate"):
            code = f"torch.{fn}([{x}, {y}], {axis if b.flag() else axis - len(base)})"
        else:
            code = f"torch.{fn}(({x}, {y}))" if b.flag() else f"torch.{fn}([{y}, {x}])"
        b.emit(fn, [x], f"{o} = {code}")
    elif kind == "block_diag":
        if n > 2 or shape == (0,):
            # PyTorch's backward reads a 1-D empty block as no row, where its forward (and
            # ember) give it one: the next block's gradient comes from the row above it
            raise _Skip()
        dt2 = dt if b.integer(0, 3) else b.choice([*FLOATS, "int64"])
        rank = b.integer(0, 2)
        y = b.new_input([b.integer(1 if rank == 1 else 0, 3) for _ in range(rank)], dt2)
        b.emit("block_diag", [x], f"{o} = torch.block_diag({x}, {y})")
    elif kind == "cartesian_prod":
        if n != 1:
            raise _Skip()
        y = b.new_input((b.integer(1, 3),), dt)
        args = f"{x}, {y}" if b.flag() else f"{x}, {y}, {x}"
        b.emit("cartesian_prod", [x], f"{o} = torch.cartesian_prod({args})")
    elif kind == "combinations":
        if n != 1:
            raise _Skip()
        r = b.integer(0, 3)
        wr = f", with_replacement={b.flag()}" if b.flag() else ""
        b.emit("combinations", [x], f"{o} = torch.combinations({x}, {r}{wr})")
    else:  # meshgrid
        if n > 1:
            raise _Skip()
        y = b.new_input([b.integer(0, 3)] * b.integer(0, 1), dt)
        indexing = b.choice(["'ij'", "'xy'"])
        code = f"{outs[0]}, {outs[1]} = torch.meshgrid({x}, {y}, indexing={indexing})"
        b.emit("meshgrid", [x], code, 2)


def selection(b: Builder) -> None:
    """Selection and index ops: ``masked_select``, ``take``, ``take_along_dim``,
    ``index_add``/``index_fill``/``index_copy`` (functional, in-place on a clone and through
    a view of it) and ``masked_scatter``."""
    kind = b.choice(
        [
            "masked_select",
            "take",
            "take_along_dim",
            "index_add",
            "index_fill",
            "index_copy",
            "masked_scatter",
        ]
    )
    x = b.pick()
    t = b.t(x)
    dt = _dtype_name(t.dtype)
    outs = b.outputs(2)
    o = outs[0]
    if kind == "masked_select":
        m = _broadcastable(b, x)
        cond = m if _dtype_name(b.t(m).dtype) == "bool" else f"{m} > 0"
        b.emit("masked_select", [x, m], f"{o} = {_call(b, 'masked_select', x, cond)}")
        return
    if kind == "take":
        numel = t.numel()
        idx = b.new_input(
            [b.integer(0, 3) for _ in range(b.integer(0, 2))],
            "int64",
            low=-numel,
            high=max(numel, 1),
        )
        b.emit("take", [x], f"{o} = {_call(b, 'take', x, idx)}")
        return
    if kind == "take_along_dim":
        shape = tuple(t.shape)
        if not shape or 0 in shape:
            raise _Skip()
        if b.integer(0, 2) == 0:
            idx = b.new_input([b.integer(0, 4)], "int64", low=0, high=t.numel())
            b.emit("take_along_dim", [x], f"{o} = torch.take_along_dim({x}, {idx})")
            return
        d = b.dim(x)
        ishape = [b.choice([1, s]) for s in shape]
        ishape[d] = b.integer(0, 3)
        idx = b.new_input(ishape, "int64", low=0, high=shape[d])  # gather's: no negatives
        b.emit("take_along_dim", [x], f"{o} = {_call(b, 'take_along_dim', x, f'{idx}, {d}')}")
        return
    if kind == "masked_scatter":
        m = _broadcastable(b, x)
        cond = m if _dtype_name(b.t(m).dtype) == "bool" else f"{m} > 0"
        shape = tuple(b.torch.broadcast_shapes(tuple(t.shape), tuple(b.t(m).shape)))
        src = b.new_input(shape, dt)
        if b.flag():
            b.emit("masked_scatter", [x, m], f"{o} = {x}.masked_scatter({cond}, {src})")
        else:
            code = f"{o} = {x}.clone()\n{o}.masked_scatter_({cond}, {src})"
            b.emit("masked_scatter_", [x, m], code)
        return
    # index_add / index_fill / index_copy: on x, in place on a clone, or through a view of it
    n = t.dim()
    through = b.choice(
        ["", "", ".t()" if n <= 2 else ".mT", "[1:]", ".transpose(0, -1)", "[..., ::2]"]
    )
    style = b.choice(["fn", "method", "inplace", "inplace"])
    if style != "inplace":
        through = ""
    try:
        # the shape of what the op writes
        target = define(["def view(_v):", f"    return _v{through}"], {}, "view", "view")(t)
    except Exception as exc:  # noqa: BLE001
        raise _Skip() from exc
    shape = tuple(target.shape)
    if not shape:
        raise _Skip()
    d = b.dim(x)
    size = shape[d]
    if size == 0:
        # every index is out of range: PyTorch's index_add skips the check on an empty dim
        # (and its index_copy_ and index_fill_ fail in setStorage), ember raises for all
        raise _Skip()
    if kind == "index_copy":
        idx = b.new_input(
            [b.integer(0, size)], "int64", low=0, high=max(size, 1), unique_along=0, layout=False
        )
    else:
        idx = b.new_input(
            [b.integer(0, 4)],
            "int64",
            low=-size if kind == "index_fill" else 0,
            high=max(size, 1),
            layout=False,
        )
    n_idx = b.pending[-1].data.shape[0]
    if kind == "index_fill":
        value = b.scalar("float" if t.is_floating_point() else "int")
        if b.integer(0, 3) == 0:
            value = f"torch.tensor({value})"
        rest = f"{d}, {idx}, {value}"
    else:
        sshape = list(shape)
        sshape[d] = n_idx
        src = b.new_input(sshape, dt)
        rest = f"{d}, {idx}, {src}"
        if kind == "index_add" and b.flag():
            rest += f", alpha={b.scalar('float' if t.is_floating_point() else 'int')}"
    if style == "fn":
        b.emit(kind, [x], f"{o} = torch.{kind}({x}, {rest})")
    elif style == "method":
        b.emit(kind, [x], f"{o} = {x}.{kind}({rest})")
    else:
        keep_view = through != "" and b.flag()
        lines = [f"{outs[0]} = {x}.clone()"]
        if keep_view:
            lines.append(f"{outs[1]} = {outs[0]}{through}")
            lines.append(f"{outs[1]}.{kind}_({rest})")
        else:
            lines.append(f"{outs[0]}{through}.{kind}_({rest})")
        b.emit(kind + "_", [x], "\n".join(lines), 2 if keep_view else 1)


def contraction(b: Builder) -> None:
    """``tensordot`` (an int or lists of dims), ``cross``, ``cdist`` (p of 1, 2, 3, inf and
    0) and ``einsum`` with ellipses and repeated indices, with new operands of matching
    shape (sometimes of the other float dtype)."""
    kind = b.choice(["tensordot", "tensordot_dims", "cross", "cdist", "einsum"])
    x = b.pick(_is_float)
    t = b.t(x)
    shape = tuple(t.shape)
    n = len(shape)
    dt = _dtype_name(t.dtype)
    dt2 = b.choice(FLOATS) if b.integer(0, 4) == 0 else dt
    if t.numel() == 0:
        dt2 = dt  # PyTorch's einsum skips its dtype check for an empty operand (ember's not)
    [o] = b.outputs()
    if kind == "tensordot":
        k = b.integer(0, min(n, 2))
        w = b.new_input((*shape[n - k :], b.integer(1, 3)), dt)
        b.emit("tensordot", [x], f"{o} = torch.tensordot({x}, {w}, {k})")
    elif kind == "tensordot_dims":
        if n == 0:
            raise _Skip()
        d = b.dim(x)
        w_shape = [b.integer(1, 2), shape[d]]
        if b.flag():
            w_shape = w_shape[::-1]
            wd = 0
        else:
            wd = 1
        w = b.new_input(w_shape, dt)
        b.emit("tensordot", [x], f"{o} = torch.tensordot({x}, {w}, dims=([{d}], [{wd}]))")
    elif kind == "cross":
        dims3 = [i for i, s in enumerate(shape) if s == 3]
        if not dims3:
            raise _Skip()
        d = b.choice(dims3)
        w = b.new_input(shape if b.flag() else shape[d:], dt2)
        code = f"torch.cross({x}, {w}, dim={d})" if b.flag() else f"{x}.cross({w}, {d - n})"
        b.emit("cross", [x], f"{o} = {code}")
    elif kind == "cdist":
        if n not in (2, 3) or 0 in shape:
            raise _Skip()
        w = b.new_input((*shape[:-2], b.integer(1, 3), shape[-1]), dt)
        p = b.choice(["", "1.0", "2.0", "3.0", "float('inf')", "0.0"])
        rest = f", p={p}" if p else ""
        b.emit("cdist", [x], f"{o} = torch.cdist({x}, {w}{rest})", kinks=True)
    else:
        letters = "abcd"[:n]
        form = b.choice(["batch", "reduce", "diag", "trace", "pair", "implicit", "outer"])
        if form == "batch" and n >= 2:
            w = b.new_input((*shape[:-2], shape[-1], 2), dt2)
            code = f"torch.einsum('...ij,...jk->...ik', {x}, {w})"
        elif form == "reduce" and n >= 1:
            code = (
                f"torch.einsum('...i->...', {x})" if b.flag() else f"torch.einsum('i...->...', {x})"
            )
        elif form == "diag" and n >= 2 and shape[-1] == shape[-2]:
            code = f"torch.einsum('...ii->...i', {x})"
        elif form == "trace" and n == 2 and shape[0] == shape[1]:
            code = f"torch.einsum('ii', {x})" if b.flag() else f"torch.einsum('ii->', {x})"
        elif form == "trace" and n == 3 and shape[0] == shape[1]:
            code = f"torch.einsum('iij->j', {x})"
        elif form == "pair" and n >= 1:
            w = b.new_input(shape, dt2)
            eq = f"{letters},{letters}->{letters[0]}" if b.flag() else "...,...->..."
            code = f"torch.einsum({eq!r}, {x}, {w})"
        elif form == "implicit" and n == 2:
            w = b.new_input((shape[1], b.integer(1, 3)), dt2)
            code = f"torch.einsum('ij,jk', {x}, {w})"
        elif form == "outer" and n >= 1:
            w = b.new_input((b.integer(1, 3),), dt2)
            code = f"torch.einsum('...i,j->...ij', {x}, {w})"
        else:
            raise _Skip()
        b.emit("einsum", [x], f"{o} = {code}")


def counting(b: Builder) -> None:
    """Integer-valued ops: ``bincount`` (weights, minlength), ``histc``, ``searchsorted``
    and ``bucketize`` (left and right, int32 results, a sorter), ``unique`` (sorted
    values with their inverse and counts) and ``unique_consecutive``. Floats on a boundary
    are threshold steps the stability test drops."""
    kind = b.choice(["bincount", "histc", "searchsorted", "bucketize", "unique"])
    outs = b.outputs(3)
    o = outs[0]
    if kind == "bincount":
        idx = b.new_input([b.integer(0, 6)], b.choice(["int64", "int32", "uint8"]), low=0, high=5)
        rest = ""
        if b.flag():
            w = b.new_input([b.pending[-1].data.shape[0]], b.choice(FLOATS), requires_grad=False)
            rest += f", weights={w}"
        if b.flag():
            rest += f", minlength={b.integer(0, 7)}"
        b.emit("bincount", [], f"{o} = torch.bincount({idx}{rest})")
    elif kind == "histc":
        x = b.pick(_is_float)
        bins = b.integer(1, 5)
        rng = f", min={b.choice([-2, -1, 0])}, max={b.choice([1, 2, 3])}" if b.flag() else ""
        b.emit("histc", [x], f"{o} = torch.histc({x}.detach(), bins={bins}{rng})")
    elif kind in ("searchsorted", "bucketize"):
        x = b.pick(_nonempty)
        if _dtype_name(b.t(x).dtype) == "bool":
            raise _Skip()
        v = b.pick(lambda v: _dtype_name(v.dtype) != "bool")
        seq = f"{x}.flatten().sort().values"
        opts = ""
        if b.flag():
            opts += f", right={b.flag()}"
        if b.flag():
            opts += ", out_int32=True"
        if kind == "bucketize":
            code = f"{o} = torch.bucketize({v}, {seq}{opts})"
        elif b.integer(0, 3) == 0:
            # an unsorted sequence with the permutation that sorts it
            opts = opts.replace("right=True", "side='right'").replace("right=False", "side='left'")
            flat = f"{x}.flatten()"
            code = f"{o} = torch.searchsorted({flat}, {v}, sorter={flat}.argsort(){opts})"
        elif b.t(x).dim() >= 1 and b.t(v).dim() >= 1 and b.flag():
            # one sorted row per leading index: v takes x's leading shape
            lead = tuple(b.t(x).shape[:-1])
            vv = b.new_input((*lead, b.integer(0, 3)), _dtype_name(b.t(v).dtype))
            code = f"{o} = torch.searchsorted({x}.sort(-1).values, {vv}{opts})"
        else:
            code = f"{o} = torch.searchsorted({seq}, {v}{opts})"
        b.emit(kind, [x, v], code)
    else:
        x = b.pick()
        form = b.choice(["values", "counts", "inverse", "all", "dim", "consecutive"])
        if form == "values":
            code = f"{o} = {_call(b, 'unique', x)}"
            b.emit("unique", [x], code)
        elif form == "counts":
            code = f"{outs[0]}, {outs[1]} = torch.unique({x}, return_counts=True)"
            b.emit("unique", [x], code, 2)
        elif form == "inverse":
            code = f"{outs[0]}, {outs[1]} = {x}.unique(sorted=True, return_inverse=True)"
            b.emit("unique", [x], code, 2)
        elif form == "all":
            code = (
                f"{outs[0]}, {outs[1]}, {outs[2]} = "
                f"torch.unique({x}, return_inverse=True, return_counts=True)"
            )
            b.emit("unique", [x], code, 3)
        elif form == "consecutive":
            code = f"{outs[0]}, {outs[1]} = torch.unique_consecutive({x}, return_counts=True)"
            if b.t(x).dim() and b.flag():
                code = code.replace("=True)", f"=True, dim={b.dim(x)})")
            b.emit("unique_consecutive", [x], code, 2)
        else:
            if b.t(x).dim() == 0:
                raise _Skip()
            code = f"{outs[0]}, {outs[1]} = torch.unique({x}, dim={b.dim(x)}, return_counts=True)"
            b.emit("unique", [x], code, 2)


# --------------------------------------------------------------------------------------------
# nn.functional beyond the everyday ops, ember.linalg and ember.fft


def _float_with(b: Builder, ndims: Sequence[int], side: int = 4, empty: bool = False) -> str:
    """A nonempty float value with one of ``ndims`` dims: an existing one (half the time,
    when one fits) or a new input with small leading dims and sides up to ``side`` (if
    ``empty``, sometimes an empty batch: a leading 0 before the channel and spatial dims)."""
    fits = [n for n, v in b.values.items() if _is_float(v) and v.dim() in ndims and v.numel()]
    if fits and b.flag():
        return b.choice(fits)
    nd = b.choice(list(ndims))
    lead = max(nd - 2, 0) if nd > 2 else 0
    shape = [b.integer(1, 3) for _ in range(lead)] + [b.integer(1, side) for _ in range(nd - lead)]
    if empty and nd == max(ndims) and b.integer(0, 7) == 0:
        # only a batch: PyTorch's convolutions of an unbatched input with no channels give
        # (0, L) where the output has the weight's channels
        shape[0] = 0
    return b.new_input(shape, b.choice(["float32", "float32", "float64"]))


def _val(b: Builder, name: str) -> Any:
    """The oracle's tensor for a value or a pending input."""
    if name in b.values:
        return b.values[name]
    return next(p for p in b.pending if p.name == name).make(b.torch).detach()


def _like(b: Builder, x: str, **kwargs: Any) -> str:
    """A new input of ``x``'s shape and dtype (one time in six the other float dtype: type
    promotion where the op allows it)."""
    t = _val(b, x)
    dt = _dtype_name(t.dtype)
    if dt in FLOATS and b.integer(0, 5) == 0:
        dt = FLOATS[1 - FLOATS.index(dt)]
    return b.new_input(tuple(t.shape), dt, **kwargs)


def _signs(b: Builder, shape: Sequence[int]) -> str:
    """Code for a ±1 target of ``shape`` (integers, so the nudge leaves it alone)."""
    return f"({b.new_input(shape, 'int64', low=0, high=2)} * 2 - 1)"


def _reduction(b: Builder, extra: Sequence[str] = ()) -> str:
    reduction = b.choice(["mean", "sum", "none", *extra])
    return f", reduction={reduction!r}" if reduction != "mean" or b.flag() else ""


# (name, template, kinks); {x} the input, {a} a positive parameter, {d} a dim
_ACTIVATIONS = [
    ("elu", "F.elu({x})", True),
    ("elu", "F.elu({x}, alpha={a})", True),
    ("elu", "F.elu({x}.clone(), {a}, inplace=True)", True),
    ("selu", "F.selu({x})", True),
    ("celu", "F.celu({x}, alpha={a})", True),
    ("leaky_relu", "F.leaky_relu({x})", True),
    ("leaky_relu", "F.leaky_relu({x}, {slope})", True),
    ("leaky_relu", "F.leaky_relu({x}.clone(), negative_slope={slope}, inplace=True)", True),
    ("softplus", "F.softplus({x})", True),
    ("softplus", "F.softplus({x}, beta={beta}, threshold={thr})", True),
    ("hardtanh", "F.hardtanh({x})", True),
    ("hardtanh", "F.hardtanh({x}, {lo}, {hi})", True),
    ("hardtanh", "F.hardtanh({x}.clone(), min_val={lo}, max_val={hi}, inplace=True)", True),
    ("hardswish", "F.hardswish({x})", True),
    ("hardsigmoid", "F.hardsigmoid({x})", True),
    ("mish", "F.mish({x})", False),
    ("silu", "F.silu({x}.clone(), inplace=True)", False),
    ("gelu", "F.gelu({x}, approximate={approx!r})", False),
    ("logsigmoid", "F.logsigmoid({x})", False),
    ("softsign", "F.softsign({x})", False),
    ("tanhshrink", "F.tanhshrink({x})", False),
    ("relu6", "F.relu6({x})", True),
    ("relu6", "F.relu6({x}.clone(), inplace=True)", True),
    ("hardshrink", "F.hardshrink({x}, {a})", True),
    ("softshrink", "F.softshrink({x}, {a})", True),
    ("threshold", "F.threshold({x}, {lo}, {hi})", True),
    ("softmin", "F.softmin({x}, dim={d})", False),
    ("softmin", "F.softmin({x}, {d}, dtype=torch.float64)", False),
]


def activation(b: Builder) -> None:
    """An ``nn.functional`` activation (parameters, in-place forms on a clone), ``glu`` and
    ``prelu``; the ones with kinks or thresholds go through the stability test."""
    x = b.pick(_is_float)
    t = _val(b, x)
    [o] = b.outputs()
    kind = b.choice(range(len(_ACTIVATIONS) + 2))
    if kind == len(_ACTIVATIONS):  # glu halves a dim of even size
        even = [d for d in range(t.dim()) if t.shape[d] % 2 == 0 and t.shape[d] > 0]
        if not even:
            raise _Skip()
        d = b.choice(even)
        b.emit("glu", [x], f"{o} = F.glu({x}, {d - t.dim() if b.flag() else d})")
        return
    if kind == len(_ACTIVATIONS) + 1:  # prelu: one weight, or one per channel (dim 1)
        c = t.shape[1] if t.dim() >= 2 else 1
        w = b.new_input((b.choice([1, c]),), _dtype_name(t.dtype))
        b.emit("prelu", [x], f"{o} = F.prelu({x}, {w})", kinks=True)
        return
    name, template, kinks = _ACTIVATIONS[kind]
    if name == "hardsigmoid" and _dtype_name(t.dtype) == "float64":
        raise _Skip()  # PyTorch's float64 gradient is float32's 1/6 (tests/test_regressions.py)
    lo = b.choice([-1.0, -0.5, 0.0])
    code = template.format(
        x=x,
        a=b.choice([1.0, 0.5, 2.0]),
        slope=b.choice([0.01, 0.2, 1.5]),
        beta=b.choice([0.5, 1.0, 2.0]),
        thr=b.choice([1.0, 5.0, 20.0]),
        lo=lo,
        hi=lo + b.choice([1.0, 2.0]),
        approx=b.choice(["none", "tanh"]),
        d=b.dim(x),
    )
    b.emit(name, [x], f"{o} = {code}", kinks=kinks)


def loss(b: Builder) -> None:
    """The ``nn.functional`` losses beyond mse/l1/cross-entropy: every reduction, weights,
    targets in their domains (probabilities, ±1, positive variances)."""
    kind = b.choice(
        [
            "smooth_l1_loss",
            "huber_loss",
            "kl_div",
            "binary_cross_entropy",
            "cosine_embedding_loss",
            "margin_ranking_loss",
            "triplet_margin_loss",
            "soft_margin_loss",
            "poisson_nll_loss",
            "gaussian_nll_loss",
            "hinge_embedding_loss",
            "normalize",
            "cosine_similarity",
            "pairwise_distance",
        ]
    )
    [o] = b.outputs()
    red = _reduction(b)
    if kind in ("cosine_embedding_loss", "triplet_margin_loss", "pairwise_distance"):
        x = _float_with(b, (1, 2))
        t = _val(b, x)
        shape = tuple(t.shape)
        y = _like(b, x)
        if kind == "cosine_embedding_loss":
            target = _signs(b, shape[:-1])
            margin = f", margin={b.choice([0.0, 0.5, -0.5])}" if b.flag() else ""
            code = f"F.cosine_embedding_loss({x}, {y}, {target}{margin}{red})"
        elif kind == "triplet_margin_loss":
            z = _like(b, x)
            opts = f", margin={b.choice([1.0, 0.5, 2.0])}" if b.flag() else ""
            opts += f", p={b.choice([1, 2, 3])}" if b.flag() else ""
            opts += ", swap=True" if b.flag() else ""
            code = f"F.triplet_margin_loss({x}, {y}, {z}{opts}{red})"
        else:
            opts = f", p={b.choice([1.0, 2.0, 3.0])}" if b.flag() else ""
            opts += f", keepdim={b.flag()}" if b.flag() else ""
            code = f"F.pairwise_distance({x}, {y}{opts})"
        b.emit(kind, [x], f"{o} = {code}", kinks=True)
        return
    x = b.pick(_is_float, _nonempty)
    t = _val(b, x)
    shape = tuple(t.shape)
    dt = _dtype_name(t.dtype)
    if kind in ("smooth_l1_loss", "huber_loss"):
        y = _like(b, x, requires_grad=b.flag())
        param = "beta" if kind == "smooth_l1_loss" else "delta"
        opts = f", {param}={b.choice([1.0, 0.5, 2.0])}" if b.flag() else ""
        b.emit(kind, [x], f"{o} = F.{kind}({x}, {y}{red}{opts})", kinks=True)
    elif kind == "kl_div":
        red = _reduction(b, ["batchmean"])
        y = _like(b, x, requires_grad=b.flag())
        log_target = b.flag()
        src = f"{x}.log_softmax(-1)" if b.flag() else x
        target = (
            f"{y}.log_softmax(-1)"
            if log_target
            else b.choice([f"{y}.softmax(-1)", f"{y}.sigmoid()"])
        )
        b.emit("kl_div", [x], f"{o} = F.kl_div({src}, {target}{red}, log_target={log_target})")
    elif kind == "binary_cross_entropy":
        if float(t.detach().abs().max()) > 6:
            raise _Skip()  # sigmoid rounds to 1 in float32: log(0), clamped, on one side only
        y = _like(b, x, requires_grad=b.flag())
        opts = ""
        if b.flag():
            w = b.new_input(b.choice([shape, shape[-1:]]), dt, requires_grad=False)
            opts = f", weight={w}.abs()"
        code = f"{o} = F.binary_cross_entropy({x}.sigmoid(), {y}.sigmoid(){opts}{red})"
        b.emit(kind, [x], code)
    elif kind in ("margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss"):
        target = _signs(b, shape)
        if kind == "margin_ranking_loss":
            y = _like(b, x)
            margin = f", margin={b.choice([0.0, 0.5, 1.0])}" if b.flag() else ""
            code = f"F.margin_ranking_loss({x}, {y}, {target}{margin}{red})"
        elif kind == "hinge_embedding_loss":
            margin = f", margin={b.choice([0.0, 0.5, 1.0])}" if b.flag() else ""
            code = f"F.hinge_embedding_loss({x}, {target}{margin}{red})"
        else:
            code = f"F.soft_margin_loss({x}, {target}.to({x}.dtype){red})"
        b.emit(kind, [x], f"{o} = {code}", kinks=True)
    elif kind == "poisson_nll_loss":
        y = _like(b, x, requires_grad=False)
        log_input = b.flag()
        src = x if log_input else f"({x}.square() + 0.25)"
        opts = f", log_input={log_input}"
        opts += f", full={b.flag()}" if b.flag() else ""
        code = f"{o} = F.poisson_nll_loss({src}, {y}.abs(){opts}{red})"
        b.emit(kind, [x], code, kinks=True)
    elif kind == "gaussian_nll_loss":
        y = _like(b, x, requires_grad=b.flag())
        var_shape = b.choice([shape, (*shape[:-1], 1)] if shape else [shape])
        v = b.new_input(var_shape, dt)
        full = f", full={b.flag()}" if b.flag() else ""
        code = f"{o} = F.gaussian_nll_loss({x}, {y}, {v}.square() + 0.1{full}{red})"
        b.emit(kind, [x], code)
    elif kind == "normalize":
        p = b.choice([2.0, 1.0, 3.0, "float('inf')"])
        b.emit(kind, [x], f"{o} = F.normalize({x}, p={p}, dim={b.dim(x)})", kinks=True)
    else:  # cosine_similarity
        if not shape:
            raise _Skip()
        y = _broadcastable(b, x)
        if not _is_float(_val(b, y)) or _val(b, y).dim() == 0:
            raise _Skip()
        d = b.integer(-1, 0) if b.flag() else -1
        b.emit(kind, [x, y], f"{o} = F.cosine_similarity({x}, {y}, dim={d})", kinks=True)


def _conv(b: Builder, kind: str, x: str) -> None:
    t = _val(b, x)
    nd = int(kind[-2])
    dt = _dtype_name(t.dtype)
    c = t.shape[-nd - 1]
    groups = b.choice([g for g in (1, 2, 3) if c % g == 0])
    transposed = kind.startswith("conv_transpose")
    per_group = b.integer(1, 2)
    ks = [b.integer(1, 2 if nd == 3 else 3) for _ in range(nd)]
    stride = b.integer(1, 2)
    dilation = b.integer(1, 2)
    if transposed:
        weight = b.new_input((c, per_group, *ks), dt)
    else:
        weight = b.new_input((groups * per_group, c // groups, *ks), dt)
    oc = per_group * groups if transposed else groups * per_group
    opts = f", {b.new_input((oc,), dt)}" if b.flag() else ""
    if stride > 1 or b.flag():
        opts += f", stride={stride if b.flag() else [stride] * nd}"
    if transposed:
        pad = b.integer(0, 1) if b.flag() else 0
        if pad and t.numel() == 0:
            # PyTorch skips its output size check for an empty batch (a transposed conv1d
            # of (0, 1, 2) by a (1, 1, 1) weight with padding=1 is (0, 1, 0), of (1, 1, 2)
            # an error, as ember's both; docs/testing.md)
            raise _Skip()
        if pad or b.flag():
            opts += f", padding={pad}"
        if max(stride, dilation) > 1 and b.flag():
            opts += f", output_padding={b.integer(0, max(stride, dilation) - 1)}"
        if groups > 1:
            opts += f", groups={groups}"
        if dilation > 1:
            opts += f", dilation={dilation}"
    else:
        pad = b.choice(["0", "1", "'same'", "'valid'"] if stride == 1 else ["0", "1"])
        if pad != "0" or b.flag():
            opts += f", padding={pad}"
        if dilation > 1:
            opts += f", dilation={dilation}"
        if groups > 1:
            opts += f", groups={groups}"
    [o] = b.outputs()
    b.emit(kind, [x], f"{o} = F.{kind}({x}, {weight}{opts})")


def _pool(b: Builder, kind: str, x: str) -> None:
    t = _val(b, x)
    nd = int(kind[-2])
    sides = tuple(t.shape[-nd:])
    k = b.integer(1, max(1, min(3, *sides)))
    opts = ""
    if b.flag():
        opts += f", stride={b.integer(1, 2)}"
    pad = b.integer(0, k // 2)
    if pad or b.flag():
        opts += f", padding={pad}"
    dilation = 1
    if kind.startswith("max") and b.flag():
        dilation = b.integer(1, 2)
        opts += f", dilation={dilation}"
    if b.flag():
        opts += f", ceil_mode={b.flag()}"
    outs = b.outputs(2)
    if kind.startswith("avg"):
        if b.flag():
            opts += f", count_include_pad={b.flag()}"
        if nd == 2 and b.integer(0, 3) == 0:
            opts += f", divisor_override={b.integer(1, 3)}"
        b.emit(kind, [x], f"{outs[0]} = F.{kind}({x}, {k}{opts})")
    elif b.flag():
        code = f"{outs[0]}, {outs[1]} = F.{kind}({x}, {k}{opts}, return_indices=True)"
        b.emit(kind, [x], code, 2, kinks=True)
    else:
        b.emit(kind, [x], f"{outs[0]} = F.{kind}({x}, {k}{opts})", kinks=True)


def _norm_over(t: Any, groups: int) -> bool:
    """group_norm/instance_norm: every (sample, group) slice has spread (see ``_spread``)."""
    x = t.detach().double().reshape(t.shape[0], groups, -1)
    return x.shape[-1] >= 2 and _spread(x, (2,))


def spatial(b: Builder) -> None:
    """The spatial functions of ``nn.functional`` (docs/spatial.md): conv1d/3d, transposed
    convolutions, 1-d and 2-d pools with their options, adaptive pools, group and instance
    norm, pad in every mode, interpolate, pixel (un)shuffle, unfold/fold, grid_sample,
    bilinear, scaled_dot_product_attention and the dropouts with p=0."""
    kind = b.choice(
        [
            "conv1d",
            "conv3d",
            "conv_transpose1d",
            "conv_transpose2d",
            "max_pool1d",
            "max_pool2d",
            "avg_pool1d",
            "avg_pool2d",
            "adaptive_avg_pool1d",
            "adaptive_avg_pool2d",
            "adaptive_max_pool1d",
            "adaptive_max_pool2d",
            "group_norm",
            "instance_norm",
            "pad",
            "interpolate",
            "pixel_shuffle",
            "pixel_unshuffle",
            "unfold",
            "fold",
            "grid_sample",
            "bilinear",
            "scaled_dot_product_attention",
            "dropout",
        ]
    )
    [o, o2] = b.outputs(2)
    if kind in ("conv1d", "conv_transpose1d"):
        _conv(b, kind, _float_with(b, (2, 3), 6, empty=True))
    elif kind in ("conv3d",):
        _conv(b, kind, _float_with(b, (4, 5), 3, empty=True))
    elif kind == "conv_transpose2d":
        _conv(b, kind, _float_with(b, (3, 4), 4, empty=True))
    elif kind in ("max_pool1d", "avg_pool1d"):
        _pool(b, kind, _float_with(b, (2, 3), 6, empty=True))
    elif kind in ("max_pool2d", "avg_pool2d"):
        _pool(b, kind, _float_with(b, (3, 4), 5, empty=True))
    elif kind.startswith("adaptive"):
        nd = int(kind[-2])
        x = _float_with(b, (nd + 1, nd + 2), 6, empty=True)
        sizes = [b.integer(1, 4) for _ in range(nd)]
        size: Any = sizes[0] if nd == 1 or b.flag() else sizes
        if nd == 2 and b.integer(0, 3) == 0:
            size = [None, sizes[1]]
        if kind.startswith("adaptive_max") and b.flag():
            code = f"{o}, {o2} = F.{kind}({x}, {size}, return_indices=True)"
            b.emit(kind, [x], code, 2, kinks=True)
        else:
            b.emit(kind, [x], f"{o} = F.{kind}({x}, {size})", kinks=kind.startswith("adaptive_max"))
    elif kind in ("group_norm", "instance_norm"):
        x = _float_with(b, (2, 3, 4) if kind == "group_norm" else (3, 4), 4)
        t = _val(b, x)
        dt = _dtype_name(t.dtype)
        c = t.shape[1]
        w = f", {b.new_input((c,), dt)}" if b.flag() else ""
        bias = f", {b.new_input((c,), dt)}" if w and b.flag() else ""
        if kind == "group_norm":
            g = b.choice([g for g in (1, 2, 3) if c % g == 0])
            if not _norm_over(t, g):
                raise _Skip()
            eps = ", eps=0.001" if b.integer(0, 3) == 0 else ""
            b.emit(kind, [x], f"{o} = F.group_norm({x}, {g}{w}{bias}{eps})")
            return
        opts = f", weight={w[2:]}" if w else ""
        opts += f", bias={bias[2:]}" if bias else ""
        if b.flag():
            rm = b.new_input((c,), dt, requires_grad=False, layout=False)
            rv = b.new_input((c,), dt, requires_grad=False, layout=False)
            if b.flag():
                code = f"F.instance_norm({x}, {rm}, {rv}.abs() + 0.5{opts}, use_input_stats=False)"
                b.emit(kind, [x], f"{o} = {code}")
                return
            opts = f", {rm}, {rv}.abs() + 0.5{opts}"
        if not _norm_over(t, c):
            raise _Skip()
        b.emit(kind, [x], f"{o} = F.instance_norm({x}{opts})")
    elif kind == "pad":
        mode = b.choice(["constant", "reflect", "replicate", "circular"])
        k = b.integer(1, 3)
        x = _float_with(b, (k + 1, k + 2), 4, empty=True)
        sides = _val(b, x).shape[-k:]
        pads = []
        for s in reversed(sides):
            hi = s - 1 if mode == "reflect" else (s if mode == "circular" else 2)
            lo = -1 if mode in ("constant", "circular") and s > 1 else 0
            left, right = b.integer(lo, max(hi, 0)), b.integer(lo, max(hi, 0))
            kept = s + min(left, 0) + min(right, 0)
            if mode == "circular" and max(left, right) > kept:
                # wrapping a cropped dim more than once: PyTorch copies overlapping slices
                # (its 3-d form refuses; ember's refuses every form, docs/spatial.md)
                raise _Skip()
            pads += [left, right]
        extra = f", mode={mode!r}" if mode != "constant" or b.flag() else ""
        if mode == "constant" and b.flag():
            extra += f", value={b.scalar('float')}"
        b.emit("pad", [x], f"{o} = F.pad({x}, {pads}{extra})")
    elif kind == "interpolate":
        nd = b.choice([1, 2, 2, 3])
        x = _float_with(b, (nd + 2,), 4 if nd < 3 else 3, empty=True)
        modes = {
            1: ["nearest", "linear", "area", "nearest-exact"],
            2: ["nearest", "bilinear", "bicubic", "area", "nearest-exact"],
            3: ["nearest", "trilinear", "area"],
        }[nd]
        mode = b.choice(modes)
        if b.flag():
            size = [b.integer(1, 6) for _ in range(nd)]
            opts = f", size={size[0] if b.flag() else size}"
        else:
            factor = b.choice([0.5, 1.5, 2.0, 1.7, 3.0])
            opts = f", scale_factor={factor}"
            if mode != "area" and b.flag():
                opts += f", recompute_scale_factor={b.flag()}"
        if mode in ("linear", "bilinear", "bicubic", "trilinear") and b.flag():
            opts += f", align_corners={b.flag()}"
        b.emit("interpolate", [x], f"{o} = F.interpolate({x}{opts}, mode={mode!r})")
    elif kind == "pixel_shuffle":
        r = b.integer(1, 2)
        x = b.new_input(
            (b.integer(1, 2), b.integer(1, 2) * r * r, b.integer(1, 3), b.integer(1, 3)),
            b.choice([*FLOATS, "int64", "bool"]),
        )
        b.emit(kind, [x], f"{o} = F.pixel_shuffle({x}, {r})")
    elif kind == "pixel_unshuffle":
        r = b.integer(1, 2)
        x = b.new_input(
            (b.integer(1, 2), b.integer(1, 2), b.integer(1, 2) * r, b.integer(1, 3) * r),
            b.choice([*FLOATS, "int64", "bool"]),
        )
        b.emit(kind, [x], f"{o} = F.pixel_unshuffle({x}, {r})")
    elif kind in ("unfold", "fold"):
        ks = [b.integer(1, 2), b.integer(1, 2)]
        dil, pad, stride = b.integer(1, 2), b.integer(0, 1), b.integer(1, 2)
        opts = f", dilation={dil}" if dil > 1 else ""
        opts += f", padding={pad}" if pad else ""
        opts += f", stride={stride}" if stride > 1 else ""
        if kind == "unfold":
            x = _float_with(b, (3, 4), 4, empty=True)
            b.emit(kind, [x], f"{o} = F.unfold({x}, {ks if b.flag() else ks[0]}{opts})")
            return
        out = [b.integer(1, 4), b.integer(1, 4)]
        blocks = math.prod(
            (out[i] + 2 * pad - dil * (ks[i] - 1) - 1) // stride + 1 for i in range(2)
        )
        if blocks < 1:
            raise _Skip()
        c = b.integer(1, 2)
        lead = [b.integer(1, 2)] if b.flag() else []
        x = b.new_input((*lead, c * ks[0] * ks[1], blocks), b.choice(FLOATS))
        b.emit(kind, [x], f"{o} = F.fold({x}, {out}, {ks}{opts})")
    elif kind == "grid_sample":
        nd = b.choice([2, 2, 3])
        x = _float_with(b, (nd + 2,), 4 if nd == 2 else 3)
        t = _val(b, x)
        out = [b.integer(1, 3) for _ in range(nd)]
        g = b.new_input((t.shape[0], *out, nd), _dtype_name(t.dtype))
        mode = b.choice(["bilinear", "nearest"])
        pm = b.choice(["zeros", "border", "reflection"])
        code = (
            f"{o} = F.grid_sample({x}, {g}.tanh() * 1.1, mode={mode!r}, padding_mode={pm!r}, "
            f"align_corners={b.flag()})"
        )
        b.emit(kind, [x], code, kinks=True)
    elif kind == "bilinear":
        x = _float_with(b, (1, 2, 3), 3)
        t = _val(b, x)
        dt = _dtype_name(t.dtype)
        i2, out = b.integer(1, 3), b.integer(1, 3)
        y = b.new_input((*t.shape[:-1], i2), dt)
        w = b.new_input((out, t.shape[-1], i2), dt)
        bias = f", {b.new_input((out,), dt)}" if b.flag() else ""
        b.emit(kind, [x], f"{o} = F.bilinear({x}, {y}, {w}{bias})")
    elif kind == "scaled_dot_product_attention":
        x = _float_with(b, (2, 3, 4), 4)
        t = _val(b, x)
        dt = _dtype_name(t.dtype)
        lead, n_q, e = tuple(t.shape[:-2]), t.shape[-2], t.shape[-1]
        s = b.integer(1, 4)
        k = b.new_input((*lead, s, e), dt)
        v = b.new_input((*lead, s, b.integer(1, 3)), dt)
        opts = ""
        mask = b.choice(["none", "bool", "float", "causal"])
        if mask == "bool":
            opts = f", attn_mask={b.new_input((n_q, s), 'bool')}"
        elif mask == "float":
            opts = f", attn_mask={b.new_input((n_q, s), dt, requires_grad=False)}"
        elif mask == "causal":
            opts = ", is_causal=True"
        if b.flag():
            opts += f", scale={b.choice([0.5, 1.0, 2.0])}"
        if b.flag():
            opts += ", dropout_p=0.0"
        b.emit(kind, [x], f"{o} = F.scaled_dot_product_attention({x}, {k}, {v}{opts})")
    else:
        fn = b.choice(["dropout", "dropout1d", "dropout2d", "dropout3d"])
        nd = {"dropout": (0, 1, 2, 3), "dropout1d": (2, 3), "dropout2d": (3, 4)}.get(fn, (4, 5))
        x = _float_with(b, nd, 3)
        b.emit(fn, [x], f"{o} = F.{fn}({x}, p=0.0, training={b.flag()})")


def _square(b: Builder, batch: bool = True) -> str:
    """A float value with square matrices in its last two dims (existing or new)."""
    fits = [
        n
        for n, v in b.values.items()
        if _is_float(v) and v.dim() >= 2 and v.shape[-1] == v.shape[-2] and v.numel()
    ]
    if fits and b.flag():
        return b.choice(fits)
    n = b.integer(1, 4)
    lead = [b.integer(1, 2)] if batch and b.integer(0, 3) == 0 else []
    return b.new_input((*lead, n, n), b.choice(["float32", "float32", "float64"]))


def linalg_namespace(b: Builder) -> None:
    """``torch.linalg`` on well-conditioned matrices built inside the step (``a + 3n*eye``
    invertible, ``a @ a.mT + n*eye`` positive definite, ``a + a.mT`` symmetric); the
    stability test drops the ill-conditioned ones, and kinks (repeated singular values or
    eigenvalues, norms at zero) go through it too."""
    kind = b.choice(
        [
            "inv",
            "solve",
            "det",
            "slogdet",
            "cholesky",
            "qr",
            "svdvals",
            "eigvalsh",
            "pinv",
            "matrix_norm",
            "vector_norm",
            "norm",
            "matrix_power",
            "lstsq",
            "cross",
            "matrix_rank",
        ]
    )
    [o, o2] = b.outputs(2)
    if kind in ("vector_norm", "norm"):
        x = b.pick(_is_float)
        t = _val(b, x)
        ord_ = b.choice([2, 1, "float('inf')", "-float('inf')", 0, 3, 0.5])
        opts = f", dim={b.dim(x) if b.flag() else b.dims(x)}" if t.dim() and b.flag() else ""
        if kind == "norm" and t.dim() == 2 and not opts and b.flag():
            ord_ = b.choice(["'fro'", "'nuc'", 2, 1, "float('inf')"])
        elif kind == "norm" and not opts and t.dim() > 1:
            ord_ = None
        if opts and b.flag():
            opts += f", keepdim={b.flag()}"
        if kind == "vector_norm" and b.integer(0, 3) == 0:
            opts += ", dtype=torch.float64"
        code = f"torch.linalg.{kind}({x}{'' if ord_ is None else f', {ord_}'}{opts})"
        b.emit(kind, [x], f"{o} = {code}", kinks=True)
        return
    if kind == "cross":
        fits = [n for n, v in b.values.items() if _is_float(v) and 3 in tuple(v.shape)]
        if fits and b.flag():
            x = b.choice(fits)
        else:
            x = b.new_input(
                b.choice([(3,), (b.integer(1, 3), 3), (3, b.integer(1, 2))]), b.choice(FLOATS)
            )
        t = _val(b, x)
        d = b.choice([d for d in range(t.dim()) if t.shape[d] == 3])
        y = _like(b, x)
        dim = f", dim={d - t.dim()}" if b.flag() or d != t.dim() - 1 else ""
        b.emit("cross", [x], f"{o} = torch.linalg.cross({x}, {y}{dim})")
        return
    if kind in ("svdvals", "pinv", "matrix_norm", "qr", "lstsq", "matrix_rank"):
        if kind == "lstsq":
            m, n = b.integer(1, 4), b.integer(1, 4)
            m, n = max(m, n), min(m, n)
            a = b.new_input((m, n), b.choice(FLOATS))
            dt = _dtype_name(_val(b, a).dtype)
            rhs = b.new_input(b.choice([(m, b.integer(1, 2)), (m, 1)]), dt)
            # an explicit driver: PyTorch's default, gelsy, varies in the last bit from run to
            # run (so the builder's repeat run would drop the step at random)
            drv = b.choice(["gels", "gelsd", "gelss"])
            well = f"{a} + {n} * torch.eye({m}, {n}, dtype={a}.dtype, device={a}.device)"
            code = f"torch.linalg.lstsq({well}, {rhs}, driver={drv!r})"
            b.emit(kind, [a], f"{o} = {code}.solution")
            return
        a = _float_with(b, (2, 3), 4)
        if kind == "svdvals":
            b.emit(kind, [a], f"{o} = torch.linalg.svdvals({a})", kinks=True)
        elif kind == "pinv":
            if _val(b, a).shape[-1] == _val(b, a).shape[-2] and b.flag():
                b.emit(
                    kind, [a], f"{o} = torch.linalg.pinv({a} + {a}.mT, hermitian=True)", kinks=True
                )
            else:
                b.emit(kind, [a], f"{o} = torch.linalg.pinv({a})", kinks=True)
        elif kind == "matrix_norm":
            ord_ = b.choice(["'fro'", "'nuc'", 2, -2, 1, -1, "float('inf')"])
            kd = f", keepdim={b.flag()}" if b.flag() else ""
            code = f"torch.linalg.matrix_norm({a}, ord={ord_}{kd})"
            b.emit(kind, [a], f"{o} = {code}", kinks=True)
        elif kind == "qr":
            m, n = _val(b, a).shape[-2:]
            mode = b.choice(["reduced", "complete"] if m <= n else ["reduced"])
            # QR's backward divides by R's diagonal: with leading columns (nearly) dependent
            # it is noise even where the composite is smooth (Q @ R of a constant matrix:
            # PyTorch's float32 gradient is NaN, ember's 7e8, the identity's 1), and a nudge
            # of A does not reveal that through Q @ R
            lead = _val(b, a).detach().double()[..., : min(m, n)]
            sv = b.torch.linalg.svdvals(lead)
            if not bool((sv[..., -1] > 1e-2 * sv[..., 0]).all()):
                raise _Skip()
            # one output, free of the signs of Q's columns and R's rows (LAPACK's choice)
            use = b.choice(["Q @ {o}.R", "R.abs()", "Q.abs()"])
            code = f"{o} = torch.linalg.qr({a}, mode={mode!r})\n{o} = {o}." + use.format(o=o)
            b.emit(kind, [a], code, kinks=True)
        else:
            opts = b.choice(["", ", rtol=0.01", ", atol=0.1", ", hermitian=True"])
            src = a
            if b.flag():
                t = _val(b, a)
                r = b.integer(1, 2)
                lo = b.new_input((*t.shape[:-1], r), _dtype_name(t.dtype))
                src = f"{lo} @ {lo}.mT"
            elif opts == ", hermitian=True":
                if _val(b, a).shape[-1] != _val(b, a).shape[-2]:
                    raise _Skip()
                src = f"({a} + {a}.mT)"
            b.emit(kind, [a], f"{o} = torch.linalg.matrix_rank({src}{opts})")
        return
    a = _square(b)
    n = _val(b, a).shape[-1]
    eye = f"torch.eye({n}, dtype={a}.dtype, device={a}.device)"
    inv = f"({a} + {3 * n} * {eye})"
    spd = f"({a} @ {a}.mT + {n} * {eye})"
    if kind == "inv":
        fn = b.choice(["torch.linalg.inv", "torch.inverse"])
        b.emit(kind, [a], f"{o} = {fn}({inv})")
    elif kind == "solve":
        rhs = b.new_input(b.choice([(n,), (n, b.integer(1, 2))]), b.choice(FLOATS))
        if b.flag():
            b.emit(kind, [a], f"{o} = torch.linalg.solve({inv}, {rhs}.to({a}.dtype))")
        else:
            code = f"{o} = torch.linalg.solve({inv}, {rhs}.to({a}.dtype).mT, left=False)"
            if _val(b, rhs).dim() == 1:
                raise _Skip()
            b.emit(kind, [a], code)
    elif kind == "det":
        fn = b.choice(["torch.linalg.det", "torch.det"])
        b.emit(kind, [a], f"{o} = {fn}({b.choice([inv, spd, a])})")
    elif kind == "slogdet":
        code = f"{o}, {o2} = torch.linalg.slogdet({b.choice([inv, spd, a])})"
        b.emit(kind, [a], code, 2, kinks=True)
    elif kind == "cholesky":
        up = ", upper=True" if b.flag() else ""
        b.emit(kind, [a], f"{o} = torch.linalg.cholesky({spd}{up})")
    elif kind == "eigvalsh":
        uplo = ", UPLO='U'" if b.flag() else ""
        src = b.choice([spd, f"({a} + {a}.mT)"])
        b.emit(kind, [a], f"{o} = torch.linalg.eigvalsh({src}{uplo})", kinks=True)
    else:  # matrix_power
        k = b.choice([-2, -1, 0, 1, 2, 3])
        src = inv if k < 0 or b.flag() else a
        b.emit(kind, [a], f"{o} = torch.linalg.matrix_power({src}, {k})")


def fft(b: Builder) -> None:
    """``torch.fft`` transforms of real values reduced to real ones in the same step
    (``.abs()``, ``.real``, ``.imag``; ``irfft`` of an ``rfft``), shifts and frequencies."""
    kind = b.choice(
        [
            "fft",
            "ifft",
            "rfft",
            "irfft",
            "hfft",
            "fft2",
            "ifft2",
            "rfft2",
            "fftn",
            "rfftn",
            "fftshift",
            "ifftshift",
            "fftfreq",
            "rfftfreq",
        ]
    )
    [o] = b.outputs()
    if kind in ("fftfreq", "rfftfreq"):
        dt = f", dtype=torch.{b.choice(FLOATS)}" if b.flag() else ""
        d = f", d={b.choice([0.5, 2.0, 0.1])}" if b.flag() else ""
        x = b.pick()  # made on its device: a factory's tensor must be on the program's
        where = f", device={x}.device"
        b.emit(kind, [x], f"{o} = torch.fft.{kind}({b.integer(1, 6)}{d}{dt}{where})")
        return
    if kind in ("fftshift", "ifftshift"):
        x = b.pick(_ndim(1))
        dim = f", dim={b.dim(x) if b.flag() else b.dims(x)}" if b.flag() else ""
        b.emit(kind, [x], f"{o} = torch.fft.{kind}({x}{dim})")
        return
    x = b.pick(_is_float, _nonempty, _ndim(1))
    t = _val(b, x)
    norm = b.choice(["", "", ", norm='ortho'", ", norm='forward'", ", norm='backward'"])
    # .imag.clone(): PyTorch's ifft of a real input is a conjugate view, whose .imag has the
    # negative bit set (and cannot be read by .numpy())
    part = b.choice([".abs()", ".real", ".imag.clone()"])
    if kind in ("fft", "ifft", "rfft", "irfft", "hfft"):
        d = b.dim(x)
        n = f", n={b.integer(1, 6)}" if b.flag() else ""
        call = f"torch.fft.{kind}({x}{n}, dim={d}{norm})"
        if kind == "irfft" and b.flag():
            call = f"torch.fft.irfft(torch.fft.rfft({x}, dim={d}){n}, dim={d}{norm})"
        if kind in ("irfft", "hfft"):
            part = ""
    else:
        if kind in ("fft2", "ifft2", "rfft2") and t.dim() < 2:
            raise _Skip()
        s = ""
        if b.flag():
            k = 2 if kind.endswith("2") else b.integer(1, t.dim())
            s = f", s={[b.integer(1, 4) for _ in range(k)]}"
            if kind.endswith("n"):
                s += f", dim={list(range(t.dim() - k, t.dim()))}"
        call = f"torch.fft.{kind}({x}{s}{norm})"
    b.emit(kind, [x], f"{o} = {call}{part}", kinks=part == ".abs()")


def manipulation(b: Builder) -> None:
    """The helpers scripts reach for (issue 18): ``tile``, ``sum_to_size``,
    ``broadcast_tensors``, ``row_stack``, ``where(condition)``, ``trapz``, ``ger``,
    ``chain_matmul``, the in-place view ops (``unsqueeze_``, ``squeeze_``, ``t_``,
    ``transpose_``, ``swapaxes_``, ``swapdims_``) on a clone, ``multinomial`` of one-hot
    weights (deterministic: the one category of weight), ``scatter_reduce`` and
    ``index_reduce`` (every reduction, with and without ``self``), ``put`` (with and without
    accumulation), ``fill_diagonal_``, ``dist``, ``renorm``, ``ldexp`` and ``matrix_exp``."""
    kind = b.choice(
        ["tile", "sum_to_size", "broadcast_tensors", "row_stack", "where", "trapz", "ger",
         "chain_matmul", "inplace_view", "multinomial", "scatter_reduce", "index_reduce", "put",
         "fill_diagonal_", "dist", "renorm", "ldexp", "matrix_exp"]
    )  # fmt: skip
    x = b.pick()
    t = b.t(x)
    n = t.dim()
    shape = tuple(t.shape)
    dt = _dtype_name(t.dtype)
    outs = b.outputs(2)
    o = outs[0]
    if kind == "tile":
        reps = tuple(b.integer(0, 2) if b.integer(0, 4) == 0 else b.integer(1, 2)
                     for _ in range(b.integer(0, n + 1)))  # fmt: skip
        b.emit("tile", [x], f"{o} = {_call(b, 'tile', x, str(reps))}")
    elif kind == "sum_to_size":
        lead = b.integer(0, n)
        size = [1 if b.flag() else s for s in shape[lead:]]
        b.emit("sum_to_size", [x], f"{o} = {x}.sum_to_size({size})")
    elif kind == "broadcast_tensors":
        y = _broadcastable(b, x)
        code = f"{outs[0]}, {outs[1]} = torch.broadcast_tensors({x}, {y})"
        b.emit("broadcast_tensors", [x, y], code, 2)
    elif kind == "row_stack":
        other = list(_atleast(shape, 2))
        other[0] = b.integer(0, 2)
        y = b.new_input(other if n >= 2 else shape, dt)
        b.emit("row_stack", [x], f"{o} = torch.row_stack(({x}, {y}))")
    elif kind == "where":
        cond = x if dt == "bool" else f"{x} > 0"
        code = f"{o} = torch.stack(torch.where({cond}))" if n else f"{o} = torch.where({cond})[0]"
        b.emit("where", [x], code)
    elif kind == "trapz":
        if n == 0 or not t.is_floating_point():
            raise _Skip()
        d = b.dim(x)
        if b.flag():
            b.emit("trapz", [x], f"{o} = torch.trapz({x}, dx={b.scalar('float')}, dim={d})")
        else:
            xs = b.new_input((shape[d],), b.choice(FLOATS), requires_grad=False)
            b.emit("trapz", [x], f"{o} = torch.trapz({x}, {xs}, dim={d})")
    elif kind == "ger":
        if n != 1:
            raise _Skip()
        y = b.new_input((b.integer(0, 3),), dt)
        b.emit("ger", [x], f"{o} = {_call(b, 'ger', x, y)}")
    elif kind == "chain_matmul":
        if n != 2 or not t.is_floating_point():
            raise _Skip()
        mid = b.new_input((shape[1], b.integer(1, 3)), dt)
        last = b.new_input((b.pending[-1].data.shape[1], b.integer(1, 3)), dt)
        b.emit("chain_matmul", [x], f"{o} = torch.chain_matmul({x}, {mid}, {last})")
    elif kind == "inplace_view":
        fn = b.choice(["unsqueeze_", "squeeze_", "t_", "transpose_", "swapaxes_", "swapdims_"])
        if fn == "unsqueeze_":
            rest = str(b.integer(-n - 1, n))
        elif fn == "squeeze_":
            rest = b.choice(["", str(b.dim(x))])
        elif fn == "t_":
            if n > 2:
                raise _Skip()
            rest = ""
        else:
            rest = f"{b.dim(x)}, {b.dim(x)}"
        # (on a clone only: the lazy device refuses to change a view's geometry, and the
        # programs run there too; tests/test_api_ops.py writes through such a view)
        b.emit(fn, [x], f"{o} = {x}.clone()\n{o}.{fn}({rest})")
    elif kind == "scatter_reduce":
        if n == 0 or 0 in shape or dt == "bool":
            raise _Skip()
        d = b.dim(x)
        ishape = list(shape)
        ishape[d] = b.integer(1, 3)
        idx = b.new_input(ishape, "int64", low=0, high=shape[d], layout=False)
        src = b.new_input(ishape, dt)
        red = b.choice(["sum", "prod", "mean", "amax", "amin"])
        inc = b.flag()
        code = f"{o} = {x}.scatter_reduce({d}, {idx}, {src}, {red!r}, include_self={inc})"
        b.emit("scatter_reduce", [x], code, kinks=red in ("amax", "amin"))
    elif kind == "index_reduce":
        if n == 0 or 0 in shape or dt == "bool":
            raise _Skip()
        d = b.dim(x)
        k = b.integer(1, 3)
        idx = b.new_input((k,), "int64", low=0, high=shape[d], layout=False)
        sshape = list(shape)
        sshape[d] = k
        src = b.new_input(sshape, dt)
        red = b.choice(["prod", "mean", "amax", "amin"])
        code = (f"{o} = {x}.clone()\n{o}.index_reduce_({d}, {idx}, {src}, {red!r}, "
                f"include_self={b.flag()})")  # fmt: skip
        b.emit("index_reduce_", [x], code, kinks=red in ("amax", "amin"))
    elif kind == "put":
        if t.numel() == 0:
            raise _Skip()
        k = b.integer(1, 3)
        acc = b.flag()
        idx = b.new_input((k,), "int64", low=-t.numel(), high=t.numel(), layout=False)
        if not acc and len(set(b.pending[-1].data.tolist())) < k:
            raise _Skip()  # which repeated write lands last is unspecified
        src = b.new_input((k,), dt)
        b.emit("put", [x], f"{o} = {x}.put({idx}, {src}, accumulate={acc})")
    elif kind == "fill_diagonal_":
        if n < 2 or (n > 2 and len(set(shape)) > 1):
            raise _Skip()
        value = b.scalar("float" if t.is_floating_point() else "int")
        if dt == "bool":
            value = "True"
        b.emit("fill_diagonal_", [x], f"{o} = {x}.clone()\n{o}.fill_diagonal_({value}, {b.flag()})")
    elif kind == "dist":
        if not t.is_floating_point():
            raise _Skip()
        y = _broadcastable(b, x)
        if not b.t(y).is_floating_point():
            raise _Skip()
        p = b.choice([2, 1, 3, "float('inf')"])
        b.emit("dist", [x, y], f"{o} = {_call(b, 'dist', x, f'{y}, {p}')}", kinks=True)
    elif kind == "renorm":
        if n < 2 or not t.is_floating_point():
            raise _Skip()
        b.emit("renorm", [x], f"{o} = {x}.renorm({b.choice([1, 2, 3])}, {b.dim(x)}, "
               f"{b.choice([0.5, 1.0, 5.0])})", kinks=True)  # fmt: skip
    elif kind == "ldexp":
        if not t.is_floating_point():
            raise _Skip()
        ex = b.new_input(shape, "int64", low=0, high=4)
        b.emit("ldexp", [x], f"{o} = {_call(b, 'ldexp', x, ex)}")
    elif kind == "matrix_exp":
        if n < 2 or shape[-1] != shape[-2] or not t.is_floating_point():
            raise _Skip()
        b.emit("matrix_exp", [x], f"{o} = {_call(b, 'matrix_exp', f'({x} * 0.3)')}")
    else:  # multinomial of one-hot weights
        if n == 0 or n > 2 or 0 in shape:
            raise _Skip()
        k = shape[-1]
        hot = b.new_input(shape[:-1], "int64", low=0, high=k, layout=False)
        samples = b.integer(1, 3)
        code = (f"{o} = torch.multinomial(torch.nn.functional.one_hot({hot}, {k}).to({x}.dtype) "
                f"if {x}.is_floating_point() else torch.nn.functional.one_hot({hot}, {k}).float(), "
                f"{samples}, replacement=True)")  # fmt: skip
        b.emit("multinomial", [x], code)


def more_api(b: Builder) -> None:
    """More of issue 18's list: ``pdist``, ``histogram`` (a bin count over a range or given
    edges, weighted, as a density; the input detached: not differentiable), ``complex``,
    ``polar`` and ``view_as_complex`` (read back through ``view_as_real``, so the program
    stays real), ``linalg.lu_factor`` (the packed factors) and ``linalg.lu_solve`` (with the
    factors of a well-conditioned matrix; a pivot that changes under a nudge is dropped
    by the stability test) and ``poisson`` from a seeded generator (ember draws PyTorch's
    values: NOTE [poisson stream]), and the ``stft``/``istft`` round trip of a signal (read
    back through ``view_as_real``)."""
    kind = b.choice(
        [
            "pdist",
            "histogram",
            "complex",
            "polar",
            "view_as_complex",
            "lu",
            "lu_solve",
            "poisson",
            "stft",
        ]
    )
    x = b.pick(_is_float)
    t = b.t(x)
    shape = tuple(t.shape)
    dt = _dtype_name(t.dtype)
    o = b.outputs(1)[0]
    if kind == "pdist":
        if t.dim() != 2 or dt == "float16" or shape[0] == 0:
            raise _Skip()  # (PyTorch 2.13's pdist backward of no rows crashes the process)
        p = b.choice([2, 1, 0, 3, "float('inf')"])
        b.emit("pdist", [x], f"{o} = torch.pdist({x}, {p})", kinks=True)
    elif kind == "histogram":
        if dt == "float16":
            raise _Skip()
        opts = ""
        if b.flag():
            opts += ", weight=" + b.new_input(shape, dt, requires_grad=False)
        if b.flag():
            opts += ", density=True"
        bins = f"{b.integer(1, 5)}, range=({b.choice([-2.0, -1.0])}, {b.choice([1.0, 2.5])})"
        if b.flag():
            bins = (
                "torch.tensor([-1.5, -0.25, 0.0, 1.0, 2.0], dtype="
                + x
                + ".dtype, device="
                + x
                + ".device)"
            )
        code = f"{o} = {_call(b, 'histogram', f'{x}.detach()', bins + opts)}.hist"
        b.emit("histogram", [x], code)
    elif kind in ("complex", "polar"):
        if dt == "float16":
            raise _Skip()
        y = b.new_input(shape, dt)
        b.emit(kind, [x], f"{o} = torch.view_as_real(torch.{kind}({x}, {y}))")
    elif kind == "stft":
        if dt == "float16" or t.dim() not in (1, 2) or shape[-1] < 3:
            raise _Skip()
        n_fft, hop = b.choice([2, 3, 4, 8][: 2 + (shape[-1] >= 4) + (shape[-1] >= 8)]), 1
        w = f"torch.hann_window({n_fft}, dtype={x}.dtype, device={x}.device) + 0.5"
        spec = f"torch.stft({x}, {n_fft}, {hop}, window={w}, return_complex=True)"
        if b.flag():
            code = f"{o} = torch.view_as_real({spec})"
        else:
            code = f"{o} = torch.istft({spec}, {n_fft}, {hop}, window={w})"
        b.emit("stft", [x], code)
    elif kind == "poisson":
        code = f"{o} = torch.poisson({x}.abs() * 3, generator=torch.Generator().manual_seed(7))"
        b.emit("poisson", [x], code)
    elif kind in ("lu", "lu_solve"):
        if dt == "float16" or t.dim() < 2 or 0 in shape:
            raise _Skip()
        if kind == "lu":
            b.emit("lu", [x], f"{o} = torch.linalg.lu_factor({x}).LU")
        else:
            if shape[-1] != shape[-2]:
                raise _Skip()
            k = shape[-1]
            well = f"{x} + {k + 1} * torch.eye({k}, dtype={x}.dtype, device={x}.device)"
            code = f"{o} = torch.linalg.lu_solve(*torch.linalg.lu_factor({well}), {x})"
            b.emit("lu_solve", [x], code)
    else:
        if dt == "float16" or t.dim() == 0:
            raise _Skip()
        pair = f"torch.stack([{x}, {x} * 2], -1)"
        code = f"{o} = torch.view_as_real(torch.view_as_complex({pair}) * (1 - 2j))"
        b.emit("view_as_complex", [x], code)


VOCABULARY: list[Callable[[Builder], None]] = [
    unary,
    unary,
    unary,
    int_unary,
    binary,
    binary,
    binary,
    ternary,
    reduction,
    reduction,
    reduction,
    view,
    view,
    view,
    inplace,
    inplace,
    indexing,
    indexing,
    linalg,
    functional,
    functional,
    cast,
    special,
    special,
    order,
    order,
    shaping,
    shaping,
    selection,
    selection,
    contraction,
    counting,
    activation,
    loss,
    spatial,
    spatial,
    linalg_namespace,
    fft,
    manipulation,
    manipulation,
    more_api,
]


@st.composite
def programs(
    draw: Callable[[st.SearchStrategy[Any]], Any],
    min_steps: int = 5,
    max_steps: int = 15,
    oracle: ModuleType | None = None,
) -> Program:
    """A hypothesis strategy for random programs of ``min_steps`` to ``max_steps`` steps,
    stable under a nudge of their inputs as run by ``oracle`` (PyTorch by default)."""
    b = Builder(draw, oracle or importlib.import_module("torch"))
    for _ in range(draw(st.integers(1, 3))):
        dtype = b.choice(["float32"] * 6 + ["float64"] * 2 + ["int64", "int32", "bool", "uint8"])
        b.new_input(b.random_shape(), dtype)
        b.commit_inputs()
    target = draw(st.integers(min_steps, max_steps))
    attempts = 0
    while len(b.steps) < target and attempts < 4 * max_steps:
        attempts += 1
        family = b.choice(VOCABULARY)
        b.pending = []
        try:
            family(b)
        except (_Reject, _Skip):
            b.pending = []
            b.dropped += 1
    return b.program()
