"""What tensor-subclass and mode code imports from ``torch.testing._internal.common_utils``:
``TestCase`` (``assertEqual`` that compares tensors of any subclass and layout, and
``assertExpectedInline`` through the ``expecttest`` package when it is installed),
``run_tests``, ``parametrize`` / ``subtest`` / ``instantiate_parametrized_tests``,
``disable_gc`` and the Dynamo/CUDA switches and skip decorators, which are no-ops here.

>>> from ember.testing._internal.common_utils import TestCase, parametrize
>>> class T(TestCase):
...     def test_sum(self):
...         self.assertEqual(ember.ones(2).sum(), 2)
>>> T("test_sum").run().wasSuccessful()
True
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import sys
import unittest
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ember import dtypes
from ember._factory import as_tensor
from ember._layout import strided
from ember._tensor import Tensor
from ember.testing._comparison import assert_close

try:  # optional: ember itself does not depend on it (the test extra installs it)
    import expecttest as _expecttest

    _Base: type = _expecttest.TestCase
except ImportError:  # pragma: no cover - exercised only without the test extra
    _expecttest = None
    _Base = unittest.TestCase

__all__ = [
    "IS_LINUX",
    "IS_MACOS",
    "IS_WINDOWS",
    "TEST_CUDA",
    "TEST_WITH_CROSSREF",
    "TEST_WITH_TORCHDYNAMO",
    "TestCase",
    "disable_gc",
    "instantiate_parametrized_tests",
    "parametrize",
    "run_tests",
    "skipIfCrossRef",
    "skipIfTorchDynamo",
    "skipIfTorchInductor",
    "subtest",
    "xfailIfTorchDynamo",
]

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform == "darwin"
IS_LINUX = sys.platform.startswith("linux")
TEST_CUDA = False  # ember has no CUDA backend
TEST_WITH_TORCHDYNAMO = False  # no Dynamo: its skip decorators do nothing
TEST_WITH_CROSSREF = False
TEST_WITH_ROCM = False


def _no_op_decorator(*args: Any, **kwargs: Any) -> Any:
    """A skip decorator for a configuration ember never runs in: usable bare
    (``@skipIfTorchDynamo``) or called (``@skipIfTorchDynamo("reason")``), it returns the
    test unchanged."""
    if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], str):
        return args[0]
    return lambda fn: fn


skipIfTorchDynamo = _no_op_decorator
skipIfTorchInductor = _no_op_decorator
skipIfCrossRef = _no_op_decorator
xfailIfTorchDynamo = _no_op_decorator
skipIfNoDynamo = _no_op_decorator


@contextlib.contextmanager
def disable_gc() -> Iterator[None]:
    """The garbage collector off for the block (on again after, if it was on).

    >>> from ember.testing._internal.common_utils import disable_gc
    >>> with disable_gc():
    ...     import gc; gc.isenabled()
    False
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


# ---------------------------------------------------------------------- TestCase


def _dense(x: Any) -> Any:
    """``x`` with tensors of other layouts made dense, so values compare across layouts."""
    if isinstance(x, Tensor) and getattr(x, "layout", strided) is not strided:
        return x.to_dense()  # type: ignore[attr-defined]
    return x


def _comparable(x: Any, y: Any) -> tuple[Any, Any]:
    """A tensor compared with a number or a (nested) list becomes a comparison of tensors of
    the tensor's dtype, as PyTorch's ``assertEqual`` does."""
    x, y = _dense(x), _dense(y)
    if isinstance(x, Tensor) and not isinstance(y, Tensor) and _numeric(y):
        y = as_tensor(y, dtype=x.dtype)
    elif isinstance(y, Tensor) and not isinstance(x, Tensor) and _numeric(x):
        x = as_tensor(x, dtype=y.dtype)
    return x, y


def _numeric(v: Any) -> bool:
    if isinstance(v, (bool, int, float, complex)):
        return True
    if isinstance(v, (list, tuple)):
        return all(_numeric(e) for e in v)
    return False


class TestCase(_Base):  # type: ignore[misc, valid-type]
    """``unittest.TestCase`` with PyTorch's comparisons: ``assertEqual`` of tensors (any
    subclass, any layout; values within the dtype's tolerances), numbers and containers of
    them; ``assertExpectedInline`` from ``expecttest`` (``EXPECTTEST_ACCEPT=1`` rewrites the
    expected string in the test file)."""

    def assertEqual(  # noqa: N802 - unittest's name
        self,
        x: Any,
        y: Any,
        msg: Any = None,
        *,
        atol: float | None = None,
        rtol: float | None = None,
        equal_nan: bool = True,
        exact_dtype: bool = True,
        exact_device: bool = False,
        exact_layout: bool = False,
        **_: Any,
    ) -> None:
        """Fail unless ``x`` and ``y`` are equal (tensors and numbers: close)."""
        __tracebackhide__ = True
        x, y = _comparable(x, y)
        try:
            assert_close(
                x,
                y,
                rtol=rtol,
                atol=atol,
                equal_nan=equal_nan,
                check_dtype=exact_dtype,
                check_device=exact_device,
                check_layout=exact_layout,
                allow_subclasses=True,
                msg=msg,
            )
        except TypeError:  # not tensors nor numbers: unittest's comparison
            super().assertEqual(x, y, msg)

    def assertNotEqual(self, x: Any, y: Any, msg: Any = None, **kwargs: Any) -> None:  # noqa: N802
        """Fail if ``x`` and ``y`` are equal in ``assertEqual``'s sense."""
        try:
            self.assertEqual(x, y, **kwargs)
        except AssertionError:
            return
        raise self.failureException(msg or f"{x!r} == {y!r}")

    if _expecttest is None:  # pragma: no cover - without the test extra

        def assertExpectedInline(  # noqa: N802
            self, actual: str, expect: str, skip: int = 0
        ) -> None:
            """``actual == expect`` (rewriting the expectation needs ``expecttest``)."""
            self.assertMultiLineEqual(expect, actual)


def run_tests(argv: Sequence[str] | None = None) -> None:
    """Run the ``TestCase`` s of ``__main__`` (``if __name__ == "__main__": run_tests()``)."""
    unittest.main(module="__main__", argv=list(argv) if argv is not None else sys.argv)


# ---------------------------------------------------------------------- parametrize


class subtest:  # noqa: N801 - PyTorch's name
    """One parameter set of ``parametrize``, with its own name and decorators."""

    def __init__(
        self, arg_values: Any, name: str | None = None, decorators: Iterable[Any] | None = None
    ) -> None:
        self.arg_values = arg_values
        self.name = name
        self.decorators = list(decorators or [])


def _value_name(arg: str, value: Any, idx: int) -> str:
    """PyTorch's test-name part for one argument: a dtype's name (``float32``), ``x_1`` for
    a number or string, ``x0`` (the value's index) for anything else."""
    if isinstance(value, dtypes.dtype):
        return str(value).rpartition(".")[2]
    if isinstance(value, (int, float, str)):
        return f"{arg}_{str(value).replace('.', '_')}"
    return f"{arg}{idx}"


class parametrize:  # noqa: N801 - PyTorch's name
    """Run a test once per value of its argument(s) (``"x"`` or ``"x,y"``); stack several to
    take their product. ``instantiate_parametrized_tests`` makes the methods, named as
    PyTorch names them (``test_f_x_1``, or ``name_fn(*values)``).

    >>> from ember.testing._internal.common_utils import (
    ...     TestCase, parametrize, instantiate_parametrized_tests)
    >>> @instantiate_parametrized_tests
    ... class T(TestCase):
    ...     @parametrize("n", [1, 2])
    ...     def test_n(self, n):
    ...         self.assertEqual(ember.ones(n).sum(), n)
    >>> sorted(n for n in dir(T) if n.startswith("test_"))
    ['test_n_n_1', 'test_n_n_2']
    """

    def __init__(
        self, arg_str: str, arg_values: Iterable[Any], name_fn: Callable[..., str] | None = None
    ) -> None:
        self.arg_names = [a.strip() for a in arg_str.split(",") if a.strip()]
        self.arg_values = list(arg_values)
        self.name_fn = name_fn

    def _cases(self) -> list[tuple[str, dict[str, Any], list[Any]]]:
        """(name part, keyword arguments, decorators) per value."""
        out = []
        for idx, value in enumerate(self.arg_values):
            decorators: list[Any] = []
            name = None
            if isinstance(value, subtest):
                name, decorators, value = value.name, value.decorators, value.arg_values
            values = list(value) if len(self.arg_names) > 1 else [value]
            if len(values) != len(self.arg_names):
                raise ValueError(
                    f"parametrize: {len(self.arg_names)} argument names "
                    f"({', '.join(self.arg_names)}) but a value with {len(values)} items: "
                    f"{value!r}"
                )
            if name is None:
                if self.name_fn is not None:
                    name = self.name_fn(*values)
                else:
                    name = "_".join(
                        _value_name(a, v, idx) for a, v in zip(self.arg_names, values, strict=True)
                    )
            out.append((name, dict(zip(self.arg_names, values, strict=True)), decorators))
        return out

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__dict__.setdefault("_parametrize", []).insert(0, self)
        return fn


def instantiate_parametrized_tests(cls: type) -> type:
    """Replace each parametrized test of ``cls`` by one method per parameter set."""
    for attr in list(vars(cls)):
        fn = getattr(cls, attr)
        layers = getattr(fn, "_parametrize", None)
        if not attr.startswith("test") or not layers:
            continue
        delattr(cls, attr)
        for combo in itertools.product(*(layer._cases() for layer in layers)):
            name = "_".join([attr, *(part for part, _, _ in combo if part)])
            kwargs: dict[str, Any] = {}
            decorators: list[Any] = []
            for _, kw, decs in combo:
                kwargs.update(kw)
                decorators += decs
            test = _bind(fn, kwargs)
            for dec in decorators:
                test = dec(test)
            test.__name__ = test.__qualname__ = name
            if hasattr(cls, name):
                raise RuntimeError(f"parametrize: {cls.__name__}.{name} already exists")
            setattr(cls, name, test)
    return cls


def _bind(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Callable[..., Any]:
    def test(self: Any) -> Any:
        return fn(self, **kwargs)

    test.__doc__ = fn.__doc__
    return test
