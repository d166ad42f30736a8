"""Sample inputs for the metadata ops a wrapper subclass may answer (``sym_size``,
``sym_stride``, ``dim``, ``sym_numel``, ``sym_storage_offset``, ``is_contiguous``; see
opinfo.py and NOTE [custom metadata] in ember/_wrapper_metadata.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import SampleInput, samples

_DTYPES = (dtypes.float32, dtypes.int64, dtypes.bool_)


@samples(
    "sym_size.default", "sym_stride.default", "dim.default", "sym_numel.default",
    "sym_storage_offset.default", "is_contiguous.default", dtypes=_DTYPES,
)  # fmt: skip
def metadata_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)), name="contiguous")
    yield SampleInput(make(()), name="0-d")
    yield SampleInput(make((3, 4), noncontiguous=True), name="non-contiguous")
    yield SampleInput(make((0, 3)), name="empty")


@samples("sym_size.int", "sym_stride.int", dtypes=_DTYPES)
def metadata_int_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)), 1)
    yield SampleInput(make((3, 4), noncontiguous=True), 0)


@samples("is_contiguous.memory_format", dtypes=_DTYPES)
def is_contiguous_format_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3, 4, 5)), ember.channels_last, name="row-major, channels_last")
    yield SampleInput(make((2, 3)), ember.contiguous_format)
