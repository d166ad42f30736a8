"""``uint16``, ``uint32`` and ``uint64``, PyTorch 2.13's shell dtypes (NOTE [shell unsigned
dtypes] in ``ember/dtypes.py``): their promotion table, and op by op what computes in them
and what refuses them, against PyTorch."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch

SHELL = ["uint16", "uint32", "uint64"]
OTHERS = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128", *SHELL]  # fmt: skip


def _promote(lib: Any, a: str, b: str) -> str:
    try:
        return str(lib.promote_types(getattr(lib, a), getattr(lib, b))).split(".")[-1]
    except RuntimeError as e:
        assert "Promotion for uint16, uint32, uint64 types is not supported" in str(e)
        return "refused"


@requires_torch
@pytest.mark.parametrize("a", SHELL)
def test_promotion_table_is_pytorchs(a: str) -> None:
    for b in OTHERS:
        assert _promote(ember, a, b) == _promote(ember, b, a) == _promote(torch, a, b), (a, b)


def test_dtype_attributes() -> None:
    for name, bits in zip(SHELL, (16, 32, 64), strict=True):
        d = getattr(ember, name)
        assert repr(d) == f"ember.{name}" and not d.is_signed and not d.is_floating_point
        assert d.itemsize == bits // 8 and ember.iinfo(d).max == 2**bits - 1
        assert ember.iinfo(d).min == 0 and ember.iinfo(d).bits == bits
        arr = np.arange(3, dtype=name)
        t = ember.from_numpy(arr)
        assert t.dtype is d and t.numpy().dtype == arr.dtype and np.shares_memory(t.numpy(), arr)


#: one call per case on a library ``L``, with ``x`` = [3, 1, 2], ``m`` a 2x2 matrix, ``i``
#: indices [0, 2], ``c`` a bool mask, all of the dtype under test (but ``i`` and ``c``)
CASES: dict[str, Callable[..., Any]] = {
    # made, copied, converted, compared, printed: computed as PyTorch computes them
    "tensor": lambda L, d, x, m, i, c: L.tensor([1, 2, 3], dtype=d),
    "zeros": lambda L, d, x, m, i, c: L.zeros(2, dtype=d),
    "ones": lambda L, d, x, m, i, c: L.ones(2, dtype=d),
    "full": lambda L, d, x, m, i, c: L.full((2,), 7, dtype=d),
    "full_like": lambda L, d, x, m, i, c: L.full_like(x, 4),
    "to": lambda L, d, x, m, i, c: L.tensor([1, 2]).to(d),
    "to float": lambda L, d, x, m, i, c: x.to(L.float32),
    "copy_": lambda L, d, x, m, i, c: L.zeros(2, dtype=d).copy_(L.tensor([3.0, 4.0])),
    "fill_": lambda L, d, x, m, i, c: x.clone().fill_(5),
    "eq": lambda L, d, x, m, i, c: x == L.tensor([3, 2, 2], dtype=d),
    "eq scalar": lambda L, d, x, m, i, c: x == 2,
    "ne": lambda L, d, x, m, i, c: x != 2,
    "mul": lambda L, d, x, m, i, c: x * x,
    "mul scalar": lambda L, d, x, m, i, c: x * 2,
    "div": lambda L, d, x, m, i, c: x / 2,
    "and": lambda L, d, x, m, i, c: x & 1,
    "or": lambda L, d, x, m, i, c: x | x,
    "xor": lambda L, d, x, m, i, c: x ^ 3,
    "sqrt": lambda L, d, x, m, i, c: x.sqrt(),
    "floor": lambda L, d, x, m, i, c: x.floor(),
    "isnan": lambda L, d, x, m, i, c: x.isnan(),
    "where": lambda L, d, x, m, i, c: L.where(c, x, 0),
    "sum": lambda L, d, x, m, i, c: x.sum(),
    "sum dim": lambda L, d, x, m, i, c: m.sum(0),
    "prod": lambda L, d, x, m, i, c: x.prod(),
    "cumsum": lambda L, d, x, m, i, c: x.cumsum(0),
    "sort": lambda L, d, x, m, i, c: x.sort().values,
    "argsort": lambda L, d, x, m, i, c: x.argsort(),
    "unique": lambda L, d, x, m, i, c: x.unique(),
    "index": lambda L, d, x, m, i, c: x[1],
    "mask": lambda L, d, x, m, i, c: x[c],
    "cat": lambda L, d, x, m, i, c: L.cat([x, x]),
    "stack": lambda L, d, x, m, i, c: L.stack([x, x]),
    "transpose": lambda L, d, x, m, i, c: m.t().contiguous(),
    "roll": lambda L, d, x, m, i, c: x.roll(1),
    "pad": lambda L, d, x, m, i, c: L.nn.functional.pad(x, (1, 1)),
    "any": lambda L, d, x, m, i, c: x.any(),
    "equal": lambda L, d, x, m, i, c: L.equal(x, x),
    "add float": lambda L, d, x, m, i, c: x + L.tensor([0.5, 0.5, 0.5]),
    # refused, as PyTorch refuses them
    "add": lambda L, d, x, m, i, c: x + x,
    "sub scalar": lambda L, d, x, m, i, c: x - 1,
    "lt": lambda L, d, x, m, i, c: x < 2,
    "neg": lambda L, d, x, m, i, c: -x,
    "abs": lambda L, d, x, m, i, c: x.abs(),
    "invert": lambda L, d, x, m, i, c: ~x,
    "shift": lambda L, d, x, m, i, c: x << 1,
    "pow": lambda L, d, x, m, i, c: x**2,
    "remainder": lambda L, d, x, m, i, c: x % 2,
    "clamp": lambda L, d, x, m, i, c: x.clamp(1, 2),
    "maximum": lambda L, d, x, m, i, c: L.maximum(x, x),
    "round decimals": lambda L, d, x, m, i, c: x.round(decimals=1),
    "arange": lambda L, d, x, m, i, c: L.arange(3, dtype=d),
    "eye": lambda L, d, x, m, i, c: L.eye(2, dtype=d),
    "max": lambda L, d, x, m, i, c: x.max(),
    "max dim": lambda L, d, x, m, i, c: x.max(0),
    "argmax": lambda L, d, x, m, i, c: x.argmax(),
    "amin": lambda L, d, x, m, i, c: x.amin(),
    "topk": lambda L, d, x, m, i, c: x.topk(1),
    "median": lambda L, d, x, m, i, c: x.median(),
    "mm": lambda L, d, x, m, i, c: m @ m,
    "bmm": lambda L, d, x, m, i, c: L.bmm(m[None], m[None]),
    "mv": lambda L, d, x, m, i, c: L.mv(m, m[0]),
    "flip": lambda L, d, x, m, i, c: x.flip(0),
    "nonzero": lambda L, d, x, m, i, c: x.nonzero(),
    "tril": lambda L, d, x, m, i, c: m.tril(),
    "masked_fill": lambda L, d, x, m, i, c: x.masked_fill(c, 0),
    "setitem mask": lambda L, d, x, m, i, c: x.clone().__setitem__(c, 0),
    "index_put_": lambda L, d, x, m, i, c: x.clone().index_put_((i,), x[:2]),
    "gather": lambda L, d, x, m, i, c: x.gather(0, i),
    "scatter_": lambda L, d, x, m, i, c: x.clone().scatter_(0, i, x[:2]),
    "index_add_": lambda L, d, x, m, i, c: x.clone().index_add_(0, i, x[:2]),
    "take": lambda L, d, x, m, i, c: x.take(i),
    "bincount": lambda L, d, x, m, i, c: x.bincount(),
    "trace": lambda L, d, x, m, i, c: m.trace(),
    "isin": lambda L, d, x, m, i, c: L.isin(x, x),
    "mean": lambda L, d, x, m, i, c: x.mean(),
    "std": lambda L, d, x, m, i, c: x.std(),
    "add int64": lambda L, d, x, m, i, c: x + L.tensor([1, 1, 1]),
    # what depends on the call (NOTE [flip of rows], REFUSED_WHEN in shell_dtypes.py)
    "flip rows": lambda L, d, x, m, i, c: m.flip(0),
    "flip cols": lambda L, d, x, m, i, c: m.flip(1),
    "flip both": lambda L, d, x, m, i, c: m.flip(0, 1),
    "flip rows of t()": lambda L, d, x, m, i, c: m.t().flip(0),
    "flip cols of t()": lambda L, d, x, m, i, c: m.t().flip(1),
    "flip 3d middle": lambda L, d, x, m, i, c: L.stack([m, m]).flip(1),
    "flip 3d outer": lambda L, d, x, m, i, c: L.stack([m, m]).flip(0),
    "flip size 1": lambda L, d, x, m, i, c: m[:1].flip(0),
    "flip (2, 1)": lambda L, d, x, m, i, c: m[:, :1].flip(0),
    "flip expanded": lambda L, d, x, m, i, c: x[:1].expand(2, 3).flip(0),
    "flipud": lambda L, d, x, m, i, c: m.flipud(),
    "fliplr": lambda L, d, x, m, i, c: m.fliplr(),
    "rot90": lambda L, d, x, m, i, c: m.rot90(),
    "rot90 k=2": lambda L, d, x, m, i, c: m.rot90(2),
    "rot90 k=3": lambda L, d, x, m, i, c: m.rot90(3),
    "rot90 k=0": lambda L, d, x, m, i, c: m.rot90(0),
    "index_select 1d": lambda L, d, x, m, i, c: x.index_select(0, i),
    "index_select 2d": lambda L, d, x, m, i, c: m.index_select(0, i[:1]),
    "index_select cols": lambda L, d, x, m, i, c: m.index_select(1, i[:1]),
    "embedding": lambda L, d, x, m, i, c: L.nn.functional.embedding(i[:1], m),
    "take empty": lambda L, d, x, m, i, c: x.take(i[:0]),
    "gather empty": lambda L, d, x, m, i, c: x.gather(0, i[:0]),
    "scatter_add": lambda L, d, x, m, i, c: x.scatter_add(0, i, x[:2]),
    "scatter_add empty": lambda L, d, x, m, i, c: x.scatter_add(0, i[:0], x[:0]),
    "scatter reduce": lambda L, d, x, m, i, c: x.scatter(0, i, x[:2], reduce="add"),
    "scatter value reduce": lambda L, d, x, m, i, c: x.scatter(0, i, 2, reduce="multiply"),
    "scatter_reduce sum": lambda L, d, x, m, i, c: x.scatter_reduce(0, i, x[:2], "sum"),
    "scatter_reduce amax": lambda L, d, x, m, i, c: x.scatter_reduce(0, i, x[:2], "amax"),
    "scatter_reduce mean": lambda L, d, x, m, i, c: x.scatter_reduce(0, i, x[:2], "mean"),
    "scatter_reduce no self": lambda L, d, x, m, i, c: x.scatter_reduce(
        0, i, x[:2], "prod", include_self=False
    ),
    "index_reduce prod": lambda L, d, x, m, i, c: x.index_reduce(0, i, x[:2], "prod"),
    "index_reduce amax": lambda L, d, x, m, i, c: x.index_reduce(0, i, x[:2], "amax"),
    "index_reduce mean": lambda L, d, x, m, i, c: x.index_reduce(0, i, x[:2], "mean"),
    "index_reduce no self": lambda L, d, x, m, i, c: x.index_reduce(
        0, i, x[:2], "prod", include_self=False
    ),
    "put_": lambda L, d, x, m, i, c: x.clone().put_(i, x[:2]),
    "put_ empty": lambda L, d, x, m, i, c: x.clone().put_(i[:0], x[:0]),
    "mode": lambda L, d, x, m, i, c: x.mode(),
    "searchsorted": lambda L, d, x, m, i, c: L.searchsorted(x.sort().values, x),
    "searchsorted float": lambda L, d, x, m, i, c: L.searchsorted(x.sort().values.float(), x),
    "searchsorted in float": lambda L, d, x, m, i, c: L.searchsorted(x.sort().values, x.float()),
    "searchsorted scalar": lambda L, d, x, m, i, c: L.searchsorted(x.sort().values, 2),
    "bucketize": lambda L, d, x, m, i, c: L.bucketize(x, x.sort().values),
    "bucketize float": lambda L, d, x, m, i, c: L.bucketize(x, x.sort().values.float()),
    "bucketize scalar": lambda L, d, x, m, i, c: L.bucketize(2, x.sort().values),
    "histc": lambda L, d, x, m, i, c: x.histc(),
    "histc range": lambda L, d, x, m, i, c: x.histc(4, 0, 4),
    "dot": lambda L, d, x, m, i, c: L.dot(x, x),
    "vdot": lambda L, d, x, m, i, c: L.vdot(x, x),
    "matmul 1d": lambda L, d, x, m, i, c: x[:2] @ m,
    "clone": lambda L, d, x, m, i, c: m.t().clone(),
    "copy_ int64": lambda L, d, x, m, i, c: L.zeros(3, dtype=d).copy_(L.tensor([1, 2, 3])),
}


def _kernel(e: Exception) -> str | None:
    """The kernel a refusal names (``"flip_cpu" not implemented``), if it names one."""
    found = re.match(r'"(\w+)" not implemented', str(e))
    return found.group(1) if found else None


def _run(lib: Any, name: str, case: str) -> tuple[str, Any]:
    d = getattr(lib, name)
    x = lib.tensor([3, 1, 2], dtype=d)
    m = lib.tensor([[1, 2], [3, 4]], dtype=d)
    i, c = lib.tensor([0, 2]), lib.tensor([True, False, True])
    try:
        with warnings.catch_warnings():  # (scatter's reduce=, index_reduce: deprecated, beta)
            warnings.simplefilter("ignore", UserWarning)
            out = CASES[case](lib, d, x, m, i, c)
    except (NotImplementedError, RuntimeError) as e:
        if lib is ember and case != "std":  # (std's message is PyTorch's, naming no dtype)
            assert f"UInt{name[4:]}" in str(e), e  # ember's errors name the dtype
        return type(e).__name__, _kernel(e)
    outs = out if isinstance(out, tuple) else (out,)
    return "ok", [
        (o.tolist(), str(o.dtype).split(".")[-1]) if hasattr(o, "dtype") else o for o in outs
    ]


@requires_torch
@pytest.mark.parametrize("name", SHELL)
@pytest.mark.parametrize("case", list(CASES))
def test_op_computes_or_refuses_as_pytorch(case: str, name: str) -> None:
    got, want = _run(ember, name, case), _run(torch, name, case)
    if got[0] != "ok" and got[1] is None:  # (ember's pointwise refusals name the op instead)
        want = (want[0], None)
    assert got == want


def test_refusals_name_the_op_and_the_dtype() -> None:
    x = ember.tensor([1, 2], dtype=ember.uint32)
    with pytest.raises(NotImplementedError, match="add.Tensor: not implemented for 'UInt32'"):
        x + x
    with pytest.raises(NotImplementedError, match="\"flip_cpu\" not implemented for 'UInt32'"):
        x.flip(0)
    with pytest.raises(NotImplementedError, match='"addmm_impl_cpu_" not implemented'):
        x.reshape(2, 1) @ x.reshape(1, 2)
    with pytest.raises(RuntimeError, match="attempted to promote UInt32 and Long"):
        x * ember.tensor([1, 2])


#: the common pointwise and reduction ops, each called as ``x.<name>(*args)``
COMMON = {
    "add": (2,), "sub": (1,), "mul": (2,), "div": (2,), "remainder": (2,), "fmod": (2,),
    "pow": (2,), "neg": (), "abs": (), "sign": (), "exp": (), "log": (), "sqrt": (),
    "sin": (), "tanh": (), "sigmoid": (), "floor": (), "ceil": (), "trunc": (), "round": (),
    "clamp": (0, 2), "maximum": None, "minimum": None, "lt": (2,), "le": (2,), "gt": (2,),
    "ge": (2,), "eq": (2,), "ne": (2,), "bitwise_not": (), "bitwise_and": (1,),
    "logical_not": (), "logical_and": None, "isfinite": (), "reciprocal": (),
    "square": (), "sum": (), "prod": (), "cumsum": (0,), "cumprod": (0,), "mean": (),
    "amax": (), "amin": (), "max": (), "min": (), "argmax": (), "argmin": (), "all": (),
    "any": (), "std": (), "var": (), "nansum": (), "logsumexp": (0,), "norm": (),
    "unique": (), "sort": (), "median": (), "msort": (),
}  # fmt: skip


def _refuses(lib: Any, name: str, op: str) -> bool:
    x = lib.tensor([3, 1, 2], dtype=getattr(lib, name))
    args = COMMON[op]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(x, op)(*(args if args is not None else (x,)))
    except (NotImplementedError, RuntimeError):
        return True
    return False


@requires_torch
@pytest.mark.parametrize("name", SHELL)
def test_common_ops_refuse_exactly_where_pytorch_does(name: str) -> None:
    """Over the common pointwise and reduction ops: ember refuses a shell dtype iff
    PyTorch does (ember's pointwise messages name the op, PyTorch's its kernel:
    docs/fidelity.md)."""
    differ = [op for op in COMMON if _refuses(ember, name, op) != _refuses(torch, name, op)]
    assert not differ, f"{name}: ember and PyTorch disagree on {differ}"
