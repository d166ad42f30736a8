"""Batching rules of the matmul family: ``mm``, ``bmm``, ``mv``, ``dot`` (and ``vdot``, its
first operand conjugated) run as one ``matmul`` on the physical tensors (its broadcasting
carries the batch dimension); the ``add*`` ops are their product plus the scaled input, at
the logical level."""

from __future__ import annotations

from typing import Any

from ember._batched.kernel import batch_rule, materialize, physical, slow_fallback, unwrap
from ember._batched.tensor import Level, is_batched_at, wrap
from ember._tensor import Tensor
from ember.ops.registry import OpOverload, ops

aten = ops.aten


@batch_rule(aten.mm.default, aten.bmm.default)
def mm_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    a, ab = unwrap(args[0], level)
    b, bb = unwrap(args[1], level)
    _check(op, args[0], args[1])
    if op is aten.mm.default and ((ab and bb) or args[0].shape[-1] == 1):
        # one product per example: a bmm (an inner size of 1, one example's weight
        # gradient, runs as one compiled loop: NOTE [stacked outer products])
        return wrap(
            aten.bmm.default(materialize(args[0], level), materialize(args[1], level)), level.level
        )
    if args[0].shape[-1] == 1 and a.dtype == b.dtype:  # bmm's outer products: no sum to do
        return wrap(aten.mul.Tensor(a, b), level.level)
    if op is aten.mm.default and ab:  # the examples' rows as one matrix: one gemm
        return wrap(_rows_times(a, b), level.level)
    return wrap(aten.matmul.default(a, b), level.level)


@batch_rule(aten.mv.default)
def mv_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    m, mb = unwrap(args[0], level)
    v, vb = unwrap(args[1], level)
    _check(op, args[0], args[1])
    if vb:
        return wrap(aten.matmul.default(m, v.unsqueeze(-1)).squeeze(-1), level.level)
    return wrap(aten.matmul.default(m, v), level.level)


@batch_rule(aten.dot.default, aten.vdot.default)
def dot_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    a, ab = unwrap(args[0], level)
    b, bb = unwrap(args[1], level)
    _check(op, args[0], args[1])
    if op is aten.vdot.default and a.is_complex():
        a = aten.conj_physical.default(a)
    if ab and bb:
        return wrap(aten.matmul.default(a.unsqueeze(1), b.unsqueeze(2)).reshape(-1), level.level)
    if ab:
        return wrap(aten.matmul.default(a, b), level.level)
    return wrap(aten.matmul.default(b, a), level.level)


def _rows_times(a: Any, b: Any) -> Any:
    """``a @ b`` for a stack of matrices ``a`` (B, n, k) and one matrix ``b`` (k, m), as one
    (B * n, k) by (k, m) product."""
    batch, n, k = a.shape
    return aten.mm.default(a.reshape(batch * n, k), b).view(batch, n, b.shape[1])


def _check(op: OpOverload, a: Any, b: Any) -> None:
    """The logical shape checks of ``op`` (its errors name the logical shapes)."""
    if op is aten.bmm.default:
        ok = a.dim() == 3 and b.dim() == 3 and a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1]
    elif op is aten.mm.default:
        ok = a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0]
    elif op is aten.mv.default:
        ok = a.dim() == 2 and b.dim() == 1 and a.shape[1] == b.shape[0]
    else:
        ok = a.dim() == 1 and b.dim() == 1 and a.shape[0] == b.shape[0]
    if not ok:
        raise RuntimeError(
            f"{op.name()}: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied"
        )
    if isinstance(a, Tensor) and a.dtype != b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}"
        )


_PRODUCT = {
    aten.addmm.default: aten.mm.default,
    aten.addmv.default: aten.mv.default,
    aten.baddbmm.default: aten.bmm.default,
    aten.addr.default: None,
    aten.addbmm.default: None,
}


@batch_rule(*_PRODUCT, logical=True)
def add_product_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    self_x, m1, m2 = args[:3]
    beta = kw.get("beta", 1)
    alpha = kw.get("alpha", 1)
    if op is aten.addmm.default and _one_gemm(level, self_x, m1, m2):
        return physical(level, _addmm_rows, level, self_x, m1, m2, beta, alpha)
    if op is aten.addr.default:
        prod = aten.mul.Tensor(m1.unsqueeze(1), m2.unsqueeze(0))
    elif op is aten.addbmm.default:
        prod = aten.sum.dim_IntList(aten.bmm.default(m1, m2), [0])
    else:
        prod = _PRODUCT[op](m1, m2)
    if alpha != 1:
        prod = aten.mul.Tensor(prod, alpha)
    if beta == 0:  # self's values are ignored (a NaN in it does not propagate)
        return prod
    return aten.add.Tensor(prod, self_x if beta == 1 else aten.mul.Tensor(self_x, beta))


def _one_gemm(level: Level, self_x: Any, m1: Any, m2: Any) -> bool:
    """Whether ``addmm(self, m1, m2)`` is one physical addmm over the examples' rows: only
    ``m1`` batched (a Linear layer's input), and ``self`` a row (its bias)."""
    return (
        is_batched_at(m1, level.level)
        and not is_batched_at(m2, level.level)
        and not is_batched_at(self_x, level.level)
        and isinstance(self_x, Tensor)
        and m1.dim() == 2 == m2.dim()
        and (self_x.dim() <= 1 or (self_x.dim() == 2 and self_x.shape[0] == 1))
        and (self_x.dim() == 0 or self_x.shape[-1] in (1, m2.shape[1]))
        and m1.dtype == m2.dtype == self_x.dtype
    )


def _addmm_rows(level: Level, self_x: Any, m1: Any, m2: Any, beta: Any, alpha: Any) -> Any:
    """``addmm`` of a batched ``m1`` (B, n, k) as one (B * n, k) product (``_one_gemm``)."""
    a = m1._value
    batch, n, k = a.shape
    if m2.shape[0] != k:
        _check(aten.mm.default, m1, m2)
    out = aten.addmm.default(self_x, a.reshape(batch * n, k), m2, beta=beta, alpha=alpha)
    return wrap(out.view(batch, n, m2.shape[1]), level.level)


@batch_rule(aten.einsum.default)
def einsum_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """One physical einsum: a subscript letter the equation does not use names the batch
    dimension of every batched operand and leads the output (an implicit output is written
    out first: the ellipsis, then the letters used once, in order)."""
    equation, tensors = args[0], list(args[1])
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(tensors):
        return op(*args, **kw)  # PyTorch's error, from the op
    if not arrow:
        letters = [c for c in lhs if c.isalpha()]
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        rhs = ("..." if "..." in lhs else "") + "".join(once)
    free = [c for c in _LETTERS if c not in eq]
    if not free:
        return slow_fallback(op, 0, args, kw)  # all 52 letters used
    z = free[0]
    phys, mapped = [], []
    for term, t in zip(terms, tensors, strict=True):
        v, batched = unwrap(t, level)
        phys.append(v)
        mapped.append(z + term if batched else term)
    new = ",".join(mapped) + "->" + z + rhs
    return wrap(op(new, phys, **kw), level.level)


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
