"""Contractions and pairwise distances: ``tensordot`` (a composition into ``mm``, as in
PyTorch), ``cdist`` (which PyTorch composes too: into ``_euclidean_dist``, a matrix product,
or into ``_cdist_forward``, a direct computation) and their parts; schemas, the checks the
CPU kernels and Meta rules share, and the compositions.

# NOTE [cdist paths]
``cdist(x1, x2, p)`` computes the p-norm distance of every row of ``x1`` to every row of
``x2``. For ``p = 2`` with more than 25 rows on either side (``compute_mode=None``), or
always with ``"use_mm_for_euclid_dist"``, PyTorch computes ``sqrt(clamp(|a|² - 2 a·b + |b|²,
0))`` with one matrix product (``_euclidean_dist``; fast, but a distance that should be 0
comes out as the square root of a rounding error); otherwise it sums ``|a - b|^p`` directly
(``_cdist_forward``). ember takes the same path for the same call, so its values round as
PyTorch's do, and its gradients are PyTorch's formulas for each path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ember import dtypes
from ember.ops.native._define import define
from ember.ops.registry import impl, ops
from ember.ops.shapes import broadcast_shapes, wrap_dim

if TYPE_CHECKING:
    from ember._tensor import Tensor

F = ("function",)
Shape = tuple[int, ...]

# tensordot's and inner's out takes only the result's dtype, as PyTorch's (kron's takes any)
define("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor",
       variants=F, out=True, exact_out_dtype=True)  # fmt: skip
define("cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor", variants=F)
define("_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
       variants=(), out=True)  # fmt: skip
define("_cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor",
       variants=(), out=True)  # fmt: skip
define("_euclidean_dist(Tensor x1, Tensor x2) -> Tensor", variants=F, out=True)
define("_pdist_forward(Tensor self, float p=2) -> Tensor", variants=(), out=True)
define("_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor",
       variants=(), out=True)  # fmt: skip
define("inner(Tensor self, Tensor other) -> Tensor", out=True, exact_out_dtype=True)
define("kron(Tensor self, Tensor other) -> Tensor", out=True)


# --------------------------------------------------------------------------- shared rules


def cdist_plan(x1: Tensor, x2: Tensor, p: float, compute_mode: int | None) -> tuple[Shape, bool]:
    """``_cdist_forward``'s checks; returns (result shape, whether the matrix-product path is
    taken: NOTE [cdist paths])."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.category != dtypes.FLOATING:
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {x.dtype._short}"
            )
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values (got p = {p})")
    mode = 0 if compute_mode is None else compute_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(f"cdist: possible modes: 0, 1, 2, but was: {mode}")
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]), op="cdist")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mm = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if x1.dtype is dtypes.float16 and not mm and x1.numel() and x2.numel():
        # the direct kernel has no half version (and runs for no empty input)
        raise NotImplementedError("\"cdist\" not implemented for 'Half'")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(
            f"cdist: expected scalar type {x1.dtype._short} but found {x2.dtype._short} (x1 "
            "and x2 must have one dtype)"
        )
    return (*batch, r1, r2), mm


def tensordot_dims(
    self: Tensor, other: Tensor, dims_self: Sequence[int], dims_other: Sequence[int]
) -> tuple[list[int], list[int]]:
    """``tensordot``'s checks; returns both dim lists wrapped."""
    if len(dims_self) != len(dims_other):
        raise RuntimeError(
            f"tensordot: both dimension lists should have same length (got {list(dims_self)} "
            f"and {list(dims_other)})"
        )
    if self.dtype is not other.dtype:
        raise RuntimeError(
            f"tensordot: both inputs should have same dtype (got {self.dtype} and "
            f"{other.dtype}); convert one with .to()"
        )
    out = []
    for x, dims in ((self, dims_self), (other, dims_other)):
        wrapped = [wrap_dim(d, x.ndim, "tensordot") for d in dims]
        for d in wrapped:
            if wrapped.count(d) > 1:
                raise RuntimeError(f"tensordot: dim {d} appears multiple times in the list of dims")
        out.append(wrapped)
    return out[0], out[1]


# --------------------------------------------------------------------------- compositions

aten = ops.aten
CIA = "CompositeImplicitAutograd"


@impl(aten.tensordot.default, CIA)
def tensordot(
    self: Tensor, other: Tensor, dims_self: Sequence[int], dims_other: Sequence[int]
) -> Tensor:
    """The contraction of ``self``'s ``dims_self`` with ``other``'s ``dims_other``, as one
    ``mm`` of the two permuted and reshaped (size-1 contracted dims summed first)."""
    d1, d2 = tensordot_dims(self, other, dims_self, dims_other)
    t1, t2, csize = self, other, 1
    for a, b in zip(d1, d2, strict=True):
        s1, s2 = self.shape[a], other.shape[b]
        if s2 == 1:  # broadcast: summed right away
            t1 = aten.sum.dim_IntList(t1, [a], True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = aten.sum.dim_IntList(t2, [b], True, dtype=t2.dtype)
        elif s1 != s2:
            raise RuntimeError(
                f"tensordot: contracted dimensions need to match, but first has size {s1} in "
                f"dim {a} and second has size {s2} in dim {b}"
            )
        else:
            csize *= s1
    keep1 = [i for i in range(self.ndim) if i not in d1]
    keep2 = [i for i in range(other.ndim) if i not in d2]
    size1 = size2 = 1
    for i in keep1:
        size1 *= t1.shape[i]
    for i in keep2:
        size2 *= t2.shape[i]
    sizes = [t1.shape[i] for i in keep1] + [t2.shape[i] for i in keep2]
    if not keep1 and not keep2:  # a full contraction: a sum of products, as PyTorch does it
        p1, p2 = aten.permute.default(t1, d1), aten.permute.default(t2, d2)
        product = aten.mul.Tensor(aten.squeeze.default(p1), aten.squeeze.default(p2))
        return aten.view.default(aten.sum.default(product, dtype=self.dtype), [])
    m1 = aten.reshape.default(aten.permute.default(t1, keep1 + d1), [size1, csize])
    m2 = aten.reshape.default(aten.permute.default(t2, d2 + keep2), [csize, size2])
    return aten.reshape.default(aten.mm.default(m1, m2), sizes)


@impl(aten.cdist.default, CIA)
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: int | None = None) -> Tensor:
    """Pairwise p-norm distances by the path PyTorch takes (NOTE [cdist paths])."""
    shape, mm = cdist_plan(x1, x2, p, compute_mode)
    if x1.numel() == 0 or x2.numel() == 0 or not mm:
        return aten._cdist_forward.default(x1, x2, p, compute_mode)
    batch = list(shape[:-2])
    n = 1
    for b in batch:
        n *= b
    c = x1.shape[-1]
    flat = [
        aten.view.default(
            aten.contiguous.default(aten.expand.default(x, [*batch, x.shape[-2], c])),
            [n, x.shape[-2], c],
        )
        for x in (x1, x2)
    ]
    return aten.view.default(aten._euclidean_dist.default(*flat), list(shape))


def euclidean_shape(x1: Tensor, x2: Tensor) -> tuple[Shape, dtypes.dtype]:
    """``_euclidean_dist``'s checks; returns the result shape and dtype (an integer input
    raises, as PyTorch's in-place square root of its product does)."""
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"_euclidean_dist: x1 and x2 must have the same number of columns ({x1.shape[-1]} "
            f"and {x2.shape[-1]})"
        )
    d = dtypes.promote_types(x1.dtype, x2.dtype)
    if d.category == dtypes.COMPLEX:
        raise NotImplementedError(
            "_euclidean_dist: clamp is not supported for complex types (the distance of "
            "complex rows is not defined this way)"
        )
    if d.category < dtypes.FLOATING:
        raise RuntimeError(
            f"_euclidean_dist: result type Float can't be cast to the desired output type "
            f"{d._short}; pass floating point inputs"
        )
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]), op="_euclidean_dist")
    return (*batch, x1.shape[-2], x2.shape[-2]), d


@impl(aten.inner.default, CIA)
def inner(self: Tensor, other: Tensor) -> Tensor:
    """The sums of products over both inputs' last dims (a 0-dim input scales the other)."""
    if self.ndim == 0 or other.ndim == 0:
        return aten.mul.Tensor(self, other)
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(self.shape)} and {list(other.shape)}"
        )
    if self.ndim == 1 == other.ndim:  # PyTorch's tensordot contracts two vectors with dot
        return aten.dot.default(self, other)
    return aten.tensordot.default(self, other, [-1], [-1])


@impl(aten.kron.default, CIA)
def kron(self: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: ``self``'s dims interleaved with ``other``'s (the shorter shape
    padded with leading 1s), multiplied, and each pair merged."""
    n = max(self.ndim, other.ndim)
    a = [1] * (n - self.ndim) + list(self.shape)
    b = [1] * (n - other.ndim) + list(other.shape)
    left = aten.reshape.default(self, [s for d in a for s in (d, 1)])
    right = aten.reshape.default(other, [s for d in b for s in (1, d)])
    return aten.reshape.default(
        aten.mul.Tensor(left, right), [x * y for x, y in zip(a, b, strict=True)]
    )


def pdist_half_check(self: Tensor) -> None:
    """PyTorch's pdist kernel has no half precision (reached only with two rows and columns)."""
    if self.dtype.itemsize < 4 and self.shape[0] > 1 and self.shape[1]:
        raise NotImplementedError(f"\"pdist\" not implemented for '{self.dtype._short}'")
