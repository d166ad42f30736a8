"""Printing tensors exactly as PyTorch does, with ``ember.`` where PyTorch writes ``torch.``.

# NOTE [tensor printing]
One ``_Formatter`` per tensor (two for complex: real and imaginary parts) looks at every
finite nonzero value that will be shown and picks a mode once:

- scientific (``1.0000e+08``), when the largest/smallest magnitude ratio exceeds 1000, the
  largest exceeds 1e8, or the smallest is below 1e-4 (or as ``sci_mode`` forces);
- else integer mode, when every such float is a whole number: ``1.``, ``-0.``, ``nan``;
- else fixed, ``precision`` decimals.

Every element is then right-aligned to the widest one. Rows wrap at ``linewidth``; tensors
with more than ``threshold`` elements show ``edgeitems`` items at each end of every
dimension around ``...``. float16 and bfloat16 values print through float32, as in PyTorch. Suffixes
(``device=``, ``size=``, ``dtype=``, ``grad_fn=``/``requires_grad=``) follow the contents and
wrap to a new line when they would pass ``linewidth``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ember import dtypes
from ember._layout import sparse_coo
from ember._tensor import Tensor
from ember.dispatch import marks

__all__ = ["set_printoptions", "get_printoptions", "printoptions"]


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print (PyTorch's options; ``sci_mode=None`` means automatic).

    >>> ember.set_printoptions(precision=2); ember.tensor([1.2345])
    tensor([1.23])
    >>> ember.set_printoptions(profile="default")  # back to PyTorch's defaults
    >>> ember.tensor([1.2345])
    tensor([1.2345])
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions: unknown profile {profile!r}; use one of {list(_PROFILES)}"
            )
        p = _PROFILES[profile]
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = p
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode  # as in PyTorch: omitting it returns to automatic


def get_printoptions() -> dict[str, Any]:
    """The current print options as a dict (keywords of ``set_printoptions``).

    >>> ember._tensor_str.get_printoptions()["precision"]
    4
    """
    return dict(vars(PRINT_OPTS))


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Print options for the duration of a ``with`` block.

    >>> with ember._tensor_str.printoptions(precision=1): print(ember.tensor([1.25]))
    tensor([1.2])
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# --------------------------------------------------------------------------- formatting


class _Formatter:
    """Picks integer/scientific/fixed mode and the column width for the values shown."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            if flat.size:
                self.max_width = max(len(str(v)) for v in _unique(flat).tolist())
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if not vals.size:
            return  # nothing to measure: integer mode, width 1, not scientific
        mags = np.abs(vals)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        auto = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        self.sci_mode = auto if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
        prec = PRINT_OPTS.precision
        shown = _unique(vals).tolist()
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{prec}e}") for v in shown)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in shown)
        else:
            self.max_width = max(len(f"{v:.{prec}f}") for v in shown)

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _unique(flat: np.ndarray) -> np.ndarray:
    """Distinct values (NaN-safe), so widths are measured once per value."""
    return np.unique(flat) if flat.size > 64 else flat


def _summarized(a: np.ndarray) -> np.ndarray:
    """Only the values that will be shown: ``edgeitems`` at each end of every dimension."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if not e:  # PyTorch keeps every value of a 1-d tensor here (its ``self[-0:]``)
        return a if a.ndim == 1 else a[tuple(slice(0, 0) for _ in a.shape)]
    for dim, n in enumerate(a.shape):
        if n > 2 * e:
            idx = np.r_[0:e, n - e : n]
            a = np.take(a, idx, axis=dim)
    return a


def _scalar_str(value: Any, f1: _Formatter, f2: _Formatter | None) -> str:
    if f2 is None:
        return f1.format(value)
    real = f1.format(value.real)
    imag = (f2.format(value.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector_str(
    a: np.ndarray, indent: int, summarize: bool, f1: _Formatter, f2: _Formatter | None
) -> str:
    element_length = f1.width() + 2
    if f2 is not None:
        element_length += f2.width() + 1
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        head = [_scalar_str(v, f1, f2) for v in a[:e].tolist()]
        tail = [_scalar_str(v, f1, f2) for v in a[-e:].tolist()]
        data = [*head, " ...", *tail]
    else:
        data = [_scalar_str(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(
    a: np.ndarray, indent: int, summarize: bool, f1: _Formatter, f2: _Formatter | None
) -> str:
    if a.ndim == 0:
        return _scalar_str(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * e:
        rows = [*range(e), None, *range(n - e, n)]
    else:
        rows = list(range(n))
    slices = [
        "..." if i is None else _tensor_str_with_formatter(a[i], indent + 1, summarize, f1, f2)
        for i in rows
    ]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(a: np.ndarray, indent: int) -> str:
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    if a.dtype == np.float16 or a.dtype.kind == "V":  # float16, bfloat16 (ml_dtypes)
        a = a.astype(np.float32)
    shown = _summarized(a) if summarize else a
    if a.dtype.kind == "c":
        f1, f2 = _Formatter(shown.real), _Formatter(shown.imag)
        return _tensor_str_with_formatter(a, indent, summarize, f1, f2)
    return _tensor_str_with_formatter(a, indent, summarize, _Formatter(shown), None)


def _add_suffixes(
    tensor_str: str, suffixes: list[str], indent: int, force_newline: bool = False
) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _grad_fn_name(grad_fn: Any) -> str:
    name = getattr(grad_fn, "name", None)
    if callable(name):
        return str(name()).rsplit("::", 1)[-1]
    return type(grad_fn).__name__


def _wrapper_values(t: Any) -> np.ndarray:
    """The values of a wrapper subclass (no storage of its own), through dispatched ops as
    PyTorch's printing gets them: its handler answers ``reshape``, ``select`` and
    ``_local_scalar_dense`` (``item()``). Only the values that will be shown are asked for
    (the edges of a summarized tensor); the others stay zero, which no format depends on."""
    shape = tuple(t.shape)
    n = math.prod(shape)
    values = np.zeros(n, dtype=t._edata.dtype)
    index = np.arange(n).reshape(shape)
    if n > PRINT_OPTS.threshold:
        index = _summarized(index)
    flat = t.reshape(-1)
    for i in index.reshape(-1).tolist():
        values[i] = flat[i].item()
    return values.reshape(shape)


def _sparse_body(t: Any, indent: int, suffixes: list[str]) -> str:
    """PyTorch's printing of a sparse COO tensor: its indices and values, then size, nnz,
    dtype (when not a default one) and layout among the suffixes."""
    c = t._edata
    suffixes.append(f"size={tuple(c.shape)}")
    suffixes.append(f"nnz={c.nnz}")
    d = t.dtype
    default = dtypes.get_default_dtype()
    complex_default = dtypes.complex128 if default is dtypes.float64 else dtypes.complex64
    if d not in (default, complex_default, dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={d!r}")
    suffixes.append(f"layout={t.layout!r}")
    parts = []
    for name, arr in (("indices", c.indices), ("values", c.values)):
        prefix = f"{name}=tensor("
        text = _tensor_str(arr, indent + len(prefix))
        if arr.size == 0:
            text += f", size={tuple(arr.shape)}"
        parts.append(prefix + text + ")")
    return parts[0] + ",\n" + " " * indent + parts[1]


def tensor_repr(t: Any, *, tensor_contents: str | None = None) -> str:
    """``repr(t)`` as PyTorch prints it (see NOTE [tensor printing]).

    >>> from ember._tensor_str import tensor_repr
    >>> tensor_repr(ember.tensor([1, 2], dtype=ember.int32))
    'tensor([1, 2], dtype=ember.int32)'
    """
    plain = type(t) is Tensor or type(t).__name__ == "Parameter"
    prefix = "tensor(" if plain else f"{type(t).__name__}("
    indent = len(prefix)
    suffixes: list[str] = []
    dev = t.device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    data = t._edata
    d = t.dtype
    default = dtypes.get_default_dtype()
    if getattr(data, "layout", None) is sparse_coo:
        body = _sparse_body(t, indent, suffixes)
    elif t.is_meta or (type(data) is not np.ndarray and dev.type == "meta"):
        suffixes.append(f"size={tuple(t.shape)}")
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        body = "..." if tensor_contents is None else tensor_contents
    elif tensor_contents is not None and type(data) is not np.ndarray:
        # a wrapper subclass (no storage) printing what it wraps
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        body = tensor_contents
    else:
        if type(data) is not np.ndarray and marks.has_python_key(t):
            data = _wrapper_values(t)
        elif type(data) is not np.ndarray:
            data = t.to("cpu")._edata  # lazy tensors materialize to print
        if data.size == 0:
            if data.ndim != 1:
                suffixes.append(f"size={tuple(data.shape)}")
            if d is not default:
                suffixes.append(f"dtype={d!r}")
            body = "[]"
        else:
            if not PRINT_OPTS.edgeitems:
                suffixes.append(f"size={tuple(data.shape)}")
            complex_default = dtypes.complex128 if default is dtypes.float64 else dtypes.complex64
            if d not in (default, complex_default, dtypes.int64, dtypes.bool_):
                suffixes.append(f"dtype={d!r}")
            body = _tensor_str(data, indent)
        if tensor_contents is not None:
            body = tensor_contents
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    sparse = getattr(data, "layout", None) is sparse_coo
    return _add_suffixes(prefix + body, suffixes, indent, force_newline=sparse)


_str = tensor_repr  # PyTorch's name (torch._tensor_str._str)
