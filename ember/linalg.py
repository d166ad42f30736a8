"""``ember.linalg``: PyTorch's ``torch.linalg``, each function the public binding of a registry
op (``linalg.inv`` is ``aten.linalg_inv``, which decomposes into ``linalg_inv_ex`` and
``_linalg_check_errors``: ``ember/ops/native/linalg_composite.py``).

>>> A = ember.tensor([[4.0, 2.0], [2.0, 3.0]])
>>> ember.linalg.cholesky(A)
tensor([[2.0000, 0.0000],
        [1.0000, 1.4142]])
>>> ember.linalg.solve(A, ember.tensor([2.0, 1.0]))
tensor([0.5000, 0.0000])
"""

from __future__ import annotations

from typing import Any

from ember._bind import make_public
from ember.ops.native.linalg import LinAlgError
from ember.ops.registry import ops


def _public(op: str) -> Any:
    """The public function of ``aten.<op>`` (overloads resolved as ``ember.<name>``'s)."""
    return make_public(getattr(ops.aten, op), method=False)


# each is PyTorch's ``torch.linalg.<name>``, bound to the op of ``python_module: linalg``
cholesky = _public("linalg_cholesky")
cholesky_ex = _public("linalg_cholesky_ex")
cond = _public("linalg_cond")
cross = _public("linalg_cross")
det = _public("linalg_det")
diagonal = _public("linalg_diagonal")
eigh = _public("linalg_eigh")
eigvalsh = _public("linalg_eigvalsh")
inv = _public("linalg_inv")
inv_ex = _public("linalg_inv_ex")
lstsq = _public("linalg_lstsq")
ldl_factor = _public("linalg_ldl_factor")
ldl_factor_ex = _public("linalg_ldl_factor_ex")
ldl_solve = _public("linalg_ldl_solve")
lu = _public("linalg_lu")
lu_factor = _public("linalg_lu_factor")
lu_factor_ex = _public("linalg_lu_factor_ex")
lu_solve = _public("linalg_lu_solve")
matmul = _public("linalg_matmul")
matrix_exp = _public("linalg_matrix_exp")
matrix_norm = _public("linalg_matrix_norm")
matrix_power = _public("linalg_matrix_power")
matrix_rank = _public("linalg_matrix_rank")
multi_dot = _public("linalg_multi_dot")
norm = _public("linalg_norm")
pinv = _public("linalg_pinv")
qr = _public("linalg_qr")
slogdet = _public("linalg_slogdet")
solve = _public("linalg_solve")
solve_ex = _public("linalg_solve_ex")
solve_triangular = _public("linalg_solve_triangular")
svd = _public("linalg_svd")
svdvals = _public("linalg_svdvals")
vecdot = _public("linalg_vecdot")
vander = _public("linalg_vander")
vector_norm = _public("linalg_vector_norm")

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "inv_ex",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "vecdot",
    "vander",
    "vector_norm",
]
