"""``ember.testing``: ``assert_close`` raises what ``torch.testing.assert_close`` raises, with
the same message (library names aside), and ``make_tensor`` builds what PyTorch's builds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.ops.native import copies

from .conftest import requires_torch, torch

pytestmark = requires_torch

NAN, INF = float("nan"), float("inf")

# each: a call of assert_close, as a function of the library
CASES: dict[str, Callable[[Any], Any]] = {
    "float32 close within default tolerances": lambda X: X.testing.assert_close(
        X.tensor([1.0, 2.0]), X.tensor([1.0, 2.0 + 1e-6])
    ),
    "float32 mismatch": lambda X: X.testing.assert_close(
        X.tensor([1.0, 2.0, 3.0]), X.tensor([1.0, 2.5, 3.1])
    ),
    "2-D mismatch index": lambda X: X.testing.assert_close(
        X.tensor([[1.0, 2.0], [3.0, 4.0]]), X.tensor([[1.0, 2.0], [3.0, 5.0]])
    ),
    "non-contiguous view": lambda X: X.testing.assert_close(
        X.tensor([1.0, 2.0, 3.0, 4.0]).reshape(2, 2)[:, :1], X.tensor([[1.0], [3.5]])
    ),
    "int64 not equal": lambda X: X.testing.assert_close(X.tensor([1, 2, 3]), X.tensor([1, 5, 7])),
    "int64 ties pick the first": lambda X: X.testing.assert_close(
        X.tensor([1, 2, 3]), X.tensor([2, 3, 4])
    ),
    "uint8 differences in int64": lambda X: X.testing.assert_close(
        X.tensor([1, 2], dtype=X.uint8), X.tensor([3, 0], dtype=X.uint8)
    ),
    "bool": lambda X: X.testing.assert_close(X.tensor([True]), X.tensor([False])),
    "complex": lambda X: X.testing.assert_close(X.tensor([1 + 1j]), X.tensor([1 + 2j])),
    "float16 default tolerances pass": lambda X: X.testing.assert_close(
        X.tensor([1.0, 2.0], dtype=X.float16), X.tensor([1.001, 2.0], dtype=X.float16)
    ),
    "float16 default tolerances fail": lambda X: X.testing.assert_close(
        X.tensor([1.0, 2.0], dtype=X.float16), X.tensor([1.01, 2.0], dtype=X.float16)
    ),
    "float64 tolerances": lambda X: X.testing.assert_close(
        X.tensor([1.0], dtype=X.float64), X.tensor([1.0 + 1e-6], dtype=X.float64)
    ),
    "dtype mismatch": lambda X: X.testing.assert_close(
        X.tensor([1.0]), X.tensor([1.0], dtype=X.float64)
    ),
    "check_dtype=False promotes": lambda X: X.testing.assert_close(
        X.tensor([1.0]), X.tensor([1.0], dtype=X.float64), check_dtype=False
    ),
    "check_dtype=False loosest tolerance": lambda X: X.testing.assert_close(
        X.tensor([1.0]), X.tensor([1.1], dtype=X.float64), check_dtype=False
    ),
    "check_dtype=False int and float": lambda X: X.testing.assert_close(
        X.tensor([1, 2], dtype=X.int32), X.tensor([1.0, 2.5]), check_dtype=False
    ),
    "shape mismatch": lambda X: X.testing.assert_close(X.tensor([1.0]), X.tensor([1.0, 2.0])),
    "device mismatch": lambda X: X.testing.assert_close(
        X.tensor([1.0]), X.tensor([1.0], device="meta")
    ),
    "check_device=False with meta": lambda X: X.testing.assert_close(
        X.tensor([1.0]), X.tensor([5.0], device="meta"), check_device=False
    ),
    "stride ignored by default": lambda X: X.testing.assert_close(X.ones(2, 2), X.ones(2, 2).t()),
    "check_stride": lambda X: X.testing.assert_close(
        X.ones(2, 2), X.ones(2, 2).t(), check_stride=True
    ),
    "requires_grad is fine": lambda X: X.testing.assert_close(
        X.tensor([1.0]), X.tensor([1.0], requires_grad=True)
    ),
    "nan is not close": lambda X: X.testing.assert_close(X.tensor([NAN]), X.tensor([NAN])),
    "equal_nan": lambda X: X.testing.assert_close(
        X.tensor([NAN, 1.0]), X.tensor([NAN, 1.0]), equal_nan=True
    ),
    "nan in a mismatch": lambda X: X.testing.assert_close(
        X.tensor([[NAN, 1.0], [2.0, 3.0]]), X.tensor([[1.0, 1.0], [2.0, 4.0]])
    ),
    "inf equal": lambda X: X.testing.assert_close(X.tensor([INF]), X.tensor([INF])),
    "inf opposite": lambda X: X.testing.assert_close(X.tensor([INF]), X.tensor([-INF])),
    "zero expected": lambda X: X.testing.assert_close(X.tensor([0.0, 0.0]), X.tensor([1e-3, 0.0])),
    "atol only": lambda X: X.testing.assert_close(
        X.tensor([1.0, 2.0]), X.tensor([1.1, 2.2]), atol=0.25, rtol=0
    ),
    "atol and rtol": lambda X: X.testing.assert_close(
        X.tensor([1.0, 2.0]), X.tensor([1.1, 2.2]), atol=0.1, rtol=0.01
    ),
    "rtol without atol": lambda X: X.testing.assert_close(
        X.tensor([1.0]), X.tensor([1.0]), rtol=1e-3
    ),
    "atol without rtol": lambda X: X.testing.assert_close(
        X.tensor([1.0]), X.tensor([1.0]), atol=1e-3
    ),
    "0-dim is a scalar message": lambda X: X.testing.assert_close(X.tensor(1.0), X.tensor(2.0)),
    "0-dim int": lambda X: X.testing.assert_close(X.tensor(1), X.tensor(2)),
    "empty": lambda X: X.testing.assert_close(X.tensor([]), X.tensor([])),
    "msg string": lambda X: X.testing.assert_close(X.tensor([1.0]), X.tensor([2.0]), msg="no"),
    "msg callable": lambda X: X.testing.assert_close(
        [X.tensor([1.0]), X.tensor([2.0])],
        [X.tensor([1.0]), X.tensor([3.0])],
        msg=lambda m: "Header\n" + m,
    ),
    "python floats": lambda X: X.testing.assert_close(1.0, 1.1),
    "python ints": lambda X: X.testing.assert_close(1, 2),
    "python complex": lambda X: X.testing.assert_close(complex(1, 1), complex(1, 2)),
    "int and float": lambda X: X.testing.assert_close(1, 1.0),
    "float nan": lambda X: X.testing.assert_close(NAN, NAN),
    "float nan equal_nan": lambda X: X.testing.assert_close(NAN, NAN, equal_nan=True),
    "floats with tolerances": lambda X: X.testing.assert_close(1.0, 1.5, rtol=0.0, atol=0.1),
    "numpy scalar": lambda X: X.testing.assert_close(np.float32(1.0), 1.0),
    "numpy arrays": lambda X: X.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 3.0])),
    "bools": lambda X: X.testing.assert_close(True, False),
    "None and None": lambda X: X.testing.assert_close(None, None),
    "None and tensor": lambda X: X.testing.assert_close(X.tensor([1.0]), None),
    "strings": lambda X: X.testing.assert_close("a", "b"),
    "sequence item": lambda X: X.testing.assert_close(
        [X.tensor(1.0), X.tensor(2.0)], [X.tensor(1.0), X.tensor(3.0)]
    ),
    "sequence length": lambda X: X.testing.assert_close([1, 2], [1]),
    "mapping item": lambda X: X.testing.assert_close({"a": X.tensor(1.0)}, {"a": X.tensor(3.0)}),
    "nested path": lambda X: X.testing.assert_close(
        {"a": [X.tensor(1.0), {"b": X.tensor([1.0, 2.0])}]},
        {"a": [X.tensor(1.0), {"b": X.tensor([1.0, 3.0])}]},
    ),
    "mapping keys": lambda X: X.testing.assert_close({"a": 1, "c": 2}, {"b": 1, "c": 2}),
    "Size": lambda X: X.testing.assert_close(X.Size([1, 2]), X.Size([1, 3])),
    "state dicts": lambda X: X.testing.assert_close(
        {"w": X.ones(2, 2), "b": X.zeros(2)}, {"w": X.ones(2, 2), "b": X.zeros(2)}
    ),
}


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e).replace("torch", "X").replace("ember", "X")
    return "ok", ""


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_assert_close_matches_pytorch(case: str) -> None:
    fn = CASES[case]
    assert _outcome(lambda: fn(ember)) == _outcome(lambda: fn(torch))


def test_assert_close_message_in_full() -> None:
    with pytest.raises(AssertionError) as info:
        ember.testing.assert_close(ember.tensor([1.0, 2.0, 3.0]), ember.tensor([1.0, 2.5, 3.1]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)"
    )


def test_tensor_against_list_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type"):
        ember.testing.assert_close(ember.tensor([1.0]), [1.0])


def test_default_tolerances_match_pytorch() -> None:
    from torch.testing._comparison import default_tolerances as torch_tolerances

    from ember.testing._comparison import default_tolerances

    for name in ("float16", "float32", "float64", "complex64", "complex128", "int64", "bool"):
        e, t = getattr(ember, name), getattr(torch, name)
        assert default_tolerances(e) == torch_tolerances(t)
    assert default_tolerances(ember.float16, ember.float64) == torch_tolerances(
        torch.float16, torch.float64
    )


# --------------------------------------------------------------------------- make_tensor

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]  # fmt: skip


@pytest.mark.parametrize("name", DTYPES)
def test_make_tensor_default_range(name: str) -> None:
    dt = getattr(ember, name)
    t = ember.testing.make_tensor(4000, dtype=dt, device="cpu")
    ref = torch.testing.make_tensor(4000, dtype=getattr(torch, name), device="cpu")
    assert t.shape == (4000,) and t.dtype is dt and t.is_contiguous()
    a, r = t.numpy(), ref.numpy()
    parts = [(a.real, r.real), (a.imag, r.imag)] if dt.is_complex else [(a, r)]
    for got, want in parts:
        got, want = got.astype(np.float64), want.astype(np.float64)
        # same support; with 4000 draws both reach close to its ends
        assert got.min() >= want.min() - 0.1 and got.max() <= max(want.max(), 9.0)
        lo, hi = {"bool": (0, 1), "uint8": (0, 9)}.get(name, (-9, 9))
        assert got.min() >= lo and got.max() <= hi
        assert got.min() < lo + 0.5 and got.max() > hi - 0.5


def test_make_tensor_low_high_and_shape_forms() -> None:
    for shape in ((2, 3), ([2, 3],), (ember.Size([2, 3]),)):
        t = ember.testing.make_tensor(*shape, dtype=ember.float32, device="cpu", low=-1, high=1)
        assert t.shape == (2, 3)
        assert bool(((t >= -1) & (t < 1)).all())
    i = ember.testing.make_tensor(1000, dtype=ember.int64, device="cpu", low=3, high=5)
    assert set(np.unique(i.numpy())) == {3, 4}
    f = ember.testing.make_tensor(1000, dtype=ember.int8, device="cpu", low=2.5, high=4.5)
    assert set(np.unique(f.numpy())) == {3, 4}  # limits of integer dtypes round up


def test_make_tensor_wide_float_range_stays_finite() -> None:
    big = float(np.finfo(np.float32).max)
    t = ember.testing.make_tensor(1000, dtype=ember.float32, device="cpu", low=-big, high=big)
    assert bool(ember.isfinite(t).all()) and float(t.abs().max()) > big / 100


def test_make_tensor_noncontiguous_memory_format_grad_exclude_zero() -> None:
    t = ember.testing.make_tensor(3, 4, dtype=ember.float32, device="cpu", noncontiguous=True)
    ref = torch.testing.make_tensor(3, 4, dtype=torch.float32, device="cpu", noncontiguous=True)
    assert t.shape == (3, 4) and not t.is_contiguous() and t.stride() == ref.stride()
    one = ember.testing.make_tensor(1, dtype=ember.float32, device="cpu", noncontiguous=True)
    assert one.is_contiguous()  # fewer than two elements: noncontiguous is ignored
    cl = ember.testing.make_tensor(
        2, 3, 4, 5, dtype=ember.float32, device="cpu", memory_format=copies.channels_last
    )
    assert cl.stride() == torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    g = ember.testing.make_tensor(2, dtype=ember.float64, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf
    z = ember.testing.make_tensor(2000, dtype=ember.int8, device="cpu", exclude_zero=True)
    assert bool((z != 0).all())
    zf = ember.testing.make_tensor(
        2000, dtype=ember.float16, device="cpu", low=0, high=0.001, exclude_zero=True
    )
    assert bool((zf != 0).all())
    m = ember.testing.make_tensor(2, 2, dtype=ember.float32, device="meta")
    assert m.device == ember.device("meta")


MAKE_ERRORS: dict[str, Callable[[Any], Any]] = {
    "requires_grad int": lambda X: X.testing.make_tensor(
        2, dtype=X.int64, device="cpu", requires_grad=True
    ),
    "low >= high": lambda X: X.testing.make_tensor(2, dtype=X.float32, device="cpu", low=3, high=1),
    "nan low": lambda X: X.testing.make_tensor(2, dtype=X.float32, device="cpu", low=NAN),
    "outside dtype": lambda X: X.testing.make_tensor(2, dtype=X.uint8, device="cpu", high=-3),
    "noncontiguous and memory_format": lambda X: X.testing.make_tensor(
        2, 2, 2, 2, dtype=X.float32, device="cpu", noncontiguous=True,
        memory_format=torch.contiguous_format if X is torch else copies.contiguous_format,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", MAKE_ERRORS, ids=list(MAKE_ERRORS))
def test_make_tensor_errors_match_pytorch(case: str) -> None:
    fn = MAKE_ERRORS[case]
    e, t = _outcome(lambda: fn(ember)), _outcome(lambda: fn(torch))
    assert e[0] == t[0] and e[1].split(", but")[0] == t[1].split(", but")[0]


def test_make_tensor_low_equals_high_warns() -> None:
    with pytest.warns(FutureWarning, match="low==high"):
        t = ember.testing.make_tensor(3, dtype=ember.float32, device="cpu", low=2, high=2)
    np.testing.assert_array_equal(t.numpy(), np.full(3, 2, np.float32))
