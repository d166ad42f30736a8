"""The view ops: schemas (catalogue), and the ops PyTorch defines as compositions of others
(``CompositeImplicitAutograd``: subclasses and the lazy device see their parts).

A return annotated ``Tensor(a)`` aliases the argument annotated ``(a)``: its kernels build
the result with ``wrap_view`` (NOTE [views and versions] in ``ember/_tensor.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import dtypes
from ember.ops import strides as S
from ember.ops.native._define import define
from ember.ops.native.copies import contiguous_format
from ember.ops.registry import impl, ops
from ember.ops.shapes import broadcast_shapes, wrap_dim

M = ("method",)
NONE: tuple[str, ...] = ()

define("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", variants=M)
define("view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", variants=M)
define("_unsafe_view(Tensor self, SymInt[] size) -> Tensor", variants=NONE)
define("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)")
define("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)")
define("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)")
define("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
define("permute(Tensor(a) self, int[] dims) -> Tensor(a)")
define("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", variants=M)
define("broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)")
define("broadcast_tensors(Tensor[] tensors) -> Tensor[]", variants=("function",))
define("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)")
define("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")
define(
    "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1)"
    " -> Tensor(a)",
    variants=NONE,
)
define("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)")
define("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)")
define("squeeze(Tensor(a) self) -> Tensor(a)")
define("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)")
define("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)")
define("t(Tensor(a) self) -> Tensor(a)")
define("movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)")
define("movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)")
define("alias(Tensor(a) self) -> Tensor(a)", variants=NONE)
define(
    "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None)"
    " -> Tensor(a)"
)
define("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]")
define("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
define("split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]")
define("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]")
define("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]")
define("swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)")
define("swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
define("moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)")
define("moveaxis.int(Tensor(a) self, int source, int destination) -> Tensor(a)")
define("tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]")
define("tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]")
define(
    "tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, "
    "Tensor tensor_indices_or_sections, int dim=0) -> Tensor(a)[]",
    tags=("data_dependent_output",),  # the pieces depend on the index tensor's values
)
for _name in ("hsplit", "vsplit", "dsplit"):
    define(f"{_name}.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]")
    define(f"{_name}.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]")
for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    define(f"{_name}(Tensor self) -> Tensor", variants=("function",))
    define(f"{_name}.Sequence(Tensor[] tensors) -> Tensor[]", variants=("function",))
define("ravel(Tensor(a) self) -> Tensor(a)")
define("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", variants=M)
# shaped like another tensor (methods only, as in PyTorch)
define("view_as(Tensor(a) self, Tensor other) -> Tensor(a)", variants=M)
define("reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)", variants=M)
define("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", variants=M)

# complex numbers (NOTE [complex views]): view_as_real has kernels; the others are
# compositions, as in PyTorch
F = ("function",)
define("view_as_real(Tensor(a) self) -> Tensor(a)", variants=F)
define("real(Tensor(a) self) -> Tensor(a)", variants=F)  # Tensor.real is a property
define("imag(Tensor(a) self) -> Tensor(a)", variants=F)  # Tensor.imag is a property
define("conj(Tensor(a) self) -> Tensor(a)")
define("resolve_conj(Tensor(a) self) -> Tensor(a)")
define("is_conj(Tensor self) -> bool")
define("is_complex(Tensor self) -> bool")
define("is_floating_point(Tensor self) -> bool")
define("numel(Tensor self) -> int")


# --------------------------------------------------------------------------- compositions

aten = ops.aten
IMPLICIT = "CompositeImplicitAutograd"
_view = aten.view.default._dispatch


@impl(aten.reshape.default, IMPLICIT)
def reshape(self: Any, shape: Sequence[int]) -> Any:
    """A view when the strides allow one, else a contiguous copy (PyTorch's rule)."""
    data = self._edata
    if type(data) is np.ndarray and data.flags.c_contiguous and 1 not in data.shape:
        return _view(self, shape)
    new = S.infer_size(shape, math.prod(data.shape))
    if S.view_strides(tuple(data.shape), self.stride(), new) is not None:
        return aten.view.default(self, shape)
    copy = aten.clone.default(self, memory_format=contiguous_format)
    return aten._unsafe_view.default(copy, new)


@impl(aten.flatten.using_ints, IMPLICIT)
def flatten(self: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    shape = tuple(self._edata.shape)
    if not shape:
        return aten.reshape.default(self, [1])
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    return aten.reshape.default(self, [*shape[:s], math.prod(shape[s : e + 1]), *shape[e + 1 :]])


@impl(aten.unflatten.int, IMPLICIT)
def unflatten(self: Any, dim: int, sizes: Sequence[int]) -> Any:
    shape = tuple(self._edata.shape)
    d = wrap_dim(dim, len(shape))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = shape[d] if shape else 1
    try:
        filled = S.infer_size(sizes, n)
    except RuntimeError as e:
        if "only one dimension" in str(e):
            raise RuntimeError(f"unflatten: {e} (sizes {list(sizes)})") from None
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({n}) in the input tensor"
        ) from None
    return aten.view.default(self, [*shape[:d], *filled, *shape[d + 1 :]])


@impl(aten.broadcast_to.default, IMPLICIT)
def broadcast_to(self: Any, size: Sequence[int]) -> Any:
    return aten.expand.default(self, size)


@impl(aten.broadcast_tensors.default, IMPLICIT)
def broadcast_tensors(tensors: Sequence[Any]) -> list[Any]:
    """Each tensor expanded to the common broadcast shape (one already of that shape is
    returned itself, as PyTorch's ``expand_outplace`` does)."""
    shape = list(broadcast_shapes(*(tuple(t.shape) for t in tensors), op="broadcast_tensors"))
    return [t if list(t.shape) == shape else aten.expand.default(t, shape) for t in tensors]


@impl(aten.view_as.default, IMPLICIT)
def view_as(self: Any, other: Any) -> Any:
    return aten.view.default(self, list(other.shape))


@impl(aten.reshape_as.default, IMPLICIT)
def reshape_as(self: Any, other: Any) -> Any:
    return aten.reshape.default(self, list(other.shape))


@impl(aten.expand_as.default, IMPLICIT)
def expand_as(self: Any, other: Any) -> Any:
    return aten.expand.default(self, list(other.shape))


@impl(aten.narrow.default, IMPLICIT)
def narrow(self: Any, dim: int, start: int, length: int) -> Any:
    d, s = S.check_narrow(tuple(self._edata.shape), dim, int(start), length)
    return aten.slice.Tensor(self, d, s, s + length)


@impl(aten.movedim.intlist, IMPLICIT)
def movedim(self: Any, source: Sequence[int], destination: Sequence[int]) -> Any:
    return aten.permute.default(self, list(S.movedim_perm(self._edata.ndim, source, destination)))


@impl(aten.movedim.int, IMPLICIT)
def movedim_int(self: Any, source: int, destination: int) -> Any:
    return aten.permute.default(
        self, list(S.movedim_perm(self._edata.ndim, [source], [destination]))
    )


@impl(aten.split.sizes, IMPLICIT)
def split_sizes(self: Any, split_size: Sequence[int], dim: int = 0) -> Any:
    return aten.split_with_sizes.default(self, split_size, dim)


@impl(aten.chunk.default, IMPLICIT)
def chunk(self: Any, chunks: int, dim: int = 0) -> Any:
    shape = tuple(self._edata.shape)
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    size = shape[wrap_dim(dim, len(shape))]
    split_size = S.chunk_size(size, chunks)
    if split_size == 0 and size == 0:
        return aten.split_with_sizes.default(self, [0] * chunks, dim)
    return aten.split.Tensor(self, split_size, dim)


@impl(aten.swapaxes.default, IMPLICIT)
def swapaxes(self: Any, axis0: int, axis1: int) -> Any:
    return aten.transpose.int(self, axis0, axis1)


@impl(aten.swapdims.default, IMPLICIT)
def swapdims(self: Any, dim0: int, dim1: int) -> Any:
    return aten.transpose.int(self, dim0, dim1)


@impl(aten.moveaxis.intlist, IMPLICIT)
def moveaxis(self: Any, source: Sequence[int], destination: Sequence[int]) -> Any:
    return aten.movedim.intlist(self, source, destination)


@impl(aten.moveaxis.int, IMPLICIT)
def moveaxis_int(self: Any, source: int, destination: int) -> Any:
    return aten.movedim.int(self, source, destination)


def _split_dim(self: Any, dim: int) -> int:
    ndim = self._edata.ndim
    if ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    return wrap_dim(dim, ndim)


@impl(aten.tensor_split.sections, IMPLICIT)
def tensor_split_sections(self: Any, sections: int, dim: int = 0) -> Any:
    """``sections`` pieces along ``dim``: the first ``size % sections`` one longer."""
    d = _split_dim(self, dim)
    sections = int(sections)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size = self._edata.shape[d]
    short, extra = divmod(size, sections)
    out, start = [], 0
    for i in range(sections):
        length = short + (1 if i < extra else 0)
        out.append(aten.slice.Tensor(self, d, start, start + length))
        start += length
    return out


@impl(aten.tensor_split.indices, IMPLICIT)
def tensor_split_indices(self: Any, indices: Sequence[int], dim: int = 0) -> Any:
    """The pieces between consecutive ``indices`` along ``dim`` (slice bounds: clamped)."""
    d = _split_dim(self, dim)
    out, start = [], 0
    for i in indices:
        out.append(aten.slice.Tensor(self, d, start, int(i)))
        start = int(i)
    out.append(aten.slice.Tensor(self, d, start, self._edata.shape[d]))
    return out


@impl(aten.tensor_split.tensor_indices_or_sections, IMPLICIT)
def tensor_split_tensor(self: Any, tensor_indices_or_sections: Any, dim: int = 0) -> Any:
    """A 0-dim int64 tensor is a number of sections, a 1-D one a list of indices."""
    t = tensor_indices_or_sections
    if t.device.type == "meta":  # NOTE [data-dependent shapes]
        raise NotImplementedError(
            "tensor_split: the pieces depend on the values of tensor_indices_or_sections, "
            "which a meta tensor does not have; pass a cpu tensor or a list"
        )
    # (PyTorch also wants it on the cpu; ember reads a lazy one's values, which the lazy
    # device computes, so that a lazy program splits as its eager run does)
    if t.dtype is not dtypes.int64:
        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
            f"{t.dtype}"
        )
    if t.ndim == 0:
        return aten.tensor_split.sections(self, int(t.item()), dim)
    if t.ndim == 1:
        return aten.tensor_split.indices(self, [int(v) for v in t.tolist()], dim)
    raise RuntimeError(
        "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
        f"one-dimensional tensor, but got a tensor with {t.ndim} dims"
    )


def _nsplit(name: str, need: int, dim_of: Any) -> tuple[Any, Any]:
    """``hsplit``/``vsplit``/``dsplit``: ``tensor_split`` along a fixed dim, whose size the
    number of sections must divide."""

    def check(self: Any) -> int:
        ndim = self._edata.ndim
        if ndim < need:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {need} dimension"
                f"{'s' if need > 1 else ''}, but got a tensor with {ndim} dimensions!"
            )
        return dim_of(ndim)

    def by_int(self: Any, sections: int) -> Any:
        d = check(self)
        size = self._edata.shape[d]
        if sections == 0 or size % sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {d}, but the size of the "
                f"dimension {size} is not divisible by the split_size {sections}!"
            )
        return aten.tensor_split.sections(self, sections, d)

    def by_array(self: Any, indices: Sequence[int]) -> Any:
        return aten.tensor_split.indices(self, indices, check(self))

    return by_int, by_array


for _name, _need, _dim_of in (
    ("hsplit", 1, lambda n: 1 if n > 1 else 0),
    ("vsplit", 2, lambda n: 0),
    ("dsplit", 3, lambda n: 2),
):
    _int, _array = _nsplit(_name, _need, _dim_of)
    impl(getattr(aten, _name).int, IMPLICIT, _int)
    impl(getattr(aten, _name).array, IMPLICIT, _array)


def _atleast(n: int) -> tuple[Any, Any]:
    def one(self: Any) -> Any:
        ndim = self._edata.ndim
        if ndim >= n:
            return self
        if ndim == 0:
            return aten.reshape.default(self, [1] * n)
        if ndim == 1 and n == 3:
            return aten.unsqueeze.default(aten.unsqueeze.default(self, 0), -1)
        return aten.unsqueeze.default(self, 0 if ndim == 1 else -1)

    def seq(tensors: Sequence[Any]) -> Any:
        return [one(t) for t in tensors]

    return one, seq


for _n in (1, 2, 3):
    _one, _seq = _atleast(_n)
    impl(getattr(aten, f"atleast_{_n}d").default, IMPLICIT, _one)
    impl(getattr(aten, f"atleast_{_n}d").Sequence, IMPLICIT, _seq)


@impl(aten.ravel.default, IMPLICIT)
def ravel(self: Any) -> Any:
    """A view of a contiguous tensor, else a flat contiguous copy."""
    return aten.view.default(aten.contiguous.default(self), [-1])


# --------------------------------------------------------------------------- complex numbers
# NOTE [complex views]
# ``view_as_real(z)`` reads a complex tensor as real (real, imaginary) pairs along a new last
# dim of size 2: a view, strides doubled, in the real dtype. ``real`` and ``imag`` are its
# ``select(-1, 0)`` and ``select(-1, 1)``, so they are views too (writes through ``z.real``
# reach ``z``) and their gradients come from view_as_real's and select's formulas, as in
# PyTorch. ``real`` of a real tensor is the tensor itself; ``imag`` of one raises.
# PyTorch's ``conj`` is a view that sets a lazy conjugate bit, which ``resolve_conj`` and the
# kernels act on later. ember has no conjugate bit: ``conj`` of a complex tensor is
# ``conj_physical``, a new tensor, so a write into it does not reach the original (the one
# behaviour that differs); ``is_conj`` is always False and ``resolve_conj`` returns its input.


def view_as_real_layout(layout: S.Layout, dtype: Any) -> S.Layout:
    """Layout of ``view_as_real`` in real elements (shared by the CPU kernel and the Meta
    rule): a last dim of 2 with stride 1, the other strides and the offset doubled."""
    if not dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    shape, strides, offset = layout
    return (*shape, 2), (*(2 * s for s in strides), 1), 2 * offset


@impl(aten.real.default, IMPLICIT)
def real(self: Any) -> Any:
    """The real part of a complex tensor, as a view in the real dtype; a real tensor itself.

    >>> z = ember.tensor([1 + 2j]); ember.real(z)
    tensor([1.])
    """
    if not self.dtype.is_complex:
        return self
    return aten.select.int(aten.view_as_real.default(self), -1, 0)


@impl(aten.imag.default, IMPLICIT)
def imag(self: Any) -> Any:
    """The imaginary part of a complex tensor, as a view in the real dtype.

    >>> z = ember.tensor([1 + 2j]); ember.imag(z)
    tensor([2.])
    """
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return aten.select.int(aten.view_as_real.default(self), -1, 1)


@impl(aten.conj.default, IMPLICIT)
def conj(self: Any) -> Any:
    """The complex conjugate; a real tensor is returned itself.

    Unlike PyTorch's, the conjugate of a complex tensor is a new tensor (``conj_physical``),
    not a view with a lazy conjugate bit: writes into it do not reach ``self``
    (NOTE [complex views]).

    >>> ember.conj(ember.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    return aten.conj_physical.default(self) if self.dtype.is_complex else self


@impl(aten.resolve_conj.default, IMPLICIT)
def resolve_conj(self: Any) -> Any:
    """``self``: ember never sets a conjugate bit, so there is none to resolve."""
    return self


@impl(aten.is_conj.default, IMPLICIT)
def is_conj(self: Any) -> bool:
    """False: ember has no lazy conjugate bit (NOTE [complex views])."""
    return False


@impl(aten.is_complex.default, IMPLICIT)
def is_complex(self: Any) -> bool:
    """Whether the tensor's dtype is complex.

    >>> ember.is_complex(ember.tensor([1j]))
    True
    """
    return bool(self.dtype.is_complex)


@impl(aten.is_floating_point.default, IMPLICIT)
def is_floating_point(self: Any) -> bool:
    """Whether the tensor's dtype is a floating point one.

    >>> ember.is_floating_point(ember.tensor([1.0])), ember.is_floating_point(ember.tensor([1]))
    (True, False)
    """
    return bool(self.dtype.is_floating_point)


@impl(aten.numel.default, IMPLICIT)
def numel(self: Any) -> int:
    """The number of elements.

    >>> ember.numel(ember.ones(2, 3))
    6
    """
    return math.prod(self.shape)
