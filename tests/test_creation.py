"""Factory functions through the public API: argument forms, dtype inference, meta device,
strides of ``empty*``/``*_like`` results, ``requires_grad=``, and ``ember.tensor``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

pytestmark = requires_torch


def _same(e: Any, t: Any, values: bool = True) -> None:
    assert tuple(e.shape) == tuple(t.shape)
    assert e.dtype.name == str(t.dtype).removeprefix("torch.")
    if values:
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


def test_size_forms() -> None:
    for e in (ember.zeros(2, 3), ember.zeros((2, 3)), ember.zeros([2, 3]), ember.ones(size=(2, 3))):
        assert e.shape == (2, 3)
    assert ember.zeros(3).shape == (3,)
    assert ember.zeros(()).shape == ()
    assert ember.full((2,), 5).tolist() == [5, 5]
    assert ember.empty(2, 3, dtype=ember.int32).dtype is ember.int32
    x = ember.zeros(1)
    assert x.new_zeros(2, 3).shape == (2, 3) and x.new_ones((4,)).shape == (4,)


def test_size_errors() -> None:
    with pytest.raises(RuntimeError, match="zeros"):
        ember.zeros(-1, 3)
    with pytest.raises(TypeError):
        ember.zeros(2.5)


@pytest.mark.parametrize(
    "args",
    [
        (5,),
        (5.0,),
        (2, 7),
        (0, 1, 0.1),
        (1, 2.5, 0.5),
        (10, 0, -3),
        (0, 10, 3),
        (-1.5, 1.5, 0.25),
        (0, 1e-3, 1e-4),
        (1, 0.0, -0.1),
        (0.5,),
        (3, 3),
    ],
)
def test_arange_values_dtypes_and_lengths(args: tuple[Any, ...]) -> None:
    _same(ember.arange(*args), torch.arange(*args))


@pytest.mark.parametrize("dtype", ["int64", "int32", "float64", "float16", "uint8"])
def test_arange_with_dtype(dtype: str) -> None:
    for args in ((0, 10, 3), (0.5, 5), (1, 4, 0.5), (0, 1, 0.3)):
        if dtype == "int64" and args[2:] and args[2] < 1:
            continue  # the step truncates to 0: ValueError in both, test_factory_errors
        _same(
            ember.arange(*args, dtype=getattr(ember, dtype)),
            torch.arange(*args, dtype=getattr(torch, dtype)),
        )


def test_default_dtype_follows_set_default_dtype() -> None:
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.zeros(2).dtype is ember.float64
        assert ember.arange(1.5).dtype is ember.float64
        assert ember.full((1,), 1j).dtype is ember.complex128
        assert ember.rand(2).dtype is ember.float64
        assert ember.arange(3).dtype is ember.int64
    finally:
        ember.set_default_dtype(old)


@pytest.mark.parametrize("value", [1, True, 1.5, 1j, -7, 2**40])
def test_full_infers_dtype_from_fill(value: Any) -> None:
    _same(ember.full((2, 2), value), torch.full((2, 2), value))


def test_linspace_and_eye() -> None:
    _same(ember.linspace(0, 1, 5), torch.linspace(0, 1, 5))
    _same(ember.linspace(-3, 8, 5, dtype=ember.int8), torch.linspace(-3, 8, 5, dtype=torch.int8))
    _same(ember.eye(3), torch.eye(3))
    _same(ember.eye(2, 4, dtype=ember.bool), torch.eye(2, 4, dtype=torch.bool))
    _same(ember.scalar_tensor(3), torch.scalar_tensor(3))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16"])
@pytest.mark.parametrize(
    ("start", "end", "steps"),
    [(0, 1, 1001), (-3.7, 11.2, 1001), (0, 1, 10), (5, -5, 7), (3, -7.25, 100001),
     (-100, 300, 77), (-2.5, 1e-7, 12345)],
)  # fmt: skip
def test_linspace_bits_match_torch(start: float, end: float, steps: int, dtype: str) -> None:
    """Every element to the last bit: PyTorch's kernel fuses each multiply-add of its
    count-up-from-start / count-down-from-end halves (one rounding)."""
    e = ember.linspace(start, end, steps, dtype=getattr(ember, dtype))
    t = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    if dtype in ("float32", "float64"):  # far from zero: the step is a few ulps
        e = ember.linspace(1e10, 1e10 + 7, 999, dtype=getattr(ember, dtype))
        t = torch.linspace(1e10, 1e10 + 7, 999, dtype=getattr(torch, dtype))
        np.testing.assert_array_equal(e.numpy(), t.numpy())


FACTORIES = [
    ("zeros", (2, 3), {}),
    ("ones", ((4,),), {"dtype": "int32"}),
    ("empty", (2, 3), {}),
    ("full", ((2,), 1.5), {}),
    ("full", ((2,), 1), {}),
    ("arange", (0, 10, 3), {}),
    ("arange", (2.5,), {"dtype": "float64"}),
    ("linspace", (0, 1, 7), {}),
    ("eye", (3, 2), {}),
    ("rand", ((2, 2),), {}),
    ("randn", (3,), {"dtype": "float64"}),
    ("randint", (3, 9, (4,)), {}),
    ("scalar_tensor", (2,), {}),
    ("empty_strided", ((2, 3), (1, 2)), {}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), FACTORIES, ids=str)
def test_meta_device_factories_match_torch(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    ek = {k: getattr(ember, v) for k, v in kwargs.items()}
    tk = {k: getattr(torch, v) for k, v in kwargs.items()}
    e = getattr(ember, name)(*args, device="meta", **ek)
    t = getattr(torch, name)(*args, device="meta", **tk)
    assert e.is_meta and e.device.type == "meta"
    _same(e, t, values=False)
    assert e.stride() == t.stride()
    assert repr(e) == repr(t).replace("torch.", "ember.")


@pytest.mark.parametrize("device", ["cpu", ember.device("cpu")])
def test_explicit_cpu_device(device: Any) -> None:
    assert ember.zeros(2, device=device).device.type == "cpu"


def test_like_ops_follow_a_meta_input() -> None:
    x = ember.zeros(2, 3, device="meta")
    for fn in (ember.zeros_like, ember.ones_like, ember.empty_like, ember.rand_like):
        out = fn(x)
        assert out.is_meta and out.shape == (2, 3)
    assert ember.full_like(x, 2, dtype=ember.int8).dtype is ember.int8
    assert x.new_empty(4).is_meta


def _transposed(module: Any) -> Any:
    return module.from_numpy(np.arange(12.0, dtype=np.float32).reshape(3, 4).T)


@pytest.mark.parametrize(
    "name", ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]
)
def test_like_preserves_dense_strides(name: str) -> None:
    e = getattr(ember, name)(_transposed(ember))
    t = getattr(torch, name)(_transposed(torch))
    assert e.shape == (4, 3) and e.stride() == t.stride() == (1, 4)
    c = getattr(ember, name)(_transposed(ember), memory_format="contiguous_format")
    assert c.stride() == (3, 1)


def test_like_of_gappy_input_is_contiguous() -> None:
    base = np.zeros((3, 8), np.float32)
    e = ember.zeros_like(ember.from_numpy(base[:, ::2]))
    t = torch.zeros_like(torch.from_numpy(base[:, ::2].copy())[:, :])
    assert e.stride() == t.stride() == (4, 1)


def test_empty_strided_and_meta_like_strides() -> None:
    e = ember.empty_strided((2, 3), (1, 2))
    t = torch.empty_strided((2, 3), (1, 2))
    assert e.stride() == t.stride() and e.shape == t.shape
    m = ember.zeros_like(ember.empty_strided((2, 3), (1, 2), device="meta"))
    assert m.stride() == (1, 2)


def test_requires_grad_keyword() -> None:
    for t in (
        ember.zeros(2, requires_grad=True),
        ember.ones((2, 2), requires_grad=True),
        ember.rand(3, requires_grad=True),
        ember.arange(3.0, requires_grad=True),
        ember.full((1,), 2.0, requires_grad=True),
        ember.zeros_like(ember.zeros(2), requires_grad=True),
        ember.zeros(1).new_zeros(2, requires_grad=True),
    ):
        assert t.requires_grad and t.is_leaf
    assert not ember.zeros(2, requires_grad=False).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        ember.zeros(2, dtype=ember.int64, requires_grad=True)
    with pytest.raises(TypeError):
        ember.add(ember.zeros(1), 1, requires_grad=True)  # not a factory


def test_factory_errors_match_torch() -> None:
    cases = [
        (lambda m: m.arange(0, 5, 0), RuntimeError),
        (lambda m: m.arange(0, 5, -1), RuntimeError),
        (lambda m: m.arange(float("inf")), RuntimeError),
        (lambda m: m.eye(-1), RuntimeError),
        (lambda m: m.linspace(0, 1, -1), RuntimeError),
        (lambda m: m.arange(1, 4, 0.5, dtype=m.int64), ValueError),
        (lambda m: m.full((2,), 300, dtype=m.uint8), RuntimeError),
        (lambda m: m.full((2,), 1e40, dtype=m.float32), RuntimeError),
    ]
    for call, error in cases:
        with pytest.raises(error):
            call(torch)
        with pytest.raises(error):
            call(ember)
    with pytest.raises(RuntimeError):
        torch.empty(2, memory_format=torch.preserve_format)
    with pytest.raises(RuntimeError, match="preserve"):
        ember.empty(2, memory_format="preserve_format")  # ember takes memory formats by name


# --------------------------------------------------------------------------- ember.tensor


@pytest.mark.parametrize(
    "data",
    [
        [1, 2],
        [1.0, 2],
        [True, False],
        [1 + 2j],
        3,
        2.5,
        [[1, 2], [3, 4]],
        [],
        [[]],
        np.array([1, 2], np.int32),
        np.array([1.5], np.float64),
    ],
)
def test_tensor_infers_like_torch(data: Any) -> None:
    _same(ember.tensor(data), torch.tensor(data))


def test_tensor_options() -> None:
    t = ember.tensor([1, 2], dtype=ember.float64, requires_grad=True)
    assert t.dtype is ember.float64 and t.requires_grad
    m = ember.tensor([1.0, 2.0], device="meta")
    assert m.is_meta and m.shape == (2,)


@requires_torch
@pytest.mark.parametrize(
    "start, end, steps, base",
    [
        (0.5, 3.25, 7, 2.0),
        (-1.5, 2.7, 4, 10.0),
        (0, 2, 5, 2.5),
        (1, 3, 3, -2.0),
        (0.0, 2.0, 4, 3.7),
    ],
)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_integer_logspace_truncates_its_bounds_as_torch(
    start: float, end: float, steps: int, base: float, dtype: str
) -> None:
    """An integer logspace converts its bounds to the dtype before spacing the exponents
    (PyTorch's kernel); spacing fractional bounds gave other values."""
    if dtype == "uint8" and start < 0:  # both refuse a bound uint8 cannot hold
        with pytest.raises(RuntimeError, match="without overflow"):
            ember.logspace(start, end, steps, base=base, dtype=ember.uint8)
        with pytest.raises(RuntimeError, match="without overflow"):
            torch.logspace(start, end, steps, base=base, dtype=torch.uint8)
        return
    got = ember.logspace(start, end, steps, base=base, dtype=getattr(ember, dtype))
    want = torch.logspace(start, end, steps, base=base, dtype=getattr(torch, dtype))
    assert got.tolist() == want.tolist()
