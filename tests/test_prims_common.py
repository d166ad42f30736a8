"""``ember._prims_common`` against ``torch._prims_common``: the same answers for the helpers
PyTorch's decompositions import (type promotion over every dtype pair with numbers and
zero-dim tensors, strides, dims, contiguity)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import ember
from ember import _prims_common as eu

torch = pytest.importorskip("torch")
tu = pytest.importorskip("torch._prims_common")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
          "float64", "complex64", "complex128"]  # fmt: skip
KINDS = [k.name for k in eu.ELEMENTWISE_TYPE_PROMOTION_KIND]


def name(d: Any) -> str:
    return str(d).split(".")[-1]


def make(lib: Any, dt: str, ndim: int) -> Any:
    shape = (2,) * ndim
    return lib.zeros(shape, dtype=getattr(lib, dt))


@pytest.mark.parametrize("kind", KINDS)
def test_elementwise_dtypes_match_torch_for_every_pair(kind: str) -> None:
    ek, tk = eu.ELEMENTWISE_TYPE_PROMOTION_KIND[kind], tu.ELEMENTWISE_TYPE_PROMOTION_KIND[kind]
    extras: list[Any] = [None, True, 3, 2.5, 1j]
    for a, b, nd_b in itertools.product(DTYPES, DTYPES, (0, 1)):
        for extra in extras:
            e_args = [make(ember, a, 1), make(ember, b, nd_b)] + (
                [extra] if extra is not None else []
            )
            t_args = [make(torch, a, 1), make(torch, b, nd_b)] + (
                [extra] if extra is not None else []
            )
            default = tu.ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT
            if "complex32" in str(tu.elementwise_dtypes(*t_args, type_promotion_kind=default)):
                continue  # float16 meeting a complex number: ember has no complex32
            got = eu.elementwise_dtypes(*e_args, type_promotion_kind=ek)
            want = tu.elementwise_dtypes(*t_args, type_promotion_kind=tk)
            assert [name(d) for d in got] == [name(d) for d in want], (a, b, nd_b, extra)


def test_elementwise_dtypes_numbers_only_and_errors() -> None:
    k = eu.ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT
    for args in ((1, 2), (1, 2.0), (True,), (1j, 1)):
        got = eu.elementwise_dtypes(*args, type_promotion_kind=k)
        want = tu.elementwise_dtypes(
            *args, type_promotion_kind=tu.ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT
        )
        assert [name(d) for d in got] == [name(d) for d in want]
    with pytest.raises(ValueError, match="unexpected type"):
        eu.elementwise_dtypes("x", type_promotion_kind=k)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 0, 4), (1, 3, 1, 5)])
def test_strides_match_torch(shape: tuple[int, ...]) -> None:
    assert eu.make_contiguous_strides_for(shape) == tu.make_contiguous_strides_for(shape)
    assert eu.make_contiguous_strides_for(shape, False) == tu.make_contiguous_strides_for(
        shape, row_major=False
    )
    if len(shape) in (3, 4, 5):
        assert eu.make_channels_last_strides_for(shape) == tu.make_channels_last_strides_for(shape)


def test_dims_match_torch() -> None:
    for rank, idx in itertools.product(range(0, 4), range(-5, 5)):
        try:
            want: Any = tu.canonicalize_dim(rank, idx)
        except IndexError as exc:
            with pytest.raises(IndexError, match="Dimension out of range"):
                eu.canonicalize_dim(rank, idx)
            assert "Dimension out of range" in str(exc)
            continue
        assert eu.canonicalize_dim(rank, idx) == want
    assert eu.canonicalize_dims(3, [-1, 0]) == tu.canonicalize_dims(3, [-1, 0]) == (2, 0)
    with pytest.raises(IndexError, match="no dimensions"):
        eu.canonicalize_dim(0, 0, wrap_scalar=False)
    assert eu.reduction_dims((2, 3, 4), [-1, 0]) == (2, 0)
    assert eu.compute_reduction_output_shape((2, 3, 4), (0, 2)) == (3,)
    assert eu.infer_size((2, -1), 6) == tu.infer_size((2, -1), 6) == (2, 3)
    with pytest.raises(RuntimeError, match="invalid for input of size 7"):
        eu.infer_size((2, -1), 7)


def test_contiguity_matches_torch() -> None:
    cases = [
        lambda lib: lib.ones(2, 3), lambda lib: lib.ones(2, 3).t(),
        lambda lib: lib.ones(4, 6)[:, ::2], lambda lib: lib.ones(1, 3, 1).transpose(0, 2),
        lambda lib: lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1),
        lambda lib: lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
    ]  # fmt: skip
    for case in cases:
        e, t = case(ember), case(torch)
        assert eu.is_contiguous(e) == tu.is_contiguous(t)
        assert eu.is_non_overlapping_and_dense(e) == tu.is_non_overlapping_and_dense_or_false(t)
        assert eu.is_channels_last_contiguous(e) == tu.is_channels_last_contiguous(t)
        assert name(eu.suggest_memory_format(e)) == name(tu.suggest_memory_format(t))


def test_check_and_dtype_helpers() -> None:
    eu.check(True, lambda: "unused")
    with pytest.raises(ValueError, match="made lazily"):
        eu.check(False, lambda: "made lazily", ValueError)
    for dt in DTYPES:
        e, t = getattr(ember, dt), getattr(torch, dt)
        for fn in ("is_boolean_dtype", "is_integer_dtype", "is_float_dtype",
                   "is_complex_dtype", "is_low_precision_dtype"):  # fmt: skip
            assert getattr(eu, fn)(e) == getattr(tu, fn)(t), (fn, dt)
        assert name(eu.get_computation_dtype(e)) == name(tu.get_computation_dtype(t))
        assert eu.dtype_to_type(e) is tu.dtype_to_type(t)
    assert eu.get_higher_dtype(ember.int8, 2.5) == ember.float32
    assert eu.set_correction(unbiased=False) == 0.0 and eu.set_correction() == 1.0
    eu.check_same_dtype(ember.ones(2), 1.0)
    with pytest.raises(RuntimeError, match="not the expected dtype"):
        eu.check_same_dtype(ember.ones(2), ember.ones(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="not the expected shape"):
        eu.check_same_shape(ember.ones(2), ember.ones(3), allow_cpu_scalar_tensors=True)


def test_reduction_dtypes_match_torch() -> None:
    for dt, kind, out in itertools.product(
        ["bool", "int32", "float16", "float32", "complex64"],
        [k.name for k in eu.REDUCTION_OUTPUT_TYPE_KIND],
        [None, "float64"],
    ):
        got = eu.reduction_dtypes(
            make(ember, dt, 1), eu.REDUCTION_OUTPUT_TYPE_KIND[kind],
            getattr(ember, out) if out else None,
        )  # fmt: skip
        want = tu.reduction_dtypes(
            make(torch, dt, 1), tu.REDUCTION_OUTPUT_TYPE_KIND[kind],
            getattr(torch, out) if out else None,
        )  # fmt: skip
        assert [name(d) for d in got] == [name(d) for d in want], (dt, kind, out)
