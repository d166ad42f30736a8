"""``linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve``: the Bunch-Kaufman LDL^T (or,
``hermitian``, LDL^H) factorisation of symmetric matrices, as PyTorch computes it.

# NOTE [LDL factors]
PyTorch calls LAPACK's ``sytrf`` (``hetrf`` for a complex ``hermitian`` input) on the lower
triangle, and ember calls the same routines through SciPy, so the compact factors ``LD``
(L below the diagonal, the 1x1 and 2x2 blocks of D on and beside it; zeros above) and the
1-based ``pivots`` (negative pairs for 2x2 blocks) are LAPACK's convention and equal
PyTorch's. ``LD`` is laid out column-major per matrix, as PyTorch's. ``ldl_solve`` is
``sytrs``/``hetrs``. Only the lower triangle of the input is read. There are no derivatives
(backward raises, as PyTorch's). ``info`` is the 1-based index of the first exactly-zero
diagonal of D (the factors exist; a solve would divide by it); ``ldl_factor`` raises then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import define
from ember.ops.native.linalg import check_floating_input
from ember.ops.registry import impl, ops
from ember.ops.shapes import broadcast_shapes
from ember.return_types import linalg_ldl_factor as ldl_factor_t

if TYPE_CHECKING:
    from ember._tensor import Tensor

_LINALG = ()  # bound by ember/linalg.py
# fmt: off
define("linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> "
       "(Tensor LD, Tensor pivots, Tensor info)", variants=_LINALG, out=True)
define("linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)",
       variants=_LINALG, out=True)
define("linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor",
       variants=_LINALG, out=True, exact_out_dtype=True)  # as PyTorch's, unlike ldl_factor's
# fmt: on

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


def check_ldl_factor(A: Tensor, api: str = "torch.linalg.ldl_factor_ex") -> None:
    """PyTorch's checks of the input to factor (no values needed)."""
    if A.ndim < 2:
        raise RuntimeError(
            f"{api}: The input tensor A must have at least 2 dimensions (got shape "
            f"{list(A.shape)}); pass a matrix or a batch of matrices"
        )
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{api}: A must be batches of square matrices, but they are {A.shape[-2]} by "
            f"{A.shape[-1]} matrices"
        )
    check_floating_input(A.dtype, api)
    if A.dtype.itemsize < 4 or A.dtype.name == "complex32":
        raise NotImplementedError(
            f"{api}: \"ldl_factor_kernel_cpu\" not implemented for '{A.dtype._short}'; cast "
            "the input with .float() or .double()"
        )


def ldl_solve_shape(LD: Tensor, pivots: Tensor, B: Tensor) -> tuple[int, ...]:
    """The result's shape (the batch dims broadcast), after PyTorch's checks."""
    api = "torch.linalg.ldl_solve"
    check_ldl_factor(LD, api)
    if B.ndim < 2:  # (PyTorch's error reading B's dim -2: an IndexError)
        raise IndexError(
            f"{api}: B must have at least 2 dimensions (got shape {list(B.shape)}); pass a "
            "column vector as B.unsqueeze(-1)"
        )
    if pivots.ndim < 1 or tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(
            f"{api}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots "
            f"with shape {list(pivots.shape)} and LD with shape {list(LD.shape)}"
        )
    if pivots.dtype not in (dtypes.int32, dtypes.int64):
        raise RuntimeError(
            f"{api}: Expected pivots to be integers. Got {pivots.dtype._short}; pass the "
            "pivots ldl_factor returned"
        )
    if B.dtype != LD.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {B.dtype._short} "
            f"and A of type {LD.dtype._short} instead."
        )
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(
            f"Incompatible matrix sizes for {api}: each A matrix is {n} by {n} but each b "
            f"matrix is {B.shape[-2]} by {B.shape[-1]}"
        )
    batch = broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2]))
    return (*batch, n, B.shape[-1])


@impl(aten.linalg_ldl_factor.default, _CIA)
def linalg_ldl_factor(self: Tensor, *, hermitian: bool = False) -> Any:
    """``ldl_factor_ex`` that raises where D has an exactly-zero diagonal (NOTE [LDL
    factors])."""
    LD, pivots, _ = aten.linalg_ldl_factor_ex.default(self, hermitian=hermitian, check_errors=True)
    return ldl_factor_t(LD, pivots)
