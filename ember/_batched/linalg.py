"""Batching rules of the linear-algebra ops whose arguments broadcast their leading (batch)
dimensions against each other: ``linalg_solve_triangular``, ``_linalg_solve_ex`` (what
``linalg.solve`` calls), ``linalg_pinv`` with tensor tolerances, ``linalg_lstsq``,
``linalg_lu_solve`` and ``linalg_ldl_solve``.

Each argument has a number of *core* dimensions the op works on (2 for a matrix, 1 for a
vector, 0 for a tolerance); the ones before are batch dimensions, broadcast from the right
between the arguments. So a batched argument's physical tensor gets size-1 dimensions after
the vmap dimension until every argument has as many batch dimensions as the one with the
most: the vmap dimensions then line up at the front and never meet a logical one.
"""

from __future__ import annotations

from typing import Any

from ember._batched.args import bind, call
from ember._batched.kernel import materialize, register_rule, slow_fallback, unwrap
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.ops.native.ldl import ldl_solve_shape
from ember.ops.native.linalg import lstsq_plan
from ember.ops.registry import OpOverload, ops

aten = ops.aten


def _padded(x: Any, level: Level, core: int, batch_dims: int, expand: bool = False) -> Any:
    """``x``'s physical tensor with ``batch_dims`` batch dimensions after the vmap one;
    an unbatched ``x`` as it is (broadcasting reaches it from the right), or expanded over
    the vmap dimension too with ``expand``."""
    if not isinstance(x, Tensor):
        return x
    v, batched = unwrap(x, level)
    if not batched:
        if not expand:
            return v
        v = materialize(x, level)
    for _ in range(batch_dims - (x.dim() - core)):
        v = v.unsqueeze(1)
    return v


def solve_triangular_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    v = bind(op, args, kw)
    a, b = v["self"], v["B"]
    n = max(a.dim(), b.dim()) - 2
    v["self"], v["B"] = _padded(a, level, 2, n), _padded(b, level, 2, n)
    return wrap(call(op, v), level.level)


def solve_ex_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """A vector right-hand side (PyTorch's rule: 1-D, or A's shape without its last
    dimension) solves as a one-column matrix."""
    v = bind(op, args, kw)
    a, b = v["A"], v["B"]
    left = v.get("left", True)
    vector = b.dim() == 1 or (b.dim() == a.dim() - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    n = max(a.dim() - 2, b.dim() - (1 if vector else 2))
    ap = _padded(a, level, 2, n, expand=True)  # its factors are per example
    bp = _padded(b, level, 1 if vector else 2, n)
    if vector:
        bp = bp.unsqueeze(-1 if left else -2)
    result, lu, pivots, info = call(op, {**v, "A": ap, "B": bp})
    if vector:
        result = result.squeeze(-1 if left else -2)
    size = level.size
    shape = tuple(a.shape)
    return (
        wrap(result, level.level),
        wrap(lu.reshape(size, *shape), level.level),
        wrap(pivots.reshape(size, *shape[:-1]), level.level),
        wrap(info.reshape(size, *shape[:-2]), level.level),
    )


def pinv_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """The tolerances broadcast against the matrices' batch dimensions."""
    v = bind(op, args, kw)
    a = v["self"]
    tols = [n for n in ("atol", "rtol") if isinstance(v.get(n), Tensor)]
    n = max([a.dim() - 2, *(v[t].dim() for t in tols)])
    v["self"] = _padded(a, level, 2, n)
    for t in tols:
        v[t] = _padded(v[t], level, 0, n)
    return wrap(call(op, v), level.level)


def check_errors_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """The examples' ``info`` codes checked as one batch (an error names the batch element)."""
    v = bind(op, args, kw)
    info, batched = unwrap(v["info"], level)
    return op(info, v["api_name"], is_matrix=v["is_matrix"] and not batched)


def lu_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """``lu_unpack`` and ``linalg_lu_solve``: the factors, pivots and right-hand side with
    their batch dimensions lined up (the factors and pivots expanded over the vmap dimension
    together, as the op takes them of one batch shape)."""
    v = bind(op, args, kw)
    if op is aten.lu_unpack.default:
        if not (v.get("unpack_data", True) and v.get("unpack_pivots", True)):
            return slow_fallback(op, 0, args, kw)  # empty outputs: no batch dimension
        lu, piv = v["LU_data"], v["LU_pivots"]
        n = max(lu.dim() - 2, piv.dim() - 1)
        v["LU_data"] = _padded(lu, level, 2, n, expand=True)
        v["LU_pivots"] = _padded(piv, level, 1, n, expand=True)
        return tuple(wrap(o, level.level) for o in call(op, v))
    lu, piv, b = v["LU"], v["pivots"], v["B"]
    n = max(lu.dim() - 2, piv.dim() - 1, b.dim() - 2)
    v["LU"] = _padded(lu, level, 2, n, expand=True)
    v["pivots"] = _padded(piv, level, 1, n, expand=True)
    v["B"] = _padded(b, level, 2, n)
    return wrap(call(op, v), level.level)


def ldl_solve_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """``linalg_ldl_solve``: the factors' batch dimensions broadcast against the right-hand
    side's, and the pivots must have the factors' exactly, so where one of the two is
    batched both are, expanded over the vmap dimension together."""
    v = bind(op, args, kw)
    ld, piv, b = v["LD"], v["pivots"], v["B"]
    ldl_solve_shape(ld, piv, b)  # the op's checks on the examples' shapes and dtypes first
    n = max(ld.dim() - 2, b.dim() - 2)
    factors_batched = any(unwrap(x, level)[1] for x in (ld, piv))
    v["LD"] = _padded(ld, level, 2, n, expand=factors_batched)
    v["pivots"] = _padded(piv, level, 1, n, expand=factors_batched)
    v["B"] = _padded(b, level, 2, n)
    return wrap(call(op, v), level.level)


def lstsq_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """A vector right-hand side (one dimension fewer than ``A``, per example) solves as a
    one-column matrix, so the physical shapes cannot make a vector look like a matrix. The
    outputs a driver leaves empty are empty per example, ``(batch, 0)``, as PyTorch's."""
    v = bind(op, args, kw)
    a, b = v["self"], v["b"]
    # the op's checks on the examples' shapes first (the physical ones may pass them)
    vector = lstsq_plan(a.shape, b.shape, a.dtype, b.dtype, v.get("driver"))[1]
    n = max(a.dim() - 2, b.dim() - (1 if vector else 2))
    # both expanded over the vmap dimension: the op tells a vector from a matrix by the
    # dimensions of ``b`` against ``A``'s, and takes no ``b`` of more dimensions than ``A``
    bp = _padded(b, level, 1 if vector else 2, n, expand=True)
    if vector:
        bp = bp.unsqueeze(-1)
    ap = _padded(a, level, 2, n, expand=True)
    outs = list(call(op, {**v, "self": ap, "b": bp}))
    if vector:
        outs[0] = outs[0].squeeze(-1)
    for i in (1, 2, 3):
        if outs[i].dim() == 1 and outs[i].shape[0] == 0:
            outs[i] = outs[i].new_zeros((level.size, 0))
    return tuple(wrap(o, level.level) for o in outs)


register_rule(aten._linalg_check_errors.default, check_errors_rule)
register_rule(aten.lu_unpack.default, lu_rule)
register_rule(aten.linalg_lu_solve.default, lu_rule)
register_rule(aten.linalg_solve_triangular.default, solve_triangular_rule)
register_rule(aten._linalg_solve_ex.default, solve_ex_rule)
register_rule(aten.linalg_pinv.atol_rtol_tensor, pinv_rule)
register_rule(aten.linalg_lstsq.default, lstsq_rule)
register_rule(aten.linalg_ldl_solve.default, ldl_solve_rule)
