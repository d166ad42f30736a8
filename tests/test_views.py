"""View semantics: shared storage, ``_base``, shared version counters, and PyTorch's strides,
storage offsets and contiguity for every view op, on CPU and on Meta."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.testing._internal.opinfo import to_meta

from .conftest import requires_torch, torch


def pair(shape: tuple[int, ...], kind: str = "contiguous") -> tuple[Any, Any]:
    """The same values as an ember and a torch tensor, laid out as ``kind`` says."""
    n = int(np.prod(shape))
    if kind == "contiguous":
        data = np.arange(n, dtype=np.float32).reshape(shape)
        return ember.from_numpy(data.copy()), torch.from_numpy(data.copy())
    if kind == "transposed":
        data = np.arange(n, dtype=np.float32).reshape(shape[::-1])
        return ember.from_numpy(data.copy()).permute(
            list(range(len(shape)))[::-1]
        ), torch.from_numpy(data.copy()).permute(list(range(len(shape)))[::-1])
    assert kind == "strided"  # every other element of the last dim, and an offset
    big = np.arange(2 * n + 1, dtype=np.float32)
    e = ember.from_numpy(big.copy())[1:].view(*shape[:-1], 2 * shape[-1])[..., ::2]
    t = torch.from_numpy(big.copy())[1:].view(*shape[:-1], 2 * shape[-1])[..., ::2]
    return e, t


# (name, input shape, fn applied to both libraries)
VIEW_CASES: list[tuple[str, tuple[int, ...], Callable[[Any], Any]]] = [
    ("view", (2, 3, 4), lambda x: x.view(6, 4)),
    ("view size-1", (2, 3, 4), lambda x: x.view(2, 1, 3, 4, 1)),
    ("view last", (2, 3, 4), lambda x: x.view(2, 3, 2, 2)),
    ("reshape", (2, 3, 4), lambda x: x.reshape(4, -1)),
    ("flatten", (2, 3, 4), lambda x: x.flatten(0, 1)),
    ("unflatten", (2, 6, 4), lambda x: x.unflatten(1, (3, 2))),
    ("transpose", (2, 3, 4), lambda x: x.transpose(0, 2)),
    ("t", (3, 4), lambda x: x.t()),
    ("permute", (2, 3, 4), lambda x: x.permute(1, 2, 0)),
    ("expand", (3, 1), lambda x: x.expand(2, 3, 5)),
    ("broadcast_to", (3, 1), lambda x: x.broadcast_to((4, 3, 2))),
    ("narrow", (4, 5), lambda x: x.narrow(1, 1, 3)),
    ("select", (3, 4, 5), lambda x: x.select(1, 2)),
    ("select last", (3, 4, 5), lambda x: x.select(-1, -1)),
    ("getitem int", (3, 4, 5), lambda x: x[1]),
    ("getitem slice", (5, 4), lambda x: x[1:4:2]),
    ("getitem mixed", (3, 4, 5), lambda x: x[1:, None, ..., 2]),
    ("diagonal", (4, 5), lambda x: x.diagonal(1)),
    ("diagonal 3d", (2, 4, 5), lambda x: x.diagonal(-1, 2, 1)),
    ("diagonal size 1", (3, 4), lambda x: x.diagonal(-2)),
    ("unsqueeze", (3, 4), lambda x: x.unsqueeze(1)),
    ("unsqueeze end", (3, 4), lambda x: x.unsqueeze(-1)),
    ("squeeze", (3, 1, 4), lambda x: x.squeeze()),
    ("squeeze dims", (1, 3, 1), lambda x: x.squeeze((0, 2))),
    ("movedim", (2, 3, 4), lambda x: x.movedim(0, -1)),
    ("as_strided", (3, 4), lambda x: x.as_strided((2, 2), (1, 2), 1)),
    ("unbind", (3, 4), lambda x: x.unbind(1)[2]),
    ("split", (5, 4), lambda x: x.split(2)[2]),
    ("split_with_sizes", (5, 4), lambda x: x.split([1, 3], 1)[1]),
    ("chunk", (5, 4), lambda x: x.chunk(2, 1)[1]),
    ("T", (3, 4), lambda x: x.T),
    ("mT", (2, 3, 4), lambda x: x.mT),
    ("chain", (4, 6), lambda x: x.t()[1:5].unsqueeze(0).select(2, 1)),
]
KINDS = ("contiguous", "transposed", "strided")


def _layout(x: Any) -> tuple[Any, ...]:
    return tuple(x.shape), tuple(x.stride()), x.storage_offset(), x.is_contiguous()


@requires_torch
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,shape,fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_layout_matches_torch(name: str, shape: tuple[int, ...], fn: Any, kind: str) -> None:
    e, t = pair(shape, kind)
    try:
        expected = fn(t)
    except RuntimeError:  # e.g. view of a transposed tensor: ember must raise too
        with pytest.raises(RuntimeError):
            fn(e)
        return
    actual = fn(e)
    assert _layout(actual) == _layout(expected)
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    meta = fn(to_meta(e))
    assert meta.device.type == "meta"
    assert _layout(meta) == _layout(expected), "Meta layout differs from PyTorch's"


@requires_torch
@pytest.mark.parametrize("name,shape,fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_views_share_storage(name: str, shape: tuple[int, ...], fn: Any) -> None:
    e, _ = pair(shape)
    v = fn(e)
    assert v._base is e, "a view's _base is the tensor it was (transitively) taken from"
    before = e._version
    v.numpy(force=True).flat[0] = -100.0  # a write through the view...
    assert (e.numpy() == -100.0).any()  # ...shows in the base
    first = np.unravel_index(0, v.shape) if v.numel() else None
    if first is not None:
        base_arr = e.numpy()
        base_arr[base_arr == -100.0] = 7.0  # and a write to the base shows in the view
        assert v.numpy()[first] == 7.0
    assert e._version == before  # raw NumPy writes bypass the counter


def test_base_is_root_and_version_shared() -> None:
    x = ember.from_numpy(np.zeros((4, 6), np.float32))
    a = x.view(6, 4)
    b = a.t()[1:3]
    c = b.select(0, 1)
    assert a._base is x and b._base is x and c._base is x
    assert x._base is None and not x._is_view() and c._is_view()
    v0 = x._version
    c.add_(1)  # in-place through the deepest view
    assert x._version == a._version == b._version == c._version == v0 + 1
    assert x.numpy().sum() == 6  # c is one column of x.t()[1:3] ... six elements
    x.add_(1)
    assert c._version == v0 + 2


def test_setitem_bumps_version_and_writes_base() -> None:
    x = ember.from_numpy(np.zeros((3, 4), np.float32))
    row = x[1]
    v0 = x._version
    x[1, 2] = 5.0
    assert row.numpy()[2] == 5.0
    assert x._version > v0 and row._version == x._version
    row[0] = 3.0
    assert x.numpy()[1, 0] == 3.0


def test_unbind_and_split_are_views() -> None:
    x = ember.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    for part in (*x.unbind(1), *x.split(2), *x.chunk(2, 1), *x.split([1, 2])):
        assert part._base is x


def test_reshape_views_when_it_can_and_copies_when_it_must() -> None:
    x = ember.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert x.reshape(4, 3)._base is x
    y = x.t().reshape(12)
    assert y._base is None and y.is_contiguous()
    np.testing.assert_array_equal(y.numpy(), np.arange(12).reshape(3, 4).T.reshape(12))
    y.add_(1)
    assert x.numpy()[0, 1] == 1.0  # the copy does not write back


def test_unsafe_view_is_not_a_view() -> None:
    x = ember.from_numpy(np.arange(6, dtype=np.float32))
    y = ember.ops.aten._unsafe_view.default(x, [2, 3])
    assert y._base is None and tuple(y.shape) == (2, 3)


def test_view_incompatible_strides_error() -> None:
    x = ember.from_numpy(np.zeros((2, 3), np.float32)).t()
    with pytest.raises(
        RuntimeError, match=r"view size is not compatible .*Use \.reshape\(\.\.\.\) instead"
    ):
        x.view(6)
    with pytest.raises(RuntimeError, match=r"shape '\[4\]' is invalid for input of size 6"):
        x.view(4)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)


def test_meta_view_error_matches_cpu() -> None:
    x = to_meta(ember.from_numpy(np.zeros((2, 3), np.float32)).t())
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.view(6)


def test_meta_views_share_version_counter() -> None:
    x = to_meta(ember.from_numpy(np.zeros((2, 3), np.float32)))
    v = x.t()[1]
    assert v._base is x and v.device.type == "meta"
    v.add_(1)
    assert x._version == 1


@requires_torch
def test_as_strided_uses_storage_offset() -> None:
    e, t = pair((4, 6), "strided")
    ev, tv = e[1:], t[1:]
    assert (
        ev.as_strided((2, 2), (3, 1)).storage_offset()
        == tv.as_strided((2, 2), (3, 1)).storage_offset()
    )
    np.testing.assert_array_equal(
        ev.as_strided((2, 2), (3, 1), 0).numpy(), tv.as_strided((2, 2), (3, 1), 0).numpy()
    )
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        e.as_strided((100,), (1,))


def test_T_and_mT() -> None:
    x = ember.from_numpy(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert tuple(x.mT.shape) == (2, 4, 3) and x.mT._base is x
    with pytest.warns(UserWarning):
        assert tuple(x.T.shape) == (4, 3, 2)
    assert tuple(x[0].T.shape) == (4, 3)
    with pytest.raises(RuntimeError, match="mT is only supported on matrices"):
        _ = x[0, 0].mT


def test_iteration_unbinds() -> None:
    x = ember.from_numpy(np.arange(6, dtype=np.float32).reshape(3, 2))
    rows = list(x)
    assert len(rows) == 3 and rows[1]._base is x
    np.testing.assert_array_equal(rows[2].numpy(), [4, 5])


SMALL_SHAPES = [(0, 3), (2, 0, 3), (1, 1), (1,), (3, 1)]
SMALL_VIEWS: list[Callable[[Any], Any]] = [
    lambda x: x.view(-1),
    lambda x: x[0:0],
    lambda x: x.transpose(0, -1),
    lambda x: x.unsqueeze(0),
    lambda x: x.unsqueeze(-1),
    lambda x: x[..., 1:],
    lambda x: x.squeeze(),
    lambda x: x.expand(2, *x.shape),
    lambda x: x.permute(*range(x.dim() - 1, -1, -1)),
    lambda x: x.split(1, -1)[0],
    lambda x: x.movedim(0, -1),
    lambda x: x.select(0, 0) if x.shape[0] else x[1:],
]


@requires_torch
@pytest.mark.parametrize("shape", SMALL_SHAPES, ids=str)
def test_small_and_empty_views_match_torch(shape: tuple[int, ...]) -> None:
    """NOTE [small views]: NumPy's strides of empty and one-element arrays are arbitrary."""
    e, t = ember.zeros(*shape), torch.zeros(*shape)
    for i, fn in enumerate(SMALL_VIEWS):
        a, b = fn(e), fn(t)
        assert (tuple(a.shape), a.stride()) == (tuple(b.shape), b.stride()), f"view #{i}"
