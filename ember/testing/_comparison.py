"""``assert_close``: PyTorch's comparison of tensors, numbers and nested containers of them,
with its default tolerances and its failure messages.

# NOTE [assert_close pairs]
The inputs are walked together: sequences (not strings) item by item, mappings key by key.
Each leaf pair is one of: ``None`` with anything, two bools, two numbers (Python or NumPy),
or two tensor-likes (one an instance of the other's type, both convertible by
``as_tensor``); any other leaf pair is a ``TypeError``. A leaf that fails raises at once,
its message ending with the path to it (``The failure occurred for item [1]['a']``).
Values are compared after promoting both to a common dtype: close where equal, or both NaN
with ``equal_nan``, or ``|actual - expected| <= atol + rtol * |expected|`` with a finite
difference. The messages' numbers are computed with ember's own ops in the compared dtype,
so they read digit for digit as PyTorch's do.
"""

from __future__ import annotations

import cmath
import collections.abc
from collections.abc import Callable
from typing import Any

import numpy as np

import ember
from ember import dtypes

__all__ = ["assert_close", "default_tolerances"]

Message = str | Callable[[str], str] | None

#: (rtol, atol) by dtype; any other dtype is compared for equality
_PRECISIONS = {
    dtypes.float16: (1e-3, 1e-5),
    dtypes.float32: (1.3e-6, 1e-5),
    dtypes.float64: (1e-7, 1e-7),
    dtypes.complex64: (1.3e-6, 1e-5),
    dtypes.complex128: (1e-7, 1e-7),
}
#: the dtype whose tolerances a Python number gets
_NUMBER_DTYPES = {int: dtypes.int64, float: dtypes.float64, complex: dtypes.complex128}


class _Failure(Exception):
    """A comparison that failed: the exception type to raise, its message and the path."""

    def __init__(self, kind: type[Exception], msg: str, path: tuple[Any, ...] = ()) -> None:
        super().__init__(msg)
        self.kind, self.msg, self.path = kind, msg, path

    def to_error(self, msg: Message) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.path:
            text += f"\n\nThe failure occurred for item {''.join(str([p]) for p in self.path)}"
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """This kind of pair does not handle these inputs; try the next."""


def default_tolerances(*inputs: Any) -> tuple[float, float]:
    """The loosest (rtol, atol) of the dtypes of ``inputs`` (tensors or dtypes).

    >>> from ember.testing._comparison import default_tolerances
    >>> default_tolerances(ember.float32, ember.float64)
    (1.3e-06, 1e-05)
    """
    found = []
    for x in inputs:
        if isinstance(x, ember.Tensor):
            found.append(x.dtype)
        elif isinstance(x, dtypes.dtype):
            found.append(x)
        else:
            raise TypeError(f"Expected a ember.Tensor or a ember.dtype, but got {type(x)} instead.")
    rtols, atols = zip(*(_PRECISIONS.get(d, (0.0, 0.0)) for d in found), strict=True)
    return max(rtols), max(atols)


def _tolerances(
    *inputs: Any, rtol: float | None, atol: float | None, path: tuple[Any, ...]
) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise _Failure(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}.",
            path,
        )
    if rtol is not None and atol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


# --------------------------------------------------------------------------- messages


def _mismatch_message(
    what: str,
    extra: str,
    abs_diff: Any,
    abs_idx: tuple[int, ...] | None,
    rel_diff: Any,
    rel_idx: tuple[int, ...] | None,
    rtol: float,
    atol: float,
) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind: str, diff: Any, idx: tuple[int, ...] | None, tol: float) -> str:
        text = (
            f"{kind.title()} difference: {diff}"
            if idx is None
            else f"Greatest {kind} difference: {diff} at index {idx}"
        )
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    head = f"{what} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    body = line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)
    return (head + body).strip()


def _scalar_message(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _mismatch_message("Scalars", extra, abs_diff, None, rel_diff, None, rtol, atol)


def _tensor_message(
    actual: ember.Tensor, expected: ember.Tensor, matches: ember.Tensor, rtol: float, atol: float
) -> str:
    total = matches.numel()
    mismatched = total - int(matches.sum().item())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not (actual.dtype.is_floating_point or actual.dtype.is_complex):
        a, e = a.to(ember.int64), e.to(ember.int64)
    abs_diff = ember.abs(a - e).masked_fill(m, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_diff = (abs_diff / ember.abs(e)).masked_fill(m, 0)
    abs_max, abs_at = ember.max(abs_diff, 0)
    rel_max, rel_at = ember.max(rel_diff, 0)

    def unravel(flat: ember.Tensor) -> tuple[int, ...]:
        return tuple(int(i) for i in np.unravel_index(int(flat.item()), tuple(matches.shape)))

    return _mismatch_message(
        "Tensor-likes",
        extra,
        abs_max.item(),
        unravel(abs_at),
        rel_max.item(),
        unravel(rel_at),
        rtol,
        atol,
    )


# --------------------------------------------------------------------------- leaf pairs


def _compare_none(actual: Any, expected: Any, **options: Any) -> None:
    if not (actual is None or expected is None):
        raise _Unsupported
    if not (actual is None and expected is None):
        raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}")


def _compare_bools(actual: Any, expected: Any, **options: Any) -> None:
    kinds = (bool, np.bool_)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _Unsupported
    a, e = bool(actual), bool(expected)
    if a is not e:
        raise _Failure(AssertionError, f"Booleans mismatch: {a} is not {e}")


def _compare_numbers(
    actual: Any,
    expected: Any,
    *,
    path: tuple[Any, ...],
    rtol: float | None,
    atol: float | None,
    equal_nan: bool,
    check_dtype: bool,
    **options: Any,
) -> None:
    kinds = (int, float, complex, np.number)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _Unsupported
    a, e = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances(
        *(_NUMBER_DTYPES[type(x)] for x in (a, e)), rtol=rtol, atol=atol, path=path
    )
    if check_dtype and type(a) is not type(e):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.", path)
    if a == e or (equal_nan and cmath.isnan(a) and cmath.isnan(e)):
        return
    diff = abs(a - e)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(e):
        return
    raise _Failure(AssertionError, _scalar_message(a, e, rtol, atol))


def _as_tensor(x: Any) -> ember.Tensor:
    if isinstance(x, ember.Tensor):
        return x
    try:
        return ember.as_tensor(x)
    except Exception as error:
        raise _Unsupported from error


def _isclose(
    a: ember.Tensor, e: ember.Tensor, rtol: float, atol: float, equal_nan: bool
) -> ember.Tensor:
    """``torch.isclose``'s rule: equal, or both NaN (``equal_nan``), or a finite difference
    within ``atol + rtol * |e|``."""
    close = a == e
    if a.dtype is dtypes.bool_:
        return close
    if equal_nan:
        close = close | (ember.isnan(a) & ember.isnan(e))
    if (a.dtype.is_floating_point or a.dtype.is_complex) and (rtol or atol):
        with np.errstate(invalid="ignore", over="ignore"):
            error = ember.abs(a - e)
            close = close | (ember.isfinite(error) & (error <= atol + rtol * ember.abs(e)))
    return close


def _compare_tensors(
    actual: Any,
    expected: Any,
    *,
    path: tuple[Any, ...],
    allow_subclasses: bool,
    rtol: float | None,
    atol: float | None,
    equal_nan: bool,
    check_device: bool,
    check_dtype: bool,
    check_layout: bool,
    check_stride: bool,
) -> None:
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    a, e = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = _tolerances(a, e, rtol=rtol, atol=atol, path=path)

    def differ(name: str, x: Any, y: Any) -> _Failure:
        return _Failure(
            AssertionError, f"The values for attribute '{name}' do not match: {x} != {y}."
        )

    if a.shape != e.shape:
        raise differ("shape", a.shape, e.shape)
    if check_stride and a.stride() != e.stride():
        raise differ("stride()", a.stride(), e.stride())
    if check_device and a.device != e.device:
        raise differ("device", a.device, e.device)
    if check_dtype and a.dtype is not e.dtype:
        raise differ("dtype", a.dtype, e.dtype)
    if "meta" in (a.device.type, e.device.type):
        return  # no values to compare
    with ember.no_grad():
        a, e = a.detach(), e.detach()
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype is not e.dtype:
            common = ember.promote_types(a.dtype, e.dtype)
            a, e = a.to(common), e.to(common)
        matches = _isclose(a, e, rtol, atol, equal_nan)
        if bool(matches.all()):
            return
        if a.ndim == 0:
            msg = _scalar_message(a.item(), e.item(), rtol, atol)
        else:
            msg = _tensor_message(a, e, matches, rtol, atol)
    raise _Failure(AssertionError, msg)


_LEAF_PAIRS = (_compare_none, _compare_bools, _compare_numbers, _compare_tensors)


def _is_sequence(x: Any) -> bool:
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _walk(actual: Any, expected: Any, path: tuple[Any, ...], options: dict[str, Any]) -> None:
    """Compare ``actual`` with ``expected`` (NOTE [assert_close pairs]); raise ``_Failure``."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Failure(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                path,
            )
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _walk(a, e, (*path, i), options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(
        expected, collections.abc.Mapping
    ):
        have, want = set(actual.keys()), set(expected.keys())
        if have != want:
            raise _Failure(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(want - have)}\n"
                f"Additional keys in the actual mapping: {sorted(have - want)}",
                path,
            )
        try:
            keys: Any = sorted(have)
        except TypeError:
            keys = have
        for key in keys:
            _walk(actual[key], expected[key], (*path, key), options)
        return
    for compare in _LEAF_PAIRS:
        try:
            compare(actual, expected, path=path, **options)
        except _Unsupported:
            continue
        except _Failure as failure:
            failure.path = failure.path or path
            raise
        return
    raise _Failure(
        TypeError,
        "No comparison pair was able to handle inputs of type "
        f"{type(actual)} and {type(expected)}.",
        path,
    )


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: Message = None,
) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` (tensors, numbers, or nested
    sequences and mappings of them) are close: same shape, device and dtype, and values within
    the dtype's default tolerances or the given ``rtol`` and ``atol``.

    >>> ember.testing.assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-7]))
    """
    __tracebackhide__ = True
    options = {
        "allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol,
        "equal_nan": equal_nan, "check_device": check_device, "check_dtype": check_dtype,
        "check_layout": check_layout, "check_stride": check_stride,
    }  # fmt: skip
    try:
        _walk(actual, expected, (), options)
    except _Failure as failure:
        raise failure.to_error(msg) from None
