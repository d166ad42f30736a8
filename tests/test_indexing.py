"""``Tensor.__getitem__``/``__setitem__``: values, layouts and errors against PyTorch, and the
aten ops each index turns into (what subclasses and modes see)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import python_key_calls, requires_torch, torch


def base() -> np.ndarray:
    return np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _convert(index: Any, lib: str) -> Any:
    """The same index for ``lib`` ("ember" or "torch"): tensors built in that library."""
    if isinstance(index, tuple):
        return tuple(_convert(i, lib) for i in index)
    if isinstance(index, np.ndarray):
        return ember.from_numpy(index.copy()) if lib == "ember" else torch.from_numpy(index.copy())
    return index


MASK = base() > 5
INDICES: list[Any] = [
    0, -1, 1, slice(None), slice(1, None), slice(0, 1), slice(None, None, 2), slice(-1, None),
    slice(5, 10), slice(1, 0), Ellipsis, None, True, False,
    (0, 1), (0, 1, 2), (slice(None), 0), (Ellipsis, 0), (None, Ellipsis, None),
    (1, None, slice(None), 2),
    (slice(None), slice(None)), (slice(None),), (0, slice(1, 3), slice(None, None, 3)),
    [0, 1], [1], [], [True, False], (slice(None), [0, 2]), (0, [1, 2]),
    ([0, 1], slice(None), [1, 2]),
    ([[0], [1]], [1, 2]), (slice(None), None, [1]), (slice(None), [0, 1], slice(1, 3)),
    (Ellipsis, [3, 0]), ([0, 1], Ellipsis, [2, 2]), (None, [1], None), (1, [0], [3]),
    np.array([1, 0]), np.array([-1]), np.array(1), (np.array(0), [2]), MASK, (1, MASK[0]),
    np.array([True, False]), np.array(True), np.array(False), (slice(None), MASK[0, :, 0]),
    (MASK[:, :, 0], [1]), np.array([1, 0], dtype=np.int32),
]  # fmt: skip


def _id(index: Any) -> str:
    return repr(index).replace("\n", "")[:60]


@requires_torch
@pytest.mark.parametrize("index", INDICES, ids=_id)
def test_getitem_matches_torch(index: Any) -> None:
    e = ember.from_numpy(base())
    t = torch.from_numpy(base())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = t[_convert(index, "torch")]
        actual = e[_convert(index, "ember")]
    assert tuple(actual.shape) == tuple(expected.shape)
    assert actual.dtype.name == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    is_view = expected._base is not None
    assert (actual._base is not None) == is_view
    if is_view:
        assert actual.stride() == expected.stride()
        if expected.numel():
            assert actual.storage_offset() == expected.storage_offset()


@requires_torch
@pytest.mark.parametrize("index", INDICES, ids=_id)
@pytest.mark.parametrize("value", ["scalar", "tensor"])
def test_setitem_matches_torch(index: Any, value: str) -> None:
    e = ember.from_numpy(base())
    t = torch.from_numpy(base())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        target = t[_convert(index, "torch")]
        if value == "scalar":
            ev, tv = -1.5, -1.5
        else:  # a tensor of the indexed shape's last dim, broadcast over the rest
            n = target.shape[-1] if target.ndim else 1
            vals = np.asarray(-np.arange(1, n + 1, dtype=np.float32)).reshape(
                (n,) if target.ndim else ()
            )
            ev, tv = ember.from_numpy(vals), torch.from_numpy(vals.copy())
        t[_convert(index, "torch")] = tv
        e[_convert(index, "ember")] = ev
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@requires_torch
def test_setitem_accumulates_nothing_and_checks_shapes() -> None:
    e = ember.from_numpy(base())
    with pytest.raises(RuntimeError, match="expanded size"):
        e[0] = ember.from_numpy(np.zeros(5, np.float32))
    with pytest.raises(RuntimeError, match="dtypes match"):
        e[[0]] = ember.from_numpy(np.zeros(4, np.int64))
    with pytest.raises(TypeError, match="can't assign"):
        e[0] = "a"


@pytest.mark.parametrize(
    "index,error,match",
    [
        (slice(None, None, -1), ValueError, "step must be greater than zero"),
        ((0, slice(None, None, -2)), ValueError, "step must be greater than zero"),
        (slice(None, None, 0), ValueError, "slice step cannot be zero"),
        ((0, 0, 0, 0), IndexError, "too many indices for tensor of dimension 3"),
        ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
        (5, IndexError, "out of range"),
        ((0, 7), IndexError, "out of range"),
        ([5], IndexError, "out of bounds"),
        ([0.5], IndexError, "long, int, byte or bool"),
        (0.5, IndexError, "only integers, slices"),
        ("a", IndexError, "only integers, slices"),
        (np.ones(3, bool), IndexError, "shape of the mask"),
        (([0, 1], [0, 1, 2]), IndexError, "shape mismatch"),
    ],
)
def test_getitem_errors(index: Any, error: type[Exception], match: str) -> None:
    e = ember.from_numpy(base())
    with pytest.raises(error, match=match):
        e[_convert(index, "ember")]


def test_getitem_0dim() -> None:
    x = ember.from_numpy(np.array(3.0, np.float32))
    assert x[...]._base is x and x[None].shape == (1,)
    with pytest.raises(IndexError):
        x[0]


# --------------------------------------------------------------------------- which ops run


def _ops(fn: Any) -> list[str]:
    with python_key_calls() as calls:
        fn()
    return [name for name, _ in calls if name != "lift_fresh.default"]


X = ember.from_numpy(base())
V = ember.from_numpy(np.ones(4, np.float32))


@pytest.mark.parametrize(
    "fn,expected",
    [
        (lambda: X[0], ["select.int"]),
        (lambda: X[1:3], ["slice.Tensor"]),
        (lambda: X[:], ["slice.Tensor"]),
        (lambda: X[:, :], ["alias.default"]),
        (lambda: X[...], ["alias.default"]),
        (lambda: X[None], ["unsqueeze.default"]),
        (lambda: X[0, 0, 0], ["select.int"] * 3),
        (lambda: X[1, None, :, 2], ["select.int", "unsqueeze.default", "select.int"]),
        (lambda: X[[0, 1]], ["index.Tensor"]),
        (lambda: X[:, [0, 1], 1:3], ["slice.Tensor", "index.Tensor"]),
        (lambda: X[0, [0, 1]], ["select.int", "index.Tensor"]),
        (lambda: X[True], ["unsqueeze.default", "index.Tensor"]),
        (lambda: X.reshape(6, 4), ["view.default"]),
        (lambda: X.flatten(), ["view.default"]),
        (lambda: X.movedim(0, 2), ["permute.default"]),
        (lambda: X.chunk(2, 2), ["split.Tensor"]),
        (lambda: X.split([1, 3], 2), ["split_with_sizes.default"]),
        (lambda: X.narrow(1, 1, 2), ["slice.Tensor"]),
        (lambda: X.broadcast_to((2, 2, 3, 4)), ["expand.default"]),
        (lambda: X.mT, ["transpose.int"]),
    ],
)
def test_translation_ops(fn: Any, expected: list[str]) -> None:
    assert _ops(fn) == expected


@pytest.mark.parametrize(
    "index,value,expected",
    [
        (0, 1.0, ["select.int", "fill_.Tensor"]),
        (0, V, ["select.int", "view.default", "expand.default", "copy_.default"]),
        (slice(None), V, ["view.default", "expand.default", "copy_.default"]),
        ((0, 0, 0), 3.0, ["select.int"] * 3 + ["copy_.default"]),
        ([0, 1], 1.0, ["index_put_.default"]),
        ((slice(None), [0, 1]), V, ["index_put_.default"]),
    ],
)
def test_setitem_translation_ops(index: Any, value: Any, expected: list[str]) -> None:
    x = ember.from_numpy(base())

    def assign() -> None:
        x[index] = value

    assert _ops(assign) == expected


@requires_torch
def test_reshape_copy_path_ops() -> None:
    assert _ops(lambda: X.transpose(0, 1).reshape(-1)) == [
        "transpose.int",
        "clone.default",
        "_unsafe_view.default",
    ]


# --------------------------------------------------------------------------- index ops


@requires_torch
def test_index_with_masks_matches_torch() -> None:
    e, t = ember.from_numpy(base()), torch.from_numpy(base())
    for mask in (MASK, MASK[:, :, 0], MASK[:, 0, 0]):
        em, tm = ember.from_numpy(mask.copy()), torch.from_numpy(mask.copy())
        np.testing.assert_array_equal(
            ember.ops.aten.index.Tensor(e, [em]).numpy(),
            torch.ops.aten.index.Tensor(t, [tm]).numpy(),
        )
    um = ember.from_numpy(MASK[0, 0].astype(np.uint8))
    tum = torch.from_numpy(MASK[0, 0].astype(np.uint8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(
            ember.ops.aten.index.Tensor(e, [None, None, um]).numpy(),
            torch.ops.aten.index.Tensor(t, [None, None, tum]).numpy(),
        )


def test_index_mask_on_meta_raises() -> None:
    from ember.testing._internal.opinfo import to_meta

    e = to_meta(ember.from_numpy(base()))
    with pytest.raises(RuntimeError, match="depends on the mask's values"):
        ember.ops.aten.index.Tensor(e, [to_meta(ember.from_numpy(MASK))])


def test_index_put_accumulate_and_version() -> None:
    x = ember.from_numpy(np.zeros(4, np.float32))
    i = ember.from_numpy(np.array([0, 0, 3]))
    v = ember.from_numpy(np.ones(3, np.float32))
    v0 = x._version
    x.index_put_([i], v, accumulate=True)
    np.testing.assert_array_equal(x.numpy(), [2, 0, 0, 1])
    assert x._version == v0 + 1
    y = ember.ops.aten.index_put.default(x, [i], v)
    np.testing.assert_array_equal(y.numpy(), [1, 0, 0, 1])
    np.testing.assert_array_equal(x.numpy(), [2, 0, 0, 1])  # the functional form copies


@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        ("uint8", -2),
        ("uint8", -129),
        ("uint8", 300),
        ("int8", 200),
        ("int8", -129),
        ("int16", 40000),
    ],
)
def test_assigning_an_int_out_of_range_matches_torch(dtype: str, value: int) -> None:
    import torch

    t = torch.zeros(2, dtype=getattr(torch, dtype))
    e = ember.zeros(2, dtype=getattr(ember, dtype))
    try:
        t[0] = value
    except RuntimeError:
        with pytest.raises(RuntimeError, match="without overflow"):
            e[0] = value
        return
    e[0] = value
    assert e.tolist() == t.tolist()


def test_advanced_index_results_are_contiguous_as_in_pytorch() -> None:
    """x[:, idx] is laid out index-dims first by NumPy; PyTorch's result is contiguous, so
    it can be viewed (found by the random programs)."""
    x = ember.tensor([[[[1], [1]]]])
    v = x[:, :, :, ember.tensor([0, 0, -1])]
    assert v.stride() == (6, 6, 3, 1) and tuple(v.view(-1).shape) == (6,)
    y = ember.zeros(3, 4, 5)
    assert y[:, ember.tensor([[0, 1], [1, 2]])].stride() == (20, 10, 5, 1)
