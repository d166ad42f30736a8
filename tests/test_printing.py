"""``repr`` of tensors equals PyTorch's, character for character (``torch.`` -> ``ember.``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import ember
from ember._tensor_str import get_printoptions, printoptions

from .conftest import requires_torch, torch

try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError:  # pragma: no cover - the test extra installs it
    given = None

pytestmark = requires_torch

_rng = np.random.default_rng(0)


def _r(*shape: int, scale: float = 1.0) -> np.ndarray:
    return _rng.standard_normal(shape) * scale


#: name -> ndarray; each is printed by ember and by PyTorch from the same values
CASES: dict[str, Callable[[], np.ndarray]] = {
    "float32 simple": lambda: np.array([1.0, 2.0], np.float32),
    "float32 fractions": lambda: np.array([0.5, 1.25, -3.125], np.float32),
    "float32 precision": lambda: np.array([1.23456789, 2.0], np.float32),
    "float32 0-dim": lambda: np.array(3.5, np.float32),
    "float32 0-dim int-valued": lambda: np.array(-2.0, np.float32),
    "float32 0-dim zero": lambda: np.array(0.0, np.float32),
    "float32 0-dim nan": lambda: np.array(np.nan, np.float32),
    "float32 zeros": lambda: np.zeros((2, 3), np.float32),
    "float32 negative zero": lambda: np.array([-0.0, 0.0, 1.0], np.float32),
    "float32 only negative zero": lambda: np.array([-0.0, 0.0], np.float32),
    "float32 neg zero fractional": lambda: np.array([-0.0, 0.5], np.float32),
    "float32 nan inf": lambda: np.array([np.nan, np.inf, -np.inf, 1.5], np.float32),
    "float32 nan inf ints": lambda: np.array([np.nan, np.inf, -np.inf, 2.0], np.float32),
    "float32 all nan": lambda: np.array([np.nan, np.nan], np.float32),
    "float32 large": lambda: np.array([1e10, 1.0], np.float32),
    "float32 large ints": lambda: np.array([1e8, 2e8], np.float32),
    "float32 just below 1e8": lambda: np.array([99999999.0, 1.0], np.float32),
    "float32 ratio 1000": lambda: np.array([1000.0, 1.0], np.float32),
    "float32 ratio 1001": lambda: np.array([1001.0, 1.0], np.float32),
    "float32 ratio fractional": lambda: np.array([1000.5, 0.5], np.float32),
    "float32 small": lambda: np.array([1e-5, 1.0], np.float32),
    "float32 small alone": lambda: np.array([1e-5, 2e-5], np.float32),
    "float32 at 1e-4": lambda: np.array([1e-4, 0.5], np.float32),
    "float32 tiny": lambda: np.array([1e-30, -1e-38], np.float32),
    "float32 huge": lambda: np.array([3e38, -1e38], np.float32),
    "float32 mixed signs": lambda: np.array([-1.5, 2.25, -100.125], np.float32),
    "float32 matrix": lambda: _r(3, 4).astype(np.float32),
    "float32 3-d": lambda: _r(2, 3, 4).astype(np.float32),
    "float32 4-d": lambda: _r(2, 2, 2, 3).astype(np.float32),
    "float32 wide row": lambda: _r(30).astype(np.float32),
    "float32 wide matrix": lambda: _r(3, 25, scale=1000).astype(np.float32),
    "float32 big magnitudes": lambda: _r(4, 4, scale=1e6).astype(np.float32),
    "float32 summarized 1-d": lambda: np.arange(2000, dtype=np.float32),
    "float32 summarized 2-d": lambda: _r(40, 40).astype(np.float32),
    "float32 summarized 3-d": lambda: _r(11, 11, 11).astype(np.float32),
    "float32 summarized short rows": lambda: _r(1001, 1).astype(np.float32),
    "float32 summarized long rows": lambda: _r(2, 600).astype(np.float32),
    "float32 1001 elements": lambda: np.arange(1001, dtype=np.float32) / 7,
    "float32 1000 elements": lambda: np.arange(1000, dtype=np.float32) / 7,
    "float32 empty": lambda: np.zeros((0,), np.float32),
    "float32 empty 2-d": lambda: np.zeros((0, 3), np.float32),
    "float32 empty 3-d": lambda: np.zeros((2, 0, 1), np.float32),
    "float32 size-1 dims": lambda: np.ones((1, 1, 3), np.float32),
    "float64": lambda: np.array([1.0, 2.5], np.float64),
    "float64 ints": lambda: np.array([1.0, 2.0], np.float64),
    "float64 precise": lambda: np.array([1 / 3, 2 / 3], np.float64),
    "float64 matrix": lambda: _r(3, 3),
    "float64 empty": lambda: np.zeros((0,), np.float64),
    "float16": lambda: np.array([1.0, 2.5, 0.1], np.float16),
    "float16 ints": lambda: np.array([1.0, 2048.0], np.float16),
    "float16 inf": lambda: np.array([65504.0, np.inf, -0.0], np.float16),
    "float16 matrix": lambda: _r(3, 5).astype(np.float16),
    "float16 0-dim": lambda: np.array(0.1, np.float16),
    "int64": lambda: np.array([1, 2, 3], np.int64),
    "int64 negative": lambda: np.array([-100, 5, 1234567], np.int64),
    "int64 extremes": lambda: np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max]),
    "int64 0-dim": lambda: np.array(7, np.int64),
    "int64 empty": lambda: np.zeros((0,), np.int64),
    "int64 empty 2-d": lambda: np.zeros((3, 0), np.int64),
    "int64 matrix": lambda: np.arange(12, dtype=np.int64).reshape(3, 4) - 5,
    "int64 long row": lambda: np.arange(100, dtype=np.int64) * 1000,
    "int64 summarized": lambda: np.arange(5000, dtype=np.int64).reshape(50, 100),
    "int32": lambda: np.array([1, 2], np.int32),
    "int32 0-dim": lambda: np.array(-3, np.int32),
    "int16": lambda: np.array([-32768, 32767], np.int16),
    "int8": lambda: np.array([-128, 0, 127], np.int8),
    "int8 matrix": lambda: np.arange(-6, 6, dtype=np.int8).reshape(2, 2, 3),
    "uint8": lambda: np.array([0, 255, 7], np.uint8),
    "uint8 empty": lambda: np.zeros((0,), np.uint8),
    "bool": lambda: np.array([True, False, True]),
    "bool 0-dim": lambda: np.array(False),
    "bool matrix": lambda: np.eye(3, dtype=bool),
    "bool empty": lambda: np.zeros((0, 2), bool),
    "bool summarized": lambda: np.ones(1500, bool),
    "complex64": lambda: np.array([1 + 2j, -1.5 - 0.5j], np.complex64),
    "complex64 ints": lambda: np.array([1 + 2j, 3 - 4j], np.complex64),
    "complex64 zero imag": lambda: np.array([1.5 + 0j, 2.0 - 0j], np.complex64),
    "complex64 negative zero imag": lambda: np.array([complex(1, -0.0)], np.complex64),
    "complex64 0-dim": lambda: np.array(1 - 1j, np.complex64),
    "complex64 nan": lambda: np.array([complex(np.nan, 1), complex(1, np.inf)], np.complex64),
    "complex64 sci": lambda: np.array([1e10 + 1j, 1e-5j], np.complex64),
    "complex64 matrix": lambda: (_r(3, 3) + 1j * _r(3, 3)).astype(np.complex64),
    "complex64 summarized": lambda: (_r(1200) + 1j * _r(1200)).astype(np.complex64),
    "complex128": lambda: np.array([0.25 + 0.125j, 2j], np.complex128),
    "complex128 empty": lambda: np.zeros((0,), np.complex128),
}


def _pair(arr: np.ndarray) -> tuple[Any, Any]:
    return ember.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


def _expected(t: Any) -> str:
    return repr(t).replace("torch.", "ember.")


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(name: str) -> None:
    e, t = _pair(CASES[name]())
    assert repr(e) == _expected(t)
    assert str(e) == str(t).replace("torch.", "ember.")


@pytest.mark.parametrize(
    "name", ["float32 matrix", "int64 matrix", "bool matrix", "complex64 matrix"]
)
def test_repr_of_strided(name: str) -> None:
    arr = CASES[name]()
    for view in (arr.T, arr[:, ::2], arr[1:]):
        e, t = ember.from_numpy(view), torch.from_numpy(view.copy())
        assert repr(e) == _expected(t)


OPTIONS: list[dict[str, Any]] = [
    {"precision": 2},
    {"precision": 8},
    {"precision": 0},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"linewidth": 40},
    {"linewidth": 200},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
]


@pytest.fixture
def restore_printoptions() -> Iterator[None]:
    old = get_printoptions()
    yield
    ember.set_printoptions(**old)
    torch.set_printoptions(profile="default")


@pytest.mark.parametrize("opts", OPTIONS, ids=str)
@pytest.mark.parametrize(
    "name",
    [
        "float32 matrix",
        "float32 large",
        "int64 long row",
        "float32 summarized 2-d",
        "complex64 matrix",
        "float32 summarized 1-d",
        "bool summarized",
    ],
)
def test_printoptions_match_torch(
    name: str, opts: dict[str, Any], restore_printoptions: None
) -> None:
    e, t = _pair(CASES[name]())
    ember.set_printoptions(**opts)
    torch.set_printoptions(**opts)
    assert repr(e) == _expected(t)


def test_printoptions_context_restores() -> None:
    x = ember.tensor([1.23456])
    with printoptions(precision=1):
        assert repr(x) == "tensor([1.2])"
    assert repr(x) == "tensor([1.2346])"


def test_set_printoptions_rejects_unknown_profile() -> None:
    with pytest.raises(ValueError, match="profile"):
        ember.set_printoptions(profile="verbose")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "complex64"])
@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (0, 3)])
def test_meta_repr(dtype: str, shape: tuple[int, ...]) -> None:
    e = ember.empty(shape, dtype=getattr(ember, dtype), device="meta")
    t = torch.empty(shape, dtype=getattr(torch, dtype), device="meta")
    assert repr(e) == _expected(t)


@pytest.mark.parametrize(
    "name",
    [
        "float32 simple",
        "float32 matrix",
        "float64",
        "complex64",
        "float32 empty",
        "float32 0-dim",
        "float32 wide row",
    ],
)
def test_requires_grad_suffix(name: str) -> None:
    e, t = _pair(CASES[name]())
    e.requires_grad_(True)
    t.requires_grad_(True)
    assert repr(e) == _expected(t)


def test_grad_fn_suffix() -> None:
    class AddBackward0:
        pass

    e = ember.tensor([1.0, 2.0])
    e.grad_fn = AddBackward0()
    t = torch.tensor([1.0, 2.0], requires_grad=True) + 0
    assert repr(e) == _expected(t) == "tensor([1., 2.], grad_fn=<AddBackward0>)"


def test_suffixes_wrap_at_linewidth() -> None:
    arr = np.linspace(0, 1, 7).astype(np.float64)
    e, t = _pair(arr)
    e.requires_grad_(True)
    t.requires_grad_(True)
    assert repr(e) == _expected(t)
    assert "\n" in repr(e)


def test_default_dtype_changes_suffix() -> None:
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for arr in (
            CASES["float32 simple"](),
            CASES["float64"](),
            CASES["complex64"](),
            CASES["complex128"](),
            CASES["float32 empty"](),
        ):
            e, t = _pair(arr)
            assert repr(e) == _expected(t)
    finally:
        ember.set_default_dtype(old)
        torch.set_default_dtype(torch.float32)


def test_tensor_contents_override() -> None:
    e, t = _pair(CASES["float32 simple"]())
    expected = t.__repr__(tensor_contents="[...]").replace("torch.", "ember.")
    assert e.__repr__(tensor_contents="[...]") == expected == "tensor([...])"


def test_subclass_prefix() -> None:
    class MyTensor(ember.Tensor):
        pass

    e = ember.tensor([1.0, 2.0])
    sub = MyTensor()
    sub._edata = e._edata
    assert repr(sub) == "MyTensor([1., 2.])"


if given is not None:
    _DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int64, np.bool_, np.complex64]

    @settings(max_examples=150, deadline=None)
    @given(data=st.data())
    def test_repr_matches_torch_random(data: Any) -> None:
        dtype = data.draw(st.sampled_from(_DTYPES))
        shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6))
        if np.dtype(dtype).kind == "f":
            elements = st.floats(width=np.dtype(dtype).itemsize * 8, allow_subnormal=False)
            arr = data.draw(hnp.arrays(dtype, shape, elements=elements))
        elif np.dtype(dtype).kind == "c":
            elements = st.complex_numbers(max_magnitude=1e6, allow_nan=False, width=64)
            arr = data.draw(hnp.arrays(dtype, shape, elements=elements))
        else:
            arr = data.draw(hnp.arrays(dtype, shape))
        e, t = _pair(np.asarray(arr))
        assert repr(e) == _expected(t)
