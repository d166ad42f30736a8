"""Sample inputs for the view ops (see ember/testing/_internal/opinfo.py).

View results are compared with PyTorch's including strides; inputs cover contiguous,
non-contiguous (every other element), transposed, 0-dim and empty tensors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember._factory import tensor
from ember.testing._internal.opinfo import ALL_DTYPES, ErrorInput, SampleInput, errors, samples

S = SampleInput
VIEW_DTYPES = (dtypes.float32, dtypes.int64, dtypes.bool_, dtypes.complex64)


def _t(make: Any, shape: tuple[int, int]) -> Any:
    """A transposed (column-major) tensor of ``shape``."""
    return make((shape[1], shape[0])).t()


@samples("view.default", "_unsafe_view.default", dtypes=ALL_DTYPES)
def view_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), (6, 4))
    yield S(make((2, 3, 4)), (-1,), name="infer")
    yield S(make((2, 3, 4)), (2, -1, 2), name="infer middle")
    yield S(make((2, 3, 4)), (2, 1, 3, 1, 4), name="size-1 dims")
    yield S(make((1, 3, 1)), (3,), name="drop size-1")
    yield S(make(()), (1, 1), name="0-dim")
    yield S(make((1,)), (), name="to 0-dim")
    yield S(make((0, 3)), (3, 0), name="empty")
    yield S(make((0, 3)), (-1, 3), name="empty infer")
    yield S(make((4, 6), noncontiguous=True), (2, 2, 6), name="noncontiguous split")
    yield S(make((4, 6), noncontiguous=True), (24,), name="noncontiguous flatten raises")
    yield S(_t(make, (3, 4)), (3, 2, 2), name="transposed split")
    yield S(_t(make, (3, 4)), (12,), name="transposed flatten raises")
    yield S(make((2, 3)), (4,), name="bad numel raises")
    yield S(make((2, 3)), (-1, -1), name="two -1 raise")
    yield S(make((2, 3)), (-2, 3), name="negative size raises")


@samples("view.dtype", dtypes=VIEW_DTYPES)
def view_dtype_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for target in (dtypes.float32, dtypes.int16, dtypes.int64, dtypes.uint8, dtypes.bool_):
        yield S(make((2, 4)), target)
        yield S(make((3, 4), noncontiguous=True), target, name="noncontiguous")
        yield S(_t(make, (2, 4)), target, name="transposed")
    yield S(make(()), dtypes.int64, name="0-dim")


@samples("reshape.default", dtypes=ALL_DTYPES)
def reshape_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), (6, 4))
    yield S(make((2, 3, 4)), (-1,))
    yield S(make(()), (1,), name="0-dim")
    yield S(make((0, 3)), (3, -1), name="empty")
    yield S(make((4, 6), noncontiguous=True), (2, 2, 6), name="noncontiguous view")
    yield S(make((4, 6), noncontiguous=True), (24,), name="noncontiguous copy")
    yield S(_t(make, (3, 4)), (12,), name="transposed copy")
    yield S(make((2, 3)), (5,), name="bad numel raises")


@samples("flatten.using_ints", dtypes=ALL_DTYPES)
def flatten_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)))
    yield S(make((2, 3, 4)), 1)
    yield S(make((2, 3, 4)), 0, 1)
    yield S(make((2, 3, 4)), start_dim=-2, end_dim=-1, name="kwargs")
    yield S(make((2, 3, 4)), 1, 1, name="one dim: self")
    yield S(make(()), name="0-dim")
    yield S(make((2, 0, 3)), name="empty")
    yield S(make((3, 4), noncontiguous=True), name="noncontiguous copy")
    yield S(make((2, 3)), 1, 0, name="start after end raises")


@samples("unflatten.int", dtypes=ALL_DTYPES)
def unflatten_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 6)), 1, (2, 3))
    yield S(make((2, 6)), -1, (3, -1), name="infer")
    yield S(make((6, 2)), 0, (1, 6, 1), name="size-1")
    yield S(make((6, 4), noncontiguous=True), 0, (2, 3), name="noncontiguous")
    yield S(make((2, 6)), 1, (4, 2), name="bad sizes raise")
    yield S(make((2, 6)), 1, (), name="empty sizes raise")


@samples("transpose.int", dtypes=ALL_DTYPES)
def transpose_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), 0, 2)
    yield S(make((2, 3, 4)), -1, 1, name="negative dims")
    yield S(make((2, 3)), 1, 1, name="same dim")
    yield S(make(()), 0, -1, name="0-dim")
    yield S(make((3, 4), noncontiguous=True), 0, 1, name="noncontiguous")
    yield S(make((2, 3)), 0, 2, name="dim out of range raises")


@samples("t.default", dtypes=ALL_DTYPES)
def t_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3)))
    yield S(make((3,)))
    yield S(make(()))
    yield S(make((3, 4), noncontiguous=True))
    yield S(make((2, 3, 4)), name="3-d raises")


@samples("permute.default", dtypes=ALL_DTYPES)
def permute_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), (2, 0, 1))
    yield S(make((2, 3, 4)), (-1, 0, -2), name="negative dims")
    yield S(make(()), (), name="0-dim")
    yield S(make((3, 4), noncontiguous=True), (1, 0), name="noncontiguous")
    yield S(make((2, 3)), (0,), name="too few dims raise")
    yield S(make((2, 3)), (0, 0), name="repeated dim raises")


@samples("expand.default", dtypes=ALL_DTYPES)
def expand_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 1)), (3, 4))
    yield S(make((3, 1)), (2, 3, 4), name="new leading dim")
    yield S(make((3, 1)), (-1, 4), name="-1 keeps")
    yield S(make(()), (2, 3), name="0-dim")
    yield S(make((1, 0)), (2, 0), name="empty")
    yield S(make((1, 4), noncontiguous=True), (3, 4), name="noncontiguous")
    yield S(make((3, 1)), (3, 4), implicit=True, name="kwarg")
    yield S(make((3, 2)), (3, 4), name="non-singleton raises")
    yield S(make((3, 2)), (2,), name="too few sizes raise")


@samples("broadcast_to.default", dtypes=ALL_DTYPES)
def broadcast_to_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 1)), (2, 3, 4))
    yield S(make(()), (2,))
    yield S(make((4,), noncontiguous=True), (2, 4))
    yield S(make((3,)), (4,), name="mismatch raises")


@samples("narrow.default", dtypes=ALL_DTYPES)
def narrow_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((4, 5)), 0, 1, 2)
    yield S(make((4, 5)), -1, -3, 2, name="negative dim and start")
    yield S(make((4, 5)), 1, 5, 0, name="empty at end")
    yield S(make((4, 6), noncontiguous=True), 1, 2, 3, name="noncontiguous")
    yield S(make((4, 5)), 0, 3, 2, name="past the end raises")
    yield S(make((4, 5)), 0, 9, 0, name="start out of range raises")
    yield S(make(()), 0, 0, 1, name="0-dim raises")


@samples("select.int", dtypes=ALL_DTYPES)
def select_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)), 0, 1)
    yield S(make((3, 4)), 1, -1, name="negative index")
    yield S(make((3, 4, 5)), -2, 2, name="negative dim")
    yield S(make((3,)), 0, 2, name="to 0-dim")
    yield S(make((3, 4), noncontiguous=True), 1, 2, name="noncontiguous")
    yield S(make((3, 4)), 0, 3, name="index out of range raises")
    yield S(make((3, 4)), 2, 0, name="dim out of range raises")
    yield S(make(()), 0, 0, name="0-dim raises")


@samples("slice.Tensor", dtypes=ALL_DTYPES)
def slice_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((5, 4)))
    yield S(make((5, 4)), 0, 1, 3)
    yield S(make((5, 4)), 1, 0, 4, 2, name="step")
    yield S(make((5, 4)), 0, -3, -1, name="negative bounds")
    yield S(make((5, 4)), 0, -9, 99, name="clamped bounds")
    yield S(make((5, 4)), 0, 3, 1, name="end before start: empty")
    yield S(make((5, 4)), 1, None, 2, name="None start")
    yield S(make((5, 4)), -1, 1, 2**63 - 1, 3, name="INT64_MAX end")
    yield S(make((5, 4)), dim=1, start=1, step=2, name="kwargs")
    yield S(make((4, 6), noncontiguous=True), 1, 1, 5, 2, name="noncontiguous")
    yield S(make((0, 3)), 0, 0, 1, name="empty")
    yield S(make((5, 4)), 0, 0, 4, 0, name="step 0 raises")
    yield S(make(()), 0, name="0-dim raises")


@samples("diagonal.default", dtypes=ALL_DTYPES)
def diagonal_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)))
    yield S(make((3, 4)), 1)
    yield S(make((3, 4)), -2, name="below")
    yield S(make((3, 4)), 5, name="past the end: empty")
    yield S(make((2, 3, 4)), 0, 2, 0, name="dims")
    yield S(make((2, 3, 4)), offset=-1, dim1=-1, dim2=1, name="kwargs")
    yield S(make((4, 6), noncontiguous=True), 1, name="noncontiguous")
    yield S(make((3, 4)), 0, 1, 1, name="same dims raise")


@samples("unsqueeze.default", dtypes=ALL_DTYPES)
def unsqueeze_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for d in (0, 1, 2, -1, -3):
        yield S(make((2, 3)), d)
        yield S(make((2, 4), noncontiguous=True), d, name="noncontiguous")
    yield S(_t(make, (3, 4)), 1, name="transposed")
    yield S(make(()), 0, name="0-dim")
    yield S(make((0, 2)), 1, name="empty")
    yield S(make((2, 3)), 3, name="dim out of range raises")


@samples("squeeze.default", dtypes=ALL_DTYPES)
def squeeze_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((1, 3, 1, 2)))
    yield S(make((2, 3)))
    yield S(make((1, 1)))
    yield S(make(()))
    yield S(make((3, 1, 4), noncontiguous=True))


@samples("squeeze.dim", dtypes=ALL_DTYPES)
def squeeze_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((1, 3, 1)), 0)
    yield S(make((1, 3, 1)), -1)
    yield S(make((1, 3, 1)), 1, name="not size 1: unchanged")
    yield S(make(()), 0, name="0-dim")
    yield S(make((3, 1, 4), noncontiguous=True), 1, name="noncontiguous")
    yield S(make((1, 3)), 2, name="dim out of range raises")


@samples("squeeze.dims", dtypes=ALL_DTYPES)
def squeeze_dims_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((1, 3, 1)), (0, 2))
    yield S(make((1, 3, 1)), (-1, 1), name="mixed")
    yield S(make((1, 3, 1)), (), name="none")
    yield S(make((3, 1, 4), noncontiguous=True), (1,), name="noncontiguous")
    yield S(make((1, 3)), (0, 5), name="dim out of range raises")


@samples("movedim.intlist", "moveaxis.intlist", dtypes=ALL_DTYPES)
def movedim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), (0,), (2,))
    yield S(make((2, 3, 4, 5)), (0, -1), (-1, 1), name="two")
    yield S(make((2, 3, 4)), (), (), name="none")
    yield S(make((3, 4), noncontiguous=True), (0,), (1,), name="noncontiguous")
    yield S(make((2, 3)), (0, 1), (0,), name="lengths differ raise")
    yield S(make((2, 3)), (0, 0), (0, 1), name="repeated raises")


@samples("movedim.int", "moveaxis.int", dtypes=ALL_DTYPES)
def movedim_int_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), 0, -1)
    yield S(make((2, 3, 4)), 2, 0)
    yield S(make(()), 0, 0, name="0-dim")
    yield S(make((2, 3)), 0, 2, name="out of range raises")


@samples("alias.default", dtypes=ALL_DTYPES)
def alias_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3)))
    yield S(make(()))
    yield S(make((3, 4), noncontiguous=True))


# meta_errors=False: the bounds check needs the storage size, which a meta tensor lacks
@samples("as_strided.default", dtypes=ALL_DTYPES, meta_errors=False)
def as_strided_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)), (2, 2), (1, 2))
    yield S(make((3, 4)), (3, 3), (1, 1), 2, name="overlapping, offset")
    yield S(make((3, 4)), (2,), (0,), name="stride 0")
    yield S(make((3, 4)), (4, 3), (1, 4), storage_offset=0, name="kwarg")
    yield S(make((3, 4)), (0, 5), (9, 9), 12, name="empty")
    yield S(make((3, 4), noncontiguous=True), (2, 2), (8, 2), 2, name="noncontiguous")
    yield S(make((3, 4)), (4, 4), (4, 1), name="out of bounds raises")
    yield S(make((3, 4)), (2,), (1, 1), name="length mismatch raises")
    yield S(make((3, 4)), (2,), (1,), -1, name="negative offset raises")


@samples("unbind.int", dtypes=ALL_DTYPES)
def unbind_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)))
    yield S(make((3, 4)), 1)
    yield S(make((2, 3, 4)), -1, name="negative dim")
    yield S(make((0, 3)), 0, name="empty")
    yield S(make((3, 4), noncontiguous=True), 1, name="noncontiguous")
    yield S(make(()), name="0-dim raises")


@samples("split.Tensor", dtypes=ALL_DTYPES)
def split_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((5, 4)), 2)
    yield S(make((5, 4)), 2, 1)
    yield S(make((5, 4)), 7, name="larger than dim")
    yield S(make((5, 4)), 1, -1, name="negative dim")
    yield S(make((0, 4)), 2, name="empty")
    yield S(make((0, 4)), 0, name="0 on empty")
    yield S(make((4, 6), noncontiguous=True), 4, 1, name="noncontiguous")
    yield S(make((5, 4)), -1, name="negative size raises")
    yield S(make(()), 1, name="0-dim raises")


@samples("split.sizes", "split_with_sizes.default", dtypes=ALL_DTYPES)
def split_with_sizes_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((5, 4)), (2, 3))
    yield S(make((5, 4)), (1, 0, 3), 1, name="zero length")
    yield S(make((5, 4)), (4,), -1, name="negative dim")
    yield S(make((4, 6), noncontiguous=True), (1, 5), 1, name="noncontiguous")
    yield S(make((5, 4)), (2, 2), name="wrong sum raises")


@samples("chunk.default", dtypes=ALL_DTYPES)
def chunk_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((5, 4)), 2)
    yield S(make((5, 4)), 3, 1)
    yield S(make((6,)), 4, name="fewer chunks than asked")
    yield S(make((0, 2)), 3, name="empty")
    yield S(make((4, 6), noncontiguous=True), 2, -1, name="noncontiguous")
    yield S(make((5, 4)), 0, name="0 chunks raise")
    yield S(make(()), 1, name="0-dim raises")


# --------------------------------------------------------------------------- complex numbers

COMPLEX_DTYPES = (dtypes.complex64, dtypes.complex128)


def _complex_views(make: Any) -> Iterator[SampleInput]:
    """Inputs for the views of complex tensors as real ones: contiguous, every other element,
    transposed, an offset row, 0-dim and empty."""
    yield S(make((2, 3)))
    yield S(make((3, 4), noncontiguous=True), name="noncontiguous")
    yield S(_t(make, (2, 3)), name="transposed")
    yield S(make((3, 4))[1], name="offset row")
    yield S(make(()), name="0-dim")
    yield S(make((0, 3)), name="empty")


@samples("view_as.default", "reshape_as.default", dtypes=VIEW_DTYPES)
def view_as_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), make((6, 4), dtypes.float64), name="other's dtype is not used")
    yield S(make((2, 3)), make((3, 2)))
    yield S(make(()), make((1, 1)), name="0-dim")
    yield S(make((0, 3)), make((3, 0)), name="empty")
    yield S(make((4, 6), noncontiguous=True), make((2, 2, 6)), name="noncontiguous split")
    yield S(_t(make, (3, 4)), make((12,)), name="transposed: reshape copies, view raises")
    yield S(make((2, 3)), make((4,)), name="bad numel raises")


@samples("expand_as.default", dtypes=VIEW_DTYPES)
def expand_as_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3,)), make((2, 3)))
    yield S(make((3, 1)), make((3, 4), dtypes.bool_), name="size-1 dim")
    yield S(make(()), make((2, 2)), name="0-dim")
    yield S(make((1, 3), noncontiguous=True), make((2, 0, 3)), name="to empty")
    yield S(make((2, 3)), make((3, 3)), name="mismatch raises")


@samples("is_floating_point.default", "numel.default", dtypes=ALL_DTYPES)
def metadata_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3)))
    yield S(make(()), name="0-dim")
    yield S(make((0, 4)), name="empty")
    yield S(make((3, 4), noncontiguous=True), name="noncontiguous")


@samples("view_as_real.default", dtypes=COMPLEX_DTYPES)
def view_as_real_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _complex_views(make)


@samples("real.default", "imag.default", "resolve_conj.default", "is_conj.default",
         "is_complex.default", dtypes=ALL_DTYPES)  # fmt: skip
def complex_view_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    """Real dtypes too: ``real`` returns the tensor itself, ``imag`` raises."""
    yield from _complex_views(make)


# PyTorch's conj of a complex tensor is a view with the conjugate bit set, whose values
# numpy() refuses to read: compared with conj_physical, which ember's conj is (a copy, NOTE
# [complex views] in ember/ops/native/views.py), so strides are those of a new tensor
samples("conj.default", dtypes=ALL_DTYPES, torch_name="conj_physical.default",
        check_strides=False)(complex_view_samples)  # fmt: skip


@errors("view_as_real.default")
def view_as_real_errors() -> Iterator[ErrorInput]:
    for d in (dtypes.float32, dtypes.int64, dtypes.bool_):
        yield ErrorInput(S(ember.zeros(3, dtype=d)), RuntimeError, "only supported for complex")


@errors("imag.default")
def imag_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(S(ember.zeros(3)), RuntimeError, "non-complex dtypes")


@errors("view.default")
def view_errors() -> Iterator[ErrorInput]:
    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    yield ErrorInput(S(x.t(), (6,)), RuntimeError, r"view size is not compatible .* \.reshape")
    yield ErrorInput(S(x, (4,)), RuntimeError, r"shape '\[4\]' is invalid for input of size 6")


# --------------------------------------------------------------------------- aliases and splits


@samples("swapaxes.default", "swapdims.default", dtypes=ALL_DTYPES)
def swapaxes_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), 0, 2)
    yield S(make((2, 3)), -1, 0, name="negative")
    yield S(make(()), 0, -1, name="0-dim")
    yield S(make((3, 4), noncontiguous=True), 0, 1, name="noncontiguous")
    yield S(make((2, 3)), 0, 2, name="out of range raises")


@samples("tensor_split.sections", dtypes=ALL_DTYPES)
def tensor_split_sections_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((7, 4)), 3)
    yield S(make((5, 4)), 2, 1)
    yield S(make((2, 4)), 5, name="more sections than elements")
    yield S(make((5, 4)), 1, -1, name="negative dim")
    yield S(make((0, 4)), 2, name="empty")
    yield S(make((4, 6), noncontiguous=True), 4, 1, name="noncontiguous")
    yield S(make((5, 4)), 0, name="0 sections raise")
    yield S(make(()), 1, name="0-dim raises")


@samples("tensor_split.indices", dtypes=ALL_DTYPES)
def tensor_split_indices_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((7, 4)), [2, 5])
    yield S(make((5, 4)), [1, -1, 9], 1, name="negative, past the end")
    yield S(make((5, 4)), [3, 1], name="decreasing")
    yield S(make((5, 4)), [], name="no indices")
    yield S(make((4, 6), noncontiguous=True), [2], -1, name="noncontiguous")
    yield S(make(()), [1], name="0-dim raises")


@samples("tensor_split.tensor_indices_or_sections", dtypes=ALL_DTYPES)
def tensor_split_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((7, 4)), ember.tensor(3))
    yield S(make((7, 4)), ember.tensor([1, 4]), 0)
    yield S(make((5, 4)), ember.tensor([2]), dim=1)
    yield S(make((7, 4)), ember.tensor([1.0]), name="float indices raise")
    yield S(make((7, 4)), ember.tensor([[1]]), name="2-D indices raise")


@samples("hsplit.int", dtypes=ALL_DTYPES)
def hsplit_int_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)), 2)
    yield S(make((6,)), 3, name="1-D splits dim 0")
    yield S(make((2, 4, 3)), 4)
    yield S(make((3, 4)), 3, name="not divisible raises")
    yield S(make(()), 1, name="0-dim raises")


@samples("vsplit.int", dtypes=ALL_DTYPES)
def vsplit_int_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((4, 3)), 2)
    yield S(make((6, 2, 2), noncontiguous=True), 3)
    yield S(make((3, 4)), 2, name="not divisible raises")
    yield S(make((4,)), 2, name="1-D raises")


@samples("dsplit.int", dtypes=ALL_DTYPES)
def dsplit_int_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), 2)
    yield S(make((2, 3, 4)), 3, name="not divisible raises")
    yield S(make((4, 2)), 2, name="2-D raises")


@samples("hsplit.array", "vsplit.array", "dsplit.array", dtypes=ALL_DTYPES)
def nsplit_array_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((4, 5, 6)), [1, 3])
    yield S(make((4, 5, 6), noncontiguous=True), [2])
    yield S(make((4, 5, 6)), [-2, 9], name="negative, past the end")
    yield S(make((4, 5, 6)), [], name="no indices")
    yield S(make((4,)), [1], name="1-D")


@samples("atleast_1d.default", "atleast_2d.default", "atleast_3d.default", dtypes=ALL_DTYPES)
def atleast_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make(()))
    yield S(make((3,)))
    yield S(make((2, 3)))
    yield S(make((2, 3, 4)))
    yield S(make((3, 4), noncontiguous=True))


@samples("atleast_1d.Sequence", "atleast_2d.Sequence", "atleast_3d.Sequence", dtypes=ALL_DTYPES)
def atleast_sequence_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S([make(()), make((3,)), make((2, 3)), make((1, 2, 3))])
    yield S([], name="no tensors")


@samples("ravel.default", dtypes=ALL_DTYPES)
def ravel_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)))
    yield S(make(()))
    yield S(make((0, 3)))
    yield S(make((3, 4), noncontiguous=True), name="noncontiguous: a copy")
    yield S(_t(make, (3, 4)), name="transposed: a copy")


@samples("unfold.default", dtypes=ALL_DTYPES)
def unfold_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((7,)), 0, 2, 1, name="overlapping windows")
    yield S(make((3, 8)), 1, 3, 2)
    yield S(make((6, 4)), -2, 2, 3, name="negative dim, a gap")
    yield S(make((4, 6), noncontiguous=True), 0, 2, 2, name="noncontiguous")
    yield S(_t(make, (3, 5)), 1, 5, 1, name="transposed, whole dim")
    yield S(make((3, 4)), 1, 0, 1, name="empty windows")
    yield S(make((0, 4)), 1, 2, 1, name="empty")
    yield S(make(()), 0, 1, 1, name="0-dim")
    yield S(make(()), 0, 0, 1, name="0-dim, size 0")
    yield S(make((3, 4)), 1, 5, 1, name="window too big raises")
    yield S(make((3, 4)), 1, 2, 0, name="step 0 raises")
    yield S(make((3, 4)), 2, 2, 1, name="dim out of range raises")


@samples("broadcast_tensors.default", dtypes=ALL_DTYPES)
def broadcast_tensors_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make((2, 1)), make((3,))])
    yield SampleInput([make((2, 3)), make((2, 3))], name="same shapes: themselves")
    yield SampleInput([make(()), make((1, 3), noncontiguous=True), make((2, 1, 1))], name="three")
    yield SampleInput([make((2,)), make((2,), dtypes.float64)], name="dtypes are kept")
    yield SampleInput([make((0, 1)), make((3,))], name="empty")
    yield SampleInput([make((2, 3))], name="one")
    yield SampleInput([], name="none")
    yield SampleInput([make((2,)), make((3,))], name="shapes that don't broadcast raise")


def _strided(make: Any, shape: tuple[int, ...]) -> Any:
    """A tensor of ``shape`` with reversed (column-major) strides that is not a view: the
    in-place view ops change a base's geometry (the lazy device refuses a view's)."""
    return make(shape[::-1]).permute(*range(len(shape) - 1, -1, -1)).clone()


@samples("unsqueeze_.default", dtypes=ALL_DTYPES)
def unsqueeze__samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)), 0)
    yield SampleInput(_strided(make, (2, 3)), -1, name="strided, last")
    yield SampleInput(make(()), 0, name="0-dim")
    yield SampleInput(make((2, 3)), 3, name="dim out of range")


@samples("squeeze_.default", dtypes=ALL_DTYPES)
def squeeze__samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((1, 3, 1)))
    yield SampleInput(_strided(make, (2, 1, 3)), name="strided")
    yield SampleInput(make(()), name="0-dim")


@samples("squeeze_.dim", dtypes=ALL_DTYPES)
def squeeze_dim__samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((1, 3, 1)), 0)
    yield SampleInput(make((1, 3, 1)), 1, name="not of size 1: unchanged")
    yield SampleInput(_strided(make, (2, 1)), -1, name="strided")
    yield SampleInput(make((1, 3)), 2, name="dim out of range")


@samples("squeeze_.dims", dtypes=ALL_DTYPES)
def squeeze_dims__samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((1, 3, 1)), [0, 2])
    yield SampleInput(make((1, 3, 1)), [1], name="not of size 1")
    yield SampleInput(make((1, 3, 1)), [], name="none")


@samples("t_.default", dtypes=ALL_DTYPES)
def t__samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)))
    yield SampleInput(make((3,)), name="1-D")
    yield SampleInput(_strided(make, (2, 3)), name="strided")
    yield SampleInput(make((2, 3, 4)), name="3-D raises")


@samples("transpose_.default", "swapaxes_.default", "swapdims_.default", dtypes=ALL_DTYPES)
def transpose__samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3, 4)), 0, 2)
    yield SampleInput(_strided(make, (2, 3)), -1, 0, name="strided, negative")
    yield SampleInput(make((2, 3)), 1, 1, name="same dim")
    yield SampleInput(make(()), 0, -1, name="0-dim")
    yield SampleInput(make((2, 3)), 0, 2, name="dim out of range")
