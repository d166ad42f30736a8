"""Shared fixtures: PyTorch as the oracle when installed; Hypothesis settings."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import settings

import ember
from ember.dispatch.keys import PYTHON_BIT, DispatchKey
from ember.dispatch.state import exclude_keys, include_keys
from ember.library import Library

try:
    import torch
except ImportError:  # pragma: no cover - the test extra installs it
    torch = None

requires_torch = pytest.mark.skipif(
    torch is None, reason="PyTorch (the test oracle) is not installed"
)

#: ember, and PyTorch when installed: what a test taking the ``lib`` fixture runs against
LIBS = [ember] + ([torch] if torch is not None else [])


@pytest.fixture(params=LIBS, ids=lambda m: m.__name__)
def lib(request: pytest.FixtureRequest) -> Any:
    """The library under test: ember, then PyTorch (the same test against both)."""
    return request.param


def sub(lib: Any, path: str) -> Any:
    """``lib``'s submodule ``path`` (``sub(lib, "utils._pytree")``)."""
    return importlib.import_module(f"{lib.__name__}.{path}")


def dispatched_ops(lib: Any, run: Callable[[], Any]) -> list[str]:
    """The ops ``run()`` dispatches, as a pass-through ``TorchDispatchMode`` of ``lib``
    (ember or torch) sees them, by name."""
    base = __import__(f"{lib.__name__}.utils._python_dispatch", fromlist=["x"]).TorchDispatchMode
    seen: list[str] = []

    class Log(base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        run()
    return seen


def train_steps(
    model: Any,
    opt: Any,
    loss_fn: Callable[[Any, Any], Any],
    x: Any,
    y: Any,
    steps: int,
    lr: Callable[[int], float] | None = None,
) -> list[float]:
    """``steps`` training steps of ``model`` on one batch: ``loss_fn(model(x), y)``, its
    backward and ``opt.step()``, the learning rate set to ``lr(step)`` first where given, and
    the lazy device's ``mark_step`` after each step where ``x`` is on it; the losses."""
    losses = []
    for step in range(steps):
        if lr is not None:
            opt.param_groups[0]["lr"] = lr(step)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if x.device.type == "lazy":
            ember.lazy.mark_step()
        losses.append(loss.item())
    return losses


def raises_as_torch(call: Callable[[Any], Any]) -> tuple[BaseException, BaseException]:
    """``call(torch)`` raises, and ``call(ember)`` raises an instance of the builtin class
    that PyTorch's exception is (PyTorch's own types, as ``LinAlgError``, derive from one);
    returns both exceptions, PyTorch's first."""
    with pytest.raises(Exception) as t_info:  # noqa: PT011 - the type is PyTorch's
        call(torch)
    with pytest.raises(Exception) as e_info:  # noqa: PT011
        call(ember)
    t_exc, e_exc = t_info.value, e_info.value
    base = next(k for k in type(t_exc).__mro__ if k.__module__ == "builtins")
    assert isinstance(e_exc, base), (type(e_exc), e_exc, t_exc)
    return t_exc, e_exc


@contextmanager
def python_key_calls() -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """The aten ops that reach ember's Python key while the block runs, by name with their
    arguments, in order (as a TorchDispatchMode sees them); each runs on below the key."""
    calls: list[tuple[str, tuple[Any, ...]]] = []
    lib = Library("aten", "IMPL")

    def fallback(op: Any, keyset: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        calls.append((op.__name__, args))
        with exclude_keys(PYTHON_BIT):
            return op(*args, **kwargs)

    lib.fallback(fallback, DispatchKey.Python)
    try:
        with include_keys(PYTHON_BIT):
            yield calls
    finally:
        lib._destroy()


# No per-example deadline: timings on a shared 2-core machine say nothing about correctness.
# In CI, examples are derived from each test's name, so a run is repeatable.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--programs",
        type=int,
        default=None,
        help="random programs tests/test_random_programs.py runs against PyTorch "
        "(default: $EMBER_PROGRAMS, else 300)",
    )


@pytest.fixture(autouse=True)
def _numba_from_the_first_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run fused groups on numba from their first run, so every test of the numba
    tier tests numba; ``test_lazy.py`` tests the warm-up runs (NOTE [warm-up runs])."""
    from ember.compiler import numba_tier

    monkeypatch.setattr(numba_tier, "WARM_RUNS", 0)


@pytest.fixture(scope="session")
def program_count(request: pytest.FixtureRequest) -> int:
    """How many random programs to check (``--programs N`` or ``EMBER_PROGRAMS=N``)."""
    given = request.config.getoption("--programs")
    return int(given if given is not None else os.environ.get("EMBER_PROGRAMS", 300))
