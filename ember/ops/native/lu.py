"""LU factorisations (issue 18): ``linalg.lu_factor(_ex)``, ``lu_unpack``, ``linalg.lu_solve``,
``linalg.lu`` and the older ``lu`` / ``Tensor.lu`` / ``lu_solve`` spellings.

# NOTE [LU factors]
``A = P L U`` with partial pivoting (LAPACK's getrf, through SciPy): ``LU`` packs the unit
lower triangle of ``L`` (below the diagonal) and ``U`` (on and above it) in one ``(m, n)``
matrix; ``pivots`` are LAPACK's 1-based int32 row swaps, ``min(m, n)`` of them (row ``i``
was swapped with row ``pivots[i] - 1``, in order); ``info`` is 0, or ``k`` when ``U[k-1,
k-1]`` is exactly zero (the factorisation still exists; solving with it divides by zero).
``lu_unpack`` turns these into ``P``, ``L`` ``(m, k)`` and ``U`` ``(k, n)``. The
derivatives are PyTorch's: ``lu_factor_ex`` through ``L`` and ``U`` for square, wide and
tall matrices, ``lu_unpack`` to its packed input, ``lu_solve`` to ``B`` and to ``LU``
(``ember/autograd/derivatives_linalg.py``). Pivoting cannot be turned off on the CPU, as in
PyTorch. The checks below are shared by the CPU kernels and the Meta rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember._warn import warn_user
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import define
from ember.ops.native.linalg import matrix_check
from ember.ops.registry import impl, ops
from ember.ops.shapes import broadcast_shapes
from ember.return_types import _lu_with_info as lu_info_t
from ember.return_types import linalg_lu as lu_t
from ember.return_types import linalg_lu_factor as lu_factor_t

if TYPE_CHECKING:
    from ember._tensor import Tensor

_LINALG = ()  # bound by ember/linalg.py
_FN = ("function",)
# fmt: off
define("linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> "
       "(Tensor LU, Tensor pivots, Tensor info)", variants=_LINALG, out=True)
define("linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)",
       variants=_LINALG, out=True)
define("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)",
       variants=_LINALG, out=True)
define("lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, "
       "bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)", variants=_FN, out=True)
define("linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, "
       "bool adjoint=False) -> Tensor", variants=_LINALG, out=True)
define("lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor", out=True)
define("_lu_with_info(Tensor self, bool pivot=True, bool check_errors=True) -> "
       "(Tensor LU, Tensor pivots, Tensor info)", variants=_FN)
# fmt: on

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd
_LU_REFUSAL = ("kernel", "lu_cpu")


def lu_factor_plan(A: Tensor, pivot: bool, api: str) -> tuple[tuple[int, ...], int]:
    """The pivots' shape and ``k = min(m, n)`` of a factorisation of ``A``."""
    if A.ndim < 2:
        raise RuntimeError(
            f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(A.shape)} instead"
        )
    matrix_check(A.shape, A.dtype, api, _LU_REFUSAL, square=False, floating=False)
    if not pivot:
        raise RuntimeError(
            f"{api}: LU without pivoting is not implemented on the CPU (pass pivot=True)"
        )
    k = min(A.shape[-2], A.shape[-1])
    return (*A.shape[:-2], k), k


def lu_unpack_plan(LU: Tensor, pivots: Tensor) -> tuple[int, int, int]:
    """``(m, n, k)`` of ``lu_unpack``'s input, with PyTorch's checks."""
    if LU.ndim < 2:
        raise RuntimeError(
            f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(LU.shape)} instead"
        )
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    if pivots.dtype != dtypes.int32:
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            f"dtype. Note: this function is intended to be used with the output produced by "
            f"torch.linalg.lu_factor (got {pivots.dtype})"
        )
    if tuple(pivots.shape) != (*LU.shape[:-2], k):
        raise RuntimeError(
            f"torch.lu_unpack: Expected LU_pivots of shape {[*LU.shape[:-2], k]}, got "
            f"{list(pivots.shape)} (the pivots of LU_data's factorisation)"
        )
    return m, n, k


def lu_solve_plan(LU: Tensor, pivots: Tensor, B: Tensor, left: bool) -> tuple[int, ...]:
    """The shape of ``linalg.lu_solve``'s result (the broadcast batch), with its checks."""
    api = "torch.linalg.lu_solve"
    matrix_check(LU.shape, LU.dtype, api, _LU_REFUSAL, name="A", floating=False)
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if B.dtype != LU.dtype:
        raise RuntimeError(
            f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
            f"{LU.dtype._short} and B of type {B.dtype._short} instead"
        )
    n = LU.shape[-1]
    rows = B.shape[-2] if left else B.shape[-1]
    if rows != n:
        side = "rows" if left else "columns"
        raise RuntimeError(
            f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]}: B's "
            f"{side} must match A's size)"
        )
    if tuple(pivots.shape) != (*LU.shape[:-2], n) or pivots.dtype != dtypes.int32:
        raise RuntimeError(
            f"linalg.lu_solve: expected int32 pivots of shape {[*LU.shape[:-2], n]}, got "
            f"{pivots.dtype} of shape {list(pivots.shape)} (use linalg.lu_factor's pivots)"
        )
    batch = broadcast_shapes(LU.shape[:-2], B.shape[:-2], op="linalg.lu_solve")
    return (*batch, B.shape[-2], B.shape[-1])


# --------------------------------------------------------------------------- compositions


@impl(aten.linalg_lu_factor.default, _CIA)
def linalg_lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """``linalg.lu_factor_ex`` that raises for a singular ``U`` (NOTE [LU factors])."""
    LU, piv, info = aten.linalg_lu_factor_ex.default(A, pivot=pivot)
    aten._linalg_check_errors.default(info, "torch.linalg.lu_factor", is_matrix=A.ndim == 2)
    return lu_factor_t(LU, piv)


@impl(aten.linalg_lu.default, _CIA)
def linalg_lu(A: Tensor, *, pivot: bool = True) -> Any:
    """``P, L, U`` with ``A = P L U``: ``lu_factor_ex`` then ``lu_unpack``."""
    LU, piv, _ = aten.linalg_lu_factor_ex.default(A, pivot=pivot)
    P, L, U = aten.lu_unpack.default(LU, piv)
    return lu_t(P, L, U)


@impl(aten.lu_solve.default, _CIA)
def lu_solve(self: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve(B, LU, pivots)``: ``linalg.lu_solve`` with its arguments reversed
    (deprecated; warns once)."""
    if not _warned:
        _warned.append(True)
        warn_user(
            "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed "
            "in a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
            "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
            "X = torch.linalg.lu_solve(LU, pivots, B)"
        )
    return aten.linalg_lu_solve.default(LU_data, LU_pivots, self)  # type: ignore[no-any-return]


_warned: list[bool] = []


@impl(aten._lu_with_info.default, _CIA)
def _lu_with_info(self: Tensor, pivot: bool = True, check_errors: bool = True) -> Any:
    """``torch.lu``'s op: ``lu_factor_ex`` without its check (PyTorch ignores
    ``check_errors`` here too)."""
    return lu_info_t(*aten.linalg_lu_factor_ex.default(self, pivot=pivot))
