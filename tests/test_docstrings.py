"""Every ``>>>`` example in ember's docstrings runs and prints what it says.

One test per module of ``ember`` (found with ``pkgutil.walk_packages``; ``ember.demo`` and
``ember.__main__`` are included: importing them only defines functions, ``python -m ember``
runs its demo under ``if __name__ == "__main__"``). Each docstring's examples run in a
namespace of their own holding only ``ember`` and ``np`` (NumPy), so an example imports
whatever else it uses, as a reader copying it would.

Nothing leaks from one module's examples to the next: the process-wide settings an example
may change (print options, default dtype, grad and anomaly mode, the random state,
deterministic algorithms, the number of threads, matmul precision, the ``ember.backends``
flags, distributions' default validation, warning filters) are put back after each module,
and ``ember.manual_seed(0)`` runs before it, so a module's examples print the same whichever
modules ran before. An op an example defines must be gone when the module's examples end
(``Library._destroy``, or a ``with`` block), so they can run again in the same process and
other tests never see it.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import io
import pkgutil
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.dispatch import dispatcher


def _modules() -> list[str]:
    """``ember`` and its modules, also those of folders without ``__init__.py`` (``ember.ops``
    and ``ember.dispatch`` are namespace packages, which ``pkgutil`` does not walk into)."""
    names = {ember.__name__}
    paths = [(path, "ember.") for path in ember.__path__]
    while paths:
        path, prefix = paths.pop()
        # onerror: a subpackage that fails to import fails its own test below
        for info in pkgutil.walk_packages([path], prefix, onerror=lambda name: None):
            names.add(info.name)
        for folder in sorted(Path(path).iterdir()):
            if (
                folder.is_dir()
                and not (folder / "__init__.py").exists()
                and any(folder.glob("*.py"))
            ):
                names.add(prefix + folder.name)
                paths.append((str(folder), f"{prefix}{folder.name}."))
    return sorted(names)


@contextmanager
def _isolated() -> Iterator[None]:
    """Put back every process-wide setting an example may change."""
    from ember import _global_settings, _tensor_str
    from ember.backends import cuda, cudnn, opt_einsum
    from ember.distributions import Distribution

    printing = _tensor_str.get_printoptions()
    dtype = ember.get_default_dtype()
    grad = ember.is_grad_enabled()
    anomaly = (ember.autograd.is_anomaly_enabled(), ember.autograd.is_anomaly_check_nan_enabled())
    flags = {
        name: getattr(_global_settings.FLAGS, name) for name in _global_settings.FLAGS.__slots__
    }
    # module-level switches: (object, attribute, value)
    switches = [
        (module, name, getattr(module, name))
        for module, names in (
            (cudnn, ("enabled", "benchmark", "deterministic", "allow_tf32")),
            (opt_einsum, ("enabled", "strategy")),
            (cuda.matmul, cuda.matmul._REDUCTIONS),
            (Distribution, ("_validate_args",)),
        )
        for name in names
    ]
    sdp = dict(cuda._SDP)
    rng = ember.get_rng_state()
    ember.manual_seed(0)
    try:
        with warnings.catch_warnings():
            yield
    finally:
        ember.set_rng_state(rng)
        cuda._SDP.update(sdp)
        for owner, name, value in switches:
            setattr(owner, name, value)
        num_threads = flags.pop("num_threads")
        if _global_settings.FLAGS.num_threads != num_threads:
            # also undoes the BLAS thread limit set_num_threads applied
            ember.set_num_threads(num_threads or _global_settings._available_cpus())
            _global_settings.FLAGS.num_threads = num_threads
        for name, value in flags.items():
            setattr(_global_settings.FLAGS, name, value)
        ember.autograd.set_detect_anomaly(*anomaly)
        ember.set_grad_enabled(grad)
        ember.set_default_dtype(dtype)
        vars(_tensor_str.PRINT_OPTS).update(printing)


def _with_examples(names: list[str]) -> list[str]:
    """The modules whose source has a ``>>>`` line (found by reading the file, not by
    importing the module); the others have no example to run."""
    found = []
    for name in names:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin and origin.endswith(".py") and ">>> " in Path(origin).read_text():
            found.append(name)
    return found


@pytest.mark.parametrize("name", _with_examples(_modules()))
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = [t for t in finder.find(module, name, globs={"ember": ember, "np": np}) if t.examples]
    if not tests:
        pytest.skip("its '>>> ' lines are not docstring examples")
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    ops = set(dispatcher.all_ops)
    with _isolated():
        for test in sorted(tests, key=lambda t: t.name):
            runner.run(test, out=report.write)
    if runner.failures:
        pytest.fail(
            f"{runner.failures} of {runner.tries} examples failed:\n{report.getvalue()}",
            pytrace=False,
        )
    # an op an example leaves defined would collide with the next run's definition
    left = sorted(str(op) for op in set(dispatcher.all_ops) - ops)
    assert not left, f"the examples leave ops defined (destroy their Library): {left}"
