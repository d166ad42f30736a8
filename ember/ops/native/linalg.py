"""The linear algebra ops: schemas (catalogue), the shape and dtype checks the CPU kernels and
the Meta rules share, and the decompositions of ``matmul`` and ``outer``.

# NOTE [matmul decomposition]
``matmul`` is CompositeImplicitAutograd, as in PyTorch: it runs as ``dot`` (1-D @ 1-D),
``mv`` (2-D @ 1-D), ``mm`` (2-D @ 2-D; 1-D @ 2-D through ``unsqueeze``/``squeeze``), a folded
``mm``/``mv`` (N-D @ 1-D or 2-D, when the batch dims of the left operand view as one:
``view`` then ``_unsafe_view``), else ``bmm`` on operands ``expand``-ed to the broadcast batch
shape and ``reshape``-d to 3-D. So ``__torch_dispatch__`` and the lazy device see the same
parts PyTorch shows them, and the 2-D case costs one extra Python call, no more.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember._warn import warn_user
from ember.dispatch.dispatcher import direct_cpu_kernel
from ember.dispatch.keys import DispatchKey
from ember.dtypes import BOOL, FLOATING, INTEGRAL, dtype, int64, promote_types
from ember.ops.native._define import define
from ember.ops.registry import impl, ops
from ember.ops.shapes import broadcast_shapes

if TYPE_CHECKING:
    from ember._tensor import Tensor


# fmt: off
# their out takes only the result's dtype, as PyTorch's (outer's and addr's take any)
_EXACT_OUT = {"out": True, "exact_out_dtype": True}
define("matmul(Tensor self, Tensor other) -> Tensor", **_EXACT_OUT)
define("mm(Tensor self, Tensor mat2) -> Tensor", **_EXACT_OUT)
define("bmm(Tensor self, Tensor mat2) -> Tensor", **_EXACT_OUT)
define("mv(Tensor self, Tensor vec) -> Tensor", **_EXACT_OUT)
define("dot(Tensor self, Tensor tensor) -> Tensor", **_EXACT_OUT)
define("vdot(Tensor self, Tensor other) -> Tensor", **_EXACT_OUT)  # conj(self)
define("outer(Tensor self, Tensor vec2) -> Tensor", out=True)
define("ger(Tensor self, Tensor vec2) -> Tensor", out=True)
define("chain_matmul(Tensor[] matrices) -> Tensor", variants=("function",), **_EXACT_OUT)
define("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
       inplace=True, **_EXACT_OUT)
define("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
       variants=("function",))
# self * beta + alpha * (a product): of batches, their sum, a matrix-vector and an outer one
define("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) "
       "-> Tensor", inplace=True, **_EXACT_OUT)
define("addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) "
       "-> Tensor", inplace=True, **_EXACT_OUT)
define("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
       inplace=True, **_EXACT_OUT)
define("addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
       inplace=True, out=True)
# fmt: on


# --------------------------------------------------------------------------- shared checks


def _no_bool(d: dtype, kernel: str, *shapes: Sequence[int]) -> None:
    """PyTorch has no bool matrix products, but checks only when there is work to do."""
    if d.category == BOOL and all(0 not in s for s in shapes):
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for 'Bool'; convert the operands with .int() or .float()"
        )


def mm_shape(a: Sequence[int], b: Sequence[int], da: dtype, db: dtype) -> tuple[int, int]:
    """The result shape of ``mm``; PyTorch's errors for non-matrices, mismatched inner sizes
    and dtypes.

    >>> from ember.ops.native.linalg import mm_shape
    >>> mm_shape((2, 3), (3, 4), ember.float32, ember.float32)
    (2, 4)
    """
    if len(a) != 2:
        raise RuntimeError(f"mm: self must be a matrix, got a {len(a)}-D tensor of shape {list(a)}")
    if len(b) != 2:
        raise RuntimeError(f"mm: mat2 must be a matrix, got a {len(b)}-D tensor of shape {list(b)}")
    if a[1] != b[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})"
        )
    if da is not db:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {da.name} != {db.name}; "
            "convert one with .to(other.dtype)"
        )
    _no_bool(da, "addmm_impl_cpu_", a, b)
    return (a[0], b[1])


def bmm_shape(a: Sequence[int], b: Sequence[int], da: dtype, db: dtype) -> tuple[int, int, int]:
    """The result shape of ``bmm`` (3-D operands, equal batch sizes and dtypes)."""
    if len(a) != 3:
        raise RuntimeError(f"bmm: batch1 must be a 3D tensor, got shape {list(a)}")
    if len(b) != 3:
        raise RuntimeError(f"bmm: batch2 must be a 3D tensor, got shape {list(b)}")
    if (b[0], b[1]) != (a[0], a[2]):
        raise RuntimeError(
            f"bmm: Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a[0]}, {a[2]}] but got: [{b[0]}, {b[1]}] (batch1 has shape {list(a)})."
        )
    _no_bool(da, "bmm", a, b)  # before the dtype match, as PyTorch: a bool batch1 has no kernel
    if da is not db:
        raise RuntimeError(f"bmm: expected scalar type {da._short} but found {db._short}")
    return (a[0], a[1], b[2])


def mv_shape(a: Sequence[int], v: Sequence[int], da: dtype, dv: dtype) -> tuple[int]:
    """The result shape of ``mv`` (a matrix and a vector of its column count)."""
    if len(a) != 2 or len(v) != 1:
        raise RuntimeError(
            f"mv: vector + matrix @ vector expected, got 1, {len(a)}, {len(v)} "
            f"(shapes {list(a)} and {list(v)})"
        )
    if a[1] != v[0]:
        raise RuntimeError(f"size mismatch, got input ({a[0]}), mat ({a[0]}x{a[1]}), vec ({v[0]})")
    if da is not dv:
        raise RuntimeError(
            f"mv: addmv input tensors must have the same dtype, but got {da._short} and {dv._short}"
        )
    _no_bool(da, "addmv_impl_cpu", a, v)
    return (a[0],)


def dot_shape(a: Sequence[int], b: Sequence[int], da: dtype, db: dtype) -> tuple[()]:
    """``dot`` gives a 0-dim result of two equally long vectors of one dtype."""
    if len(a) != 1 or len(b) != 1:
        raise RuntimeError(f"dot: 1D tensors expected, but got {len(a)}D and {len(b)}D tensors")
    if da is not db:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {da._short} and {db._short}"
        )
    if a[0] != b[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the "
            f"same number of elements, but got {a[0]} and {b[0]} elements respectively"
        )
    _no_bool(da, "dot")  # even when empty
    return ()


def vdot_shape(a: Sequence[int], b: Sequence[int], da: dtype, db: dtype) -> tuple[()]:
    """``vdot`` (``self`` conjugated, then ``dot``) gives a 0-dim result of two equally long
    vectors of one dtype; PyTorch's checks, in its order, with ``dot``'s messages naming
    ``vdot``, the shapes and the fix.

    >>> from ember.ops.native.linalg import vdot_shape
    >>> vdot_shape((3,), (3,), ember.complex64, ember.complex64)
    ()
    """
    if len(a) != 1 or len(b) != 1:
        raise RuntimeError(
            f"vdot: 1D tensors expected, but got {len(a)}D and {len(b)}D tensors (shapes "
            f"{list(a)} and {list(b)}); vdot takes two vectors: flatten them with .flatten()"
        )
    if da is not db:
        raise RuntimeError(
            f"vdot: expected both vectors to have same dtype, but found {da._short} and "
            f"{db._short}; convert one with .to(other.dtype)"
        )
    if a[0] != b[0]:
        raise RuntimeError(
            f"vdot: inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have "
            f"the same number of elements, but got {a[0]} and {b[0]} elements respectively"
        )
    if da.category == BOOL:  # even when empty, as PyTorch's
        raise NotImplementedError(
            "\"vdot\" not implemented for 'Bool'; convert the operands with .int() or .float()"
        )
    return ()


def addmm_shape(
    s: Sequence[int], a: Sequence[int], b: Sequence[int], ds: dtype, da: dtype, db: dtype
) -> tuple[int, int]:
    """``addmm``: ``mm``'s checks, and ``self`` must broadcast to the product's shape."""
    out = mm_shape(a, b, da, db)
    ok = len(s) <= 2 and all(n in (1, m) for n, m in zip(reversed(s), reversed(out), strict=False))
    if not ok:
        raise RuntimeError(
            f"addmm: The expanded size of the tensor ({out[-1]}) must match the existing size "
            f"({s[-1] if s else 1}) at non-singleton dimension {len(out) - 1}.  Target sizes: "
            f"{list(out)}.  Tensor sizes: {list(s)}"
        )
    if ds is not db:
        raise RuntimeError(
            f"addmm: self and mat2 must have the same dtype, but got {ds._short} and {db._short}"
        )
    return out


def _expands_to(name: str, s: Sequence[int], out: Sequence[int]) -> None:
    """``self`` of the ``add*`` products must broadcast to the product's shape."""
    ok = len(s) <= len(out) and all(
        n in (1, m) for n, m in zip(reversed(s), reversed(out), strict=False)
    )
    if not ok:
        raise RuntimeError(
            f"{name}: The expanded size of the tensor self {list(s)} must match the result's "
            f"size {list(out)} (self broadcasts to the product's shape)"
        )


def baddbmm_shape(
    s: Sequence[int], a: Sequence[int], b: Sequence[int], ds: dtype, da: dtype, db: dtype
) -> tuple[int, int, int]:
    """``baddbmm``: ``self`` broadcastable to ``(b, n, p)`` (checked first, as PyTorch does,
    so a batch with too few dims is an IndexError), ``bmm``'s shapes, one dtype for all."""
    if len(b) < 3 or len(a) < 2:
        raise IndexError(
            f"baddbmm: Dimension out of range: batch1 and batch2 must be 3-D (got shapes "
            f"{list(a)} and {list(b)})"
        )
    _expands_to("baddbmm", s, (a[0], a[1], b[2]))
    out = bmm_shape(a, b, da, da)
    if not ds is da is db:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {ds.name}, batch1: {da.name}, batch2: "
            f"{db.name}"
        )
    _no_bool(da, "baddbmm", a, b)
    return out


def addbmm_shape(
    s: Sequence[int], a: Sequence[int], b: Sequence[int], ds: dtype, da: dtype, db: dtype
) -> tuple[int, int]:
    """``addbmm``: ``bmm``'s shapes, the batch summed; ``self`` broadcastable to it."""
    for name, x in (("batch1", a), ("batch2", b)):
        if len(x) != 3:
            raise RuntimeError(f"{name} must be a 3D tensor, got shape {list(x)}")
    if a[0] != b[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {a[0]} and {b[0]}"
        )
    if a[2] != b[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({a[1]}x{a[2]} and {b[1]}x{b[2]})")
    out = (a[1], b[2])
    _expands_to("addbmm", s, out)
    if ds is not db:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {ds._short} and {db._short}"
        )
    if da is not db:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {da.name} != {db.name}"
        )
    _no_bool(da, "addmm_impl_cpu_", a, b)
    return out


def addmv_shape(
    s: Sequence[int], a: Sequence[int], v: Sequence[int], ds: dtype, da: dtype, dv: dtype
) -> tuple[int]:
    """``addmv``: ``mv``'s shapes, one dtype for all three, ``self`` broadcastable."""
    if len(a) != 2 or len(v) != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {len(s)}, {len(a)}, {len(v)} (shapes "
            f"{list(s)}, {list(a)}, {list(v)})"
        )
    if a[1] != v[0] or not _broadcasts(s, (a[0],)):
        raise RuntimeError(
            f"size mismatch, got input ({s[0] if s else 1}), mat ({a[0]}x{a[1]}), vec ({v[0]})"
        )
    if not ds is da is dv:
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {ds._short}, {da._short}, "
            f"and {dv._short}"
        )
    _no_bool(da, "addmv_impl_cpu", a, v)
    return (a[0],)


def _broadcasts(s: Sequence[int], out: Sequence[int]) -> bool:
    return len(s) <= len(out) and all(
        n in (1, m) for n, m in zip(reversed(s), reversed(out), strict=False)
    )


def addr_shape(
    s: Sequence[int],
    v1: Sequence[int],
    v2: Sequence[int],
    ds: dtype,
    d1: dtype,
    d2: dtype,
    beta: Any,
    alpha: Any,
) -> tuple[tuple[int, int], dtype]:
    """``addr``: two vectors, ``self`` broadcastable to their outer product; the promoted
    dtype (only a bool result takes bool scalars, an integral one no floating scalar)."""
    for name, v in (("vec1", v1), ("vec2", v2)):
        if len(v) != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {len(v)}-D")
    out = (v1[0], v2[0])
    _expands_to("addr", s, out)
    d = promote_types(promote_types(ds, d1), d2)
    if d.category != BOOL:
        for name, x in (("beta", beta), ("alpha", alpha)):
            if isinstance(x, bool):
                raise RuntimeError(
                    f"Boolean {name} only supported for Boolean results (pass a number)"
                )
    if BOOL < d.category <= INTEGRAL:
        for name, x in (("beta", beta), ("alpha", alpha)):
            if isinstance(x, (float, complex)):
                raise RuntimeError(
                    f"For integral input tensors, argument {name} must not be a floating point "
                    "number."
                )
    return out, d


_TERM = re.compile(r"^(?:[A-Za-z]|\.\.\.)*$")


def _einsum_labels(
    equation: str, shapes: Sequence[Sequence[int]]
) -> tuple[list[dict[str, int]], set[str]]:
    """Per operand, ``{label: size}`` (an ellipsis dim is the label ``.k``, ``k`` counted
    from the right; a repeated label is its diagonal, one dim), and the output's labels."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    operands: list[dict[str, int]] = []
    for term, shape in zip(lhs.split(","), shapes, strict=True):
        head, dots, tail = term.partition("...")
        n_ell = len(shape) - len(head) - len(tail) if dots else 0
        names = list(head) + [f".{n_ell - j}" for j in range(n_ell)] + list(tail)
        operands.append(dict(zip(names, shape, strict=False)))
    if arrow:
        out = set(rhs.replace("...", ""))
        if "..." in rhs:
            out |= {name for op in operands for name in op if name.startswith(".")}
    else:
        letters = lhs.replace("...", "").replace(",", "")
        out = {c for c in letters if letters.count(c) == 1}
        out |= {name for op in operands for name in op if name.startswith(".")}
    return operands, out


def _summed(d: dtype) -> dtype:
    """The dtype of ``sum`` of a tensor of dtype ``d`` (bool and integers: int64)."""
    return int64 if d.category <= INTEGRAL else d


def einsum_dtype(equation: str, shapes: Sequence[Sequence[int]], dtypes: Sequence[dtype]) -> dtype:
    """The result dtype of ``einsum``, or PyTorch's error for operands it cannot combine.

    # NOTE [einsum dtypes]
    PyTorch (without opt_einsum, as here) combines the operands left to right: a label no
    later operand and not the output has is summed away first (``sum``: bool and integers
    become int64), or squeezed where its size is 1; a pair with no label left to contract is
    multiplied (``mul``: promoted, so float32 with float64 gives float64); a pair with one
    runs ``bmm``, which takes no mixed dtypes ("expected scalar type Float but found
    Double") and no bool. So ``einsum('i,i->i', f32, f64)`` and ``'i,j->ij'`` are float64
    while ``'i,i->'`` and ``'ij,jk->ik'`` raise. This follows that sequence on dtypes and
    sizes only, so the CPU kernel and the Meta rule agree.

    >>> from ember.ops.native.linalg import einsum_dtype
    >>> einsum_dtype("i,j->ij", [(2,), (3,)], [ember.float32, ember.float64])
    ember.float64
    """
    operands, out = _einsum_labels(equation, shapes)
    last = {name: i for i, op in enumerate(operands) for name in op if name not in out}
    result = dict(operands[0])
    dt = dtypes[0]
    for name in [n for n in result if last.get(n) == 0]:
        if result.pop(name) != 1:
            dt = _summed(dt)
    for i in range(1, len(operands)):
        operand, odt = dict(operands[i]), dtypes[i]
        contracted = False
        for name, size in list(operand.items()):
            if last.get(name) != i:
                continue
            if result.get(name, 1) == 1:  # not (or size 1) in the result: summed here
                result.pop(name, None)
                operand.pop(name)
                if size != 1:  # (size 1 in both: squeezed)
                    odt = _summed(odt)
            elif size == 1:  # size 1 here: summed in the result
                result.pop(name)
                operand.pop(name)
                dt = _summed(dt)
            else:
                contracted = True
        empty = contracted and any(
            operand[n] == 0 for n in operand if last.get(n) == i and result.get(n, 1) != 1
        )
        if empty:  # nothing to contract: zeros, in the later operand's dtype (as PyTorch)
            dt = odt
            for name in [n for n in operand if last.get(n) == i]:
                result.pop(name, None)
                operand.pop(name)
        elif contracted:  # bmm
            if dt.category == BOOL:
                raise NotImplementedError(
                    "einsum(): \"bmm\" not implemented for 'Bool': a contraction of bool "
                    "operands; convert them with .int() or .float()"
                )
            if odt is not dt:
                raise RuntimeError(
                    f"einsum(): expected scalar type {dt._short} but found {odt._short}: a "
                    "contraction (bmm) takes operands of one dtype; cast them with .to()"
                )
            for name in [n for n in operand if last.get(n) == i]:
                result.pop(name, None)
                operand.pop(name)
        else:
            dt = promote_types(dt, odt)
        for name, size in operand.items():
            result[name] = size if result.get(name, 1) == 1 else result[name]
    return dt


def einsum_shape(
    equation: str, shapes: Sequence[Sequence[int]], dtypes: Sequence[dtype]
) -> tuple[int, ...]:
    """The result shape of ``einsum``, with PyTorch's errors for malformed equations, sizes
    that do not broadcast and mixed dtypes.

    >>> from ember.ops.native.linalg import einsum_shape
    >>> einsum_shape("ij,jk->ik", [(2, 3), (3, 4)], [ember.float32] * 2)
    (2, 4)
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    ellipsis: tuple[int, ...] | None = None
    for i, (term, shape) in enumerate(zip(terms, shapes, strict=True)):
        if not _TERM.match(term) or term.count("...") > 1:
            raise RuntimeError(f"einsum(): invalid subscripts {term!r} for operand {i}")
        letters = term.replace("...", "")
        has_ell = "..." in term
        if len(letters) > len(shape) or (not has_ell and len(letters) != len(shape)):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(letters)}) does not "
                f"match the number of dimensions ({len(shape)}) for operand {i}"
                + ("" if has_ell else " and no ellipsis was given")
            )
        before = term.split("...")[0] if has_ell else letters
        n_ell = len(shape) - len(letters)
        dims = list(before) + ["..."] * n_ell + list(term.split("...")[1] if has_ell else "")
        if has_ell:
            ell = tuple(shape[len(before) : len(before) + n_ell])
            ellipsis = ell if ellipsis is None else broadcast_shapes(ellipsis, ell, op="einsum")
        for label, n in zip(dims, shape, strict=True):
            if label == "...":
                continue
            counts[label] = counts.get(label, 0) + 1
            seen = sizes.get(label)
            if seen is None or seen == 1:
                sizes[label] = n
            elif n != seen and n != 1:
                raise RuntimeError(
                    f"einsum(): subscript {label} has size {n} for operand {i} which does not "
                    f"broadcast with previously seen size {seen}"
                )
    if arrow:
        if not _TERM.match(rhs) or rhs.count("...") > 1:
            raise RuntimeError(f"einsum(): invalid output subscripts {rhs!r}")
        out_letters = rhs.replace("...", "")
        for c in out_letters:
            if c not in sizes:
                raise RuntimeError(
                    f"einsum(): output subscript {c} does not appear in the equation for any "
                    "input operand"
                )
            if out_letters.count(c) > 1:
                raise RuntimeError(
                    f"einsum(): output subscript {c} appears more than once in the output"
                )
        head, _, tail = rhs.partition("...") if "..." in rhs else (rhs, "", "")
        ell = (ellipsis or ()) if "..." in rhs else ()
        return tuple(sizes[c] for c in head) + tuple(ell) + tuple(sizes[c] for c in tail)
    implicit = sorted(c for c, k in counts.items() if k == 1)
    return tuple(ellipsis or ()) + tuple(sizes[c] for c in implicit)


# --------------------------------------------------------------------------- decompositions

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


def _can_fold(t: Tensor) -> bool:
    """Whether the batch dims of ``t`` (all but the last) view as one dim without a copy."""
    shape, strides = t.shape, t.stride()
    if 0 in shape:
        return True
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


@impl(aten.matmul.default, _CIA)
def matmul(self: Tensor, other: Tensor) -> Tensor:
    """See NOTE [matmul decomposition]."""
    d1, d2 = self._edata.ndim, other._edata.ndim
    if d1 == 2 and d2 == 2:
        # NOTE [matmul fast path]: when dispatch/ says mm's dispatch would pick its plain cpu
        # kernel for these tensors, run it without computing the key set again
        fn = direct_cpu_kernel(_MM, self, other)
        return _mm(self, other) if fn is None else fn(self, other)
    if d1 == 0 or d2 == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D"
        )
    if d1 == 1 and d2 == 1:
        return aten.dot.default(self, other)
    if d1 == 2 and d2 == 1:
        return aten.mv.default(self, other)
    if d1 == 1 and d2 == 2:
        return aten.squeeze.dim(_mm(aten.unsqueeze.default(self, 0), other), 0)
    # folded into one mm when that needs no copy or, as PyTorch's should_fold, when ``other``
    # requires grad (its gradient is then one mm, not a bmm summed over the batch)
    fold = d1 >= 3 and d2 <= 2 and _can_fold(self)
    if fold or (d1 >= 3 and d2 <= 2 and other.requires_grad):
        s1 = self.shape
        flat = [math.prod(s1[:-1]), s1[-1]]
        folded = aten.view.default(self, flat) if fold else aten.reshape.default(self, flat)
        out = _mm(folded, other) if d2 == 2 else aten.mv.default(folded, other)
        tail = [other.shape[-1]] if d2 == 2 else []
        return aten._unsafe_view.default(out, [*s1[:-1], *tail])
    return _batched(self, other, d1, d2)


def _batched(self: Tensor, other: Tensor, d1: int, d2: int) -> Tensor:
    s1, s2 = tuple(self.shape), tuple(other.shape)
    n, m1 = (s1[-2] if d1 > 1 else 1), s1[-1]
    m2, p = (s2[-2], s2[-1]) if d2 > 1 else (s2[0], 1)
    batch = broadcast_shapes(s1[:-2], s2[:-2], op="matmul")
    b = math.prod(batch)
    if d2 == 1:
        other = aten.unsqueeze.default(other, -1)
    t1 = aten.reshape.default(aten.expand.default(self, [*batch, n, m1]), [b, n, m1])
    t2 = aten.reshape.default(aten.expand.default(other, [*batch, m2, p]), [b, m2, p])
    out_shape = [*batch, *([n] if d1 > 1 else []), *([p] if d2 > 1 else [])]
    return aten._unsafe_view.default(aten.bmm.default(t1, t2), out_shape)


@impl(aten.outer.default, _CIA)
def outer(self: Tensor, vec2: Tensor) -> Tensor:
    for name, t in (("self", self), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return aten.mul.Tensor(aten.view.default(self, [self.shape[0], 1]), vec2)


@impl(aten.ger.default, _CIA)
def ger(self: Tensor, vec2: Tensor) -> Tensor:
    """``outer``'s older name."""
    return aten.outer.default(self, vec2)


_warned_chain_matmul: list[bool] = []


@impl(aten.chain_matmul.default, _CIA)
def chain_matmul(matrices: Sequence[Tensor]) -> Tensor:
    """The product of 2-D matrices (``linalg.multi_dot``'s deprecated predecessor): one matrix
    is copied."""
    if not _warned_chain_matmul:  # PyTorch warns once per process
        _warned_chain_matmul.append(True)
        warn_user(
            "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
            "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors "
            "rather than multiple parameters."
        )
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(
                f"Tensor dimension is {t.ndim}, expected 2 instead. (chain_matmul multiplies "
                "matrices; use linalg.multi_dot for vectors at the ends)"
            )
    if len(matrices) == 1:
        return aten.clone.default(matrices[0])
    return aten.linalg_multi_dot.default(list(matrices))


_MM = aten.mm.default
_mm = _MM._dispatch


# =========================================================================== ember.linalg
# The ops behind ``ember.linalg`` (and ``ember.cholesky``, ``ember.det``, ``ember.inverse``,
# ...), split as PyTorch splits them: the ops with kernels (``linalg_cholesky_ex``,
# ``linalg_inv_ex``, ``_linalg_solve_ex``, ``_linalg_det``, ``_linalg_slogdet``,
# ``_linalg_svd``, ``linalg_qr``, ``_linalg_eigh``, ``linalg_solve_triangular``,
# ``linalg_pinv.atol_rtol_tensor``, ``linalg_lstsq``, ``linalg_cross``, ``cholesky``), and
# CompositeImplicitAutograd ones built on them (``linalg_inv`` is ``linalg_inv_ex`` then
# ``_linalg_check_errors``), in ``ember/ops/native/linalg_composite.py``. Ops PyTorch puts
# in ``torch.linalg`` (``python_module: linalg``) bind no ``ember.<name>``: ``ember/linalg.py``
# binds them without their ``linalg_`` prefix.

_LINALG = ()  # variants: bound by ember/linalg.py, not as ember.<name> or Tensor.<name>
_FN = ("function",)
# exact_out_dtype: PyTorch's linear algebra out= kernels take only the result's dtype (not
# any dtype it casts to safely), its single-output ones included

# fmt: off
define("_linalg_check_errors(Tensor info, str api_name, *, bool is_matrix) -> ()", variants=_FN)
define("linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> "
       "(Tensor L, Tensor info)", variants=_LINALG, out=True, out_overload="L")
define("linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True)
define("cholesky(Tensor self, bool upper=False) -> Tensor", out=True)
define("linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, "
       "bool unitriangular=False) -> Tensor", variants=_LINALG)
define("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
       variants=_LINALG, out=True, out_overload="inverse")
define("linalg_inv(Tensor A) -> Tensor", variants=_LINALG, out=True, exact_out_dtype=True)
define("inverse(Tensor self) -> Tensor", out=True, exact_out_dtype=True)
define("_linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> "
       "(Tensor result, Tensor LU, Tensor pivots, Tensor info)", variants=_FN)
define("linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> "
       "(Tensor result, Tensor info)", variants=_LINALG, out=True)
define("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True)
define("_linalg_det(Tensor A) -> (Tensor result, Tensor LU, Tensor pivots)", variants=_FN)
define("linalg_det(Tensor A) -> Tensor", variants=_LINALG)
define("det(Tensor self) -> Tensor")
define("_linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet, Tensor LU, Tensor pivots)",
       variants=_FN)
define("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", variants=_LINALG)
define("slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)")
define("logdet(Tensor self) -> Tensor")
define("_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *, "
       "str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)", variants=_FN)
define("linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> "
       "(Tensor U, Tensor S, Tensor Vh)", variants=_LINALG, out=True, out_overload="U")
define("linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True)
define("linalg_cond(Tensor self, Scalar? p=None) -> Tensor", variants=_LINALG)
define("linalg_cond.p_str(Tensor self, str p) -> Tensor", variants=_LINALG)
define("svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)",
       out=True, out_overload="U")
define("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)",
       variants=_LINALG, out=True)
define("qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)", out=True, out_overload="Q")
define("linalg_matrix_exp(Tensor self) -> Tensor", variants=_LINALG)
define("matrix_exp(Tensor self) -> Tensor")
define('_linalg_eigh(Tensor A, str UPLO="L", bool compute_v=True) -> '
       "(Tensor eigenvalues, Tensor eigenvectors)", variants=_FN)
define('linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)',
       variants=_LINALG, out=True, out_overload="eigvals", out_arg="eigvals,eigvecs")
define('linalg_eigvalsh(Tensor self, str UPLO="L") -> Tensor',
       variants=_LINALG, out=True, exact_out_dtype=True)
define("linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, "
       "bool hermitian=False) -> Tensor", variants=_LINALG)
define("linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, "
       "bool hermitian=False) -> Tensor", variants=_LINALG)
define("linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor", variants=_LINALG)
define("linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) -> Tensor",
       variants=_LINALG)
define("pinverse(Tensor self, float rcond=1e-15) -> Tensor")
define("linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> "
       "(Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)",
       variants=_LINALG)
define("linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, "
       "Tensor? rtol=None, bool hermitian=False) -> Tensor", variants=_LINALG)
define("linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, "
       "bool hermitian=False) -> Tensor", variants=_LINALG)
define("linalg_matrix_rank(Tensor self, float tol, bool hermitian=False) -> Tensor",
       variants=_LINALG)
define("linalg_matrix_rank.tol_tensor(Tensor input, Tensor tol, bool hermitian=False) -> Tensor",
       variants=_LINALG)
define("linalg_matrix_power(Tensor self, int n) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True)
define("matrix_power(Tensor self, int n) -> Tensor")
define("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True)
define("cross(Tensor self, Tensor other, int? dim=None) -> Tensor",
       out=True, exact_out_dtype=True)
define("linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True)
define("linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor", variants=_LINALG)
define("linalg_multi_dot(Tensor[] tensors) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True)
define("linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)",
       variants=_LINALG)
define("linalg_matmul(Tensor self, Tensor other) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True)
define("linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, "
       "ScalarType? dtype=None) -> Tensor", variants=_LINALG, out=True, exact_out_dtype=True)
define("linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, "
       "ScalarType? dtype=None) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True, out_overload="ord_str_out")
define("linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, "
       "ScalarType? dtype=None) -> Tensor", variants=_LINALG, out=True, exact_out_dtype=True)
define("linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], "
       "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True, out_overload="str_ord_out")
define("frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
       variants=_FN, out=True, exact_out_dtype=True)
define("nuclear_norm(Tensor self, bool keepdim=False) -> Tensor",
       variants=_FN, out=True, exact_out_dtype=True)
define("nuclear_norm.dim(Tensor self, int[2] dim, bool keepdim=False) -> Tensor",
       variants=_FN, out=True, exact_out_dtype=True, out_overload="dim_out")
# fmt: on


# --------------------------------------------------------------------------- shared checks


class LinAlgError(RuntimeError):
    """A linear algebra computation failed on the values it got (a singular matrix, one
    that is not positive-definite, no convergence): ``torch.linalg.LinAlgError``.

    >>> from ember.linalg import LinAlgError
    >>> issubclass(LinAlgError, RuntimeError)
    True
    """


LinAlgError.__module__ = "ember.linalg"

#: how an op refuses float16 (and other dtypes it has no kernel for): PyTorch's words differ
#: by op. ("low", _) raises "Low precision dtypes not supported"; ("kernel", name) raises
#: NotImplementedError '"name" not implemented for ...' as PyTorch's dispatch macros do
Refusal = tuple[str, str]


def matrix_check(
    shape: Sequence[int],
    d: dtype,
    api: str,
    refusal: Refusal,
    *,
    square: bool = True,
    floating: bool = True,
    name: str = "A",
) -> None:
    """PyTorch's checks of a (batch of) matrix input: at least 2-D, square if ``square``,
    floating or complex if ``floating`` (else the kernel refuses integers), and float16
    refused as ``refusal`` says.

    >>> from ember.ops.native.linalg import matrix_check
    >>> matrix_check((2, 3, 3), ember.float32, "linalg.inv", ("low", ""))
    >>> matrix_check((3,), ember.float32, "linalg.inv", ("low", ""))
    Traceback (most recent call last):
      ...
    RuntimeError: linalg.inv: The input tensor A must have at least 2 dimensions.
    """
    matrix_shape_check(shape, api, square=square, name=name)
    check_linalg_dtype(d, api, refusal, floating=floating)


def matrix_shape_check(
    shape: Sequence[int], api: str, *, square: bool = True, name: str = "A"
) -> None:
    """The shape half of ``matrix_check``: ``shape`` has at least 2 dims, and its last two
    are equal if ``square``; PyTorch's messages, naming ``api`` and the input ``name``."""
    if len(shape) < 2:
        raise RuntimeError(f"{api}: The input tensor {name} must have at least 2 dimensions.")
    if square and shape[-1] != shape[-2]:
        raise RuntimeError(
            f"{api}: {name} must be batches of square matrices, but they are {shape[-2]} by "
            f"{shape[-1]} matrices"
        )


def check_floating_input(d: dtype, api: str) -> None:
    """``api`` takes only floating or complex input (RuntimeError naming ``d`` otherwise)."""
    if d.category < FLOATING:
        raise RuntimeError(
            f"{api}: Expected a floating point or complex tensor as input. Got {d._short}"
        )


def check_linalg_dtype(d: dtype, api: str, refusal: Refusal, *, floating: bool = True) -> None:
    """float32, float64, complex64 and complex128 pass; others raise as PyTorch does."""
    if d.category >= FLOATING and d.itemsize >= 4:
        return
    if floating:
        check_floating_input(d, api)
    kind, kernel = refusal
    if kind == "low" and d.category >= FLOATING:
        raise RuntimeError(f"{api}: Low precision dtypes not supported. Got {d._short}")
    raise NotImplementedError(
        f"\"{kernel}\" not implemented for '{d._short}'; convert the input with .float() or "
        ".double()"
    )


def batch_of(shape: Sequence[int]) -> tuple[int, ...]:
    """The batch dims of a (batch of) matrix shape."""
    return tuple(shape[:-2])


def cholesky_plan(shape: Sequence[int], d: dtype, api: str) -> tuple[tuple[int, ...], dtype]:
    """``linalg_cholesky_ex``/``cholesky``: the factor's shape (the input's) and dtype."""
    floating = api != "cholesky"
    matrix_check(shape, d, api, ("kernel", "cholesky_cpu"), floating=floating)
    return tuple(shape), d


def equation_batch(a: Sequence[int], b: Sequence[int], left: bool, api: str) -> tuple[int, ...]:
    """The broadcast batch shape of ``AX = B`` (``left``) or ``XA = B`` for a square ``A``
    and a matrix ``B`` (at least 2 dims), with PyTorch's error when their sizes disagree."""
    n = a[-1]
    if (left and b[-2] != n) or (not left and b[-1] != n):
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{api}: Incompatible shapes of A and B for the equation {eq} ({a[-2]}x{a[-1]} and "
            f"{b[-2]}x{b[-1]})"
        )
    return broadcast_shapes(batch_of(a), batch_of(b), op=api)


def solve_triangular_plan(
    a: Sequence[int], b: Sequence[int], da: dtype, db: dtype, left: bool
) -> tuple[int, ...]:
    """``linalg_solve_triangular``: the result's shape (batch dims broadcast), with PyTorch's
    errors for non-square ``self`` and a ``B`` of the wrong size."""
    api = "linalg.solve_triangular"
    matrix_check(a, da, api, ("kernel", "triangular_solve_cpu"), floating=False)
    if len(b) < 2:
        raise RuntimeError(f"{api}: The input tensor B must have at least 2 dimensions.")
    # (B is cast to self's dtype, the result's)
    batch = equation_batch(a, b, left, api)
    return (*batch, b[-2], b[-1])


def inv_plan(shape: Sequence[int], d: dtype) -> tuple[int, ...]:
    """``linalg_inv_ex``: the inverse's shape; ``info`` has the batch shape."""
    matrix_check(shape, d, "linalg.inv", ("low", ""))
    return tuple(shape)


def solve_is_vector(a: Sequence[int], b: Sequence[int]) -> bool:
    """``B`` is a (batch of) vector(s), not matrices: 1-D, or ``A``'s batch shape plus ``n``
    (PyTorch's rule, which this shape alone decides)."""
    return len(b) == 1 or (len(b) == len(a) - 1 and tuple(b) == tuple(a[:-1]))


def solve_plan(
    a: Sequence[int], b: Sequence[int], da: dtype, db: dtype, left: bool
) -> tuple[tuple[int, ...], bool]:
    """``_linalg_solve_ex``: the result's shape and whether ``B`` is a vector, with PyTorch's
    errors.

    >>> from ember.ops.native.linalg import solve_plan
    >>> solve_plan((2, 3, 3), (3,), ember.float32, ember.float32, True)
    ((2, 3), True)
    """
    api = "linalg.solve"
    matrix_check(a, da, api, ("kernel", "lu_cpu"))
    if da is not db:
        raise RuntimeError(
            f"{api}: Expected A and B to have the same dtype, but found A of type {da._short} "
            f"and B of type {db._short} instead"
        )
    vector = solve_is_vector(a, b)
    n = a[-1]
    bm = (*b, 1) if vector else tuple(b)
    if vector and len(b) == 1:
        bm = (b[0], 1)
    if len(bm) < 2:
        raise RuntimeError(f"{api}: The input tensor B must have at least 1 dimensions.")
    batch = equation_batch(a, bm, left, api)
    if vector:
        return (*batch, n), True
    return (*batch, bm[-2], bm[-1]), False


def det_plan(shape: Sequence[int], d: dtype, api: str) -> tuple[int, ...]:
    """``_linalg_det`` / ``_linalg_slogdet``: the batch shape of the result."""
    refusal = ("kernel", "lu_cpu") if api == "linalg.det" else ("low", "")
    matrix_check(shape, d, api, refusal)
    return batch_of(shape)


def svd_plan(
    shape: Sequence[int], d: dtype, full_matrices: bool, compute_uv: bool, driver: str | None
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``_linalg_svd``: the shapes of ``U``, ``S`` and ``Vh`` (empty ``(0,)`` when not
    computed, as PyTorch returns them)."""
    api = "linalg.svd"
    matrix_check(shape, d, api, ("kernel", "linalg_svd_cpu"), square=False)
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs "
            "with cuSOLVER backend; leave it None on the cpu device"
        )
    *batch, m, n = shape
    k = min(m, n)
    s = (*batch, k)
    if not compute_uv:
        return (0,), s, (0,)
    if full_matrices:
        return (*batch, m, m), s, (*batch, n, n)
    return (*batch, m, k), s, (*batch, k, n)


def qr_plan(shape: Sequence[int], d: dtype, mode: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``linalg_qr``: the shapes of ``Q`` and ``R`` for ``mode`` (reduced, complete, r)."""
    api = "linalg.qr"
    matrix_check(shape, d, api, ("kernel", "geqrf_cpu"), square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )
    *batch, m, n = shape
    k = min(m, n)
    if mode == "r":
        return (0,), (*batch, k, n)
    if mode == "complete":
        return (*batch, m, m), (*batch, m, n)
    return (*batch, m, k), (*batch, k, n)


def eigh_plan(shape: Sequence[int], d: dtype, uplo: str) -> tuple[int, ...]:
    """``_linalg_eigh``: the eigenvalues' shape (the eigenvectors have the input's)."""
    api = "linalg.eigh"
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"{api}: Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    matrix_check(shape, d, api, ("kernel", "linalg_eigh_cpu"), floating=False)
    return tuple(shape[:-1])


def pinv_check(shape: Sequence[int], d: dtype) -> None:
    """``linalg_pinv``: a (batch of) matrix of float32, float64, complex64 or complex128."""
    if len(shape) < 2 or d.category < FLOATING or d.itemsize < 4:
        raise RuntimeError(
            f"linalg.pinv({d._short}{{{list(shape)}}}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types"
        )


def lstsq_plan(
    a: Sequence[int], b: Sequence[int], da: dtype, db: dtype, driver: str | None
) -> tuple[tuple[int, ...], bool, str]:
    """``linalg_lstsq``: the solution's shape, whether ``b`` is a vector, and the driver."""
    api = "torch.linalg.lstsq"
    if da.category < FLOATING or da.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if len(a) < 2:
        raise RuntimeError(f"{api}: input must have at least 2 dimensions.")
    if da is not db:
        raise RuntimeError(
            f"{api}: Expected input and other to have the same dtype, but got input's dtype "
            f"{da._short} and other's dtype {db._short}"
        )
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            f"{api}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    vector = len(b) == len(a) - 1
    if len(b) < 1 or (not vector and len(b) != len(a)):
        raise RuntimeError(
            f"{api}: input.dim() must be greater or equal to other.dim() and (input.dim() - "
            "other.dim()) <= 1"
        )
    m, n = a[-2], a[-1]
    if b[-1 if vector else -2] != m:
        raise RuntimeError(f"{api}: input.size(-2) should match other.size({-1 if vector else -2})")
    batch_b = tuple(b[:-1]) if vector else batch_of(b)
    batch = broadcast_shapes(batch_of(a), batch_b, op=api)
    if vector:
        return (*batch, n), True, driver
    return (*batch, n, b[-1]), False, driver


def cross_plan(
    a: Sequence[int], b: Sequence[int], da: dtype, db: dtype, dim: int
) -> tuple[tuple[int, ...], int]:
    """``linalg_cross``: the broadcast shape and the dim (wrapped), with PyTorch's errors."""
    api = "linalg.cross"
    if len(a) != len(b):
        raise RuntimeError(
            f"{api}: inputs must have the same number of dimensions, got {len(a)} and {len(b)}"
        )
    shape = broadcast_shapes(a, b, op=api)
    nd = len(shape)
    if not -nd <= dim < max(nd, 1) or nd == 0:
        lo, hi = (-nd, nd - 1) if nd else (-1, 0)
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
            if nd
            else f"Dimension specified as {dim} but tensor has no dimensions"
        )
    d = dim % nd
    if a[d] != 3 or b[d] != 3:
        raise RuntimeError(
            f"{api}: inputs dimension {dim} must have length 3. Got {a[d]} and {b[d]}"
        )
    if da is not db:
        raise RuntimeError(
            f"{api}: expected scalar type {da._short} but found {db._short}; cast one operand "
            "with .to(other.dtype)"
        )
    if da.category == BOOL:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    return shape, d
