"""The complex-number ops and properties: ``real``/``imag`` views, ``Tensor.real``/``.imag``
properties, ``conj`` (ember's deviation: no lazy conjugate bit), ``conj_physical``.

Values, dtypes and strides of every sample are checked against PyTorch by ``test_ops.py``;
this file checks what the op harness does not: storage offsets, aliasing, version counters,
the properties' setters, and the documented difference of ``conj``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch


def _complex(module: Any) -> Any:
    z = np.arange(12).reshape(3, 4) + 1j * (np.arange(12).reshape(3, 4) - 5)
    return module.from_numpy(z.astype(np.complex128))


LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda z: z,
    "transposed": lambda z: z.t(),
    "every other column": lambda z: z[:, ::2],
    "offset row": lambda z: z[1],
    "0-dim": lambda z: z[2, 3],
    "empty": lambda z: z[:0],
}


@requires_torch
@pytest.mark.parametrize("part", ["real", "imag"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_parts_are_views_laid_out_as_torch(part: str, layout: str) -> None:
    """``z.real``/``z.imag`` have PyTorch's strides and storage offsets (in real elements)."""
    z, tz = LAYOUTS[layout](_complex(ember)), LAYOUTS[layout](_complex(torch))
    got, want = getattr(z, part), getattr(tz, part)
    assert got.dtype is ember.float64
    assert got.stride() == want.stride()
    if got.numel():  # ember's empty views all report offset 0 (Tensor.storage_offset)
        assert got.storage_offset() == want.storage_offset()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got._base is (z if z._base is None else z._base)


def test_writes_through_parts_reach_the_tensor() -> None:
    z = _complex(ember)
    before = z._version
    z.imag[1].fill_(0)  # a view of a view: the write reaches z
    z.real.mul_(2)
    want = _complex(ember).numpy().copy()
    want[1] = want[1].real
    want = 2 * want.real + 1j * want.imag
    np.testing.assert_array_equal(z.numpy(), want)
    assert z._version == before + 2  # one counter for z and its views


def test_view_as_real_on_meta_has_torch_layout() -> None:
    m = ember.empty(3, 4, dtype=ember.complex64, device="meta")[1:, ::2]
    pairs = ember.view_as_real(m)
    assert pairs.device.type == "meta" and pairs.dtype is ember.float32
    assert tuple(pairs.shape) == (2, 2, 2)
    assert pairs.stride() == (8, 4, 1) and pairs.storage_offset() == 8
    assert ember.imag(m).storage_offset() == 9


def test_real_of_a_real_tensor_is_itself_and_imag_raises() -> None:
    x = ember.randn(3)
    assert x.real is x and ember.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        x.imag  # noqa: B018


def test_real_and_imag_are_properties_with_setters() -> None:
    for name in ("real", "imag"):
        prop = inspect.getattr_static(ember.Tensor, name)
        assert isinstance(prop, property) and prop.fset is not None, name
    assert not isinstance(inspect.getattr_static(ember.Tensor, "conj"), property)  # a method


@requires_torch
@pytest.mark.parametrize(
    "value",
    [lambda m: m.tensor([5.0, -1.0, 2.0]), lambda m: m.tensor(7), lambda m: 3, lambda m: 2.5],
    ids=["tensor", "0-dim int tensor", "int", "float"],
)
def test_property_setters_match_torch(value: Callable[[Any], Any]) -> None:
    results = []
    for m in (ember, torch):
        z = m.from_numpy(np.array([1 + 2j, 3 - 4j, -5 + 6j]))
        x = m.from_numpy(np.array([1.0, 2.0, 3.0]))
        z.real = value(m)
        z.imag = value(m)
        x.real = value(m)
        results.append((z.numpy().copy(), x.numpy().copy()))
    for got, want in zip(results[0], results[1], strict=True):
        np.testing.assert_array_equal(got, want)


def test_property_setters_refuse_what_torch_refuses() -> None:
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="non-complex"):
        x.imag = 3
    with pytest.raises(TypeError, match="can't assign a str"):
        ember.tensor([1j]).real = "a"


def test_conj_is_a_copy_not_a_view() -> None:
    """ember's documented deviation (NOTE [complex views]): no conjugate bit, so ``conj`` of a
    complex tensor is ``conj_physical``'s new tensor and writes into it stay there."""
    z = _complex(ember)
    c = z.conj()
    np.testing.assert_array_equal(c.numpy(), np.conj(z.numpy()))
    assert not c.is_conj() and c._base is None
    c.fill_(0)
    np.testing.assert_array_equal(z.numpy(), _complex(ember).numpy())  # unchanged
    x = ember.randn(3)
    assert x.conj() is x and ember.conj(x) is x


def test_conjugate_bit_helpers_are_trivial() -> None:
    z = ember.tensor([1 + 1j])
    assert z.resolve_conj() is z and ember.resolve_conj(z.conj()) is not z
    assert ember.is_conj(z.conj()) is False
    assert ember.is_complex(z) is True and ember.is_complex(ember.zeros(1)) is False


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_conj_physical_in_place_and_out_match_torch(dtype: str) -> None:
    vals = np.array([1 + 2j, -3 - 1j]) if dtype == "complex64" else np.array([1.5, -2.0])
    e, t = ember.from_numpy(vals.astype(dtype)), torch.from_numpy(vals.astype(dtype))
    assert e.conj_physical_() is e and t.conj_physical_() is t
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert e._version == t._version == 1  # PyTorch bumps it for real tensors too
    out, t_out = ember.empty(2, dtype=getattr(ember, dtype)), torch.empty(2, dtype=t.dtype)
    ember.conj_physical(e, out=out)
    torch.conj_physical(t, out=t_out)
    np.testing.assert_array_equal(out.numpy(), t_out.numpy())
    # conj_physical returns a real tensor itself, a new tensor for a complex one
    assert (ember.conj_physical(e) is e) is (torch.conj_physical(t) is t) is (dtype == "float32")
