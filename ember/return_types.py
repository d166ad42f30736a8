"""Named tuples that ops with several results return, as ``torch.return_types`` does.

>>> v, i = ember.tensor([1.0, 3.0, 2.0]).max(0)
>>> ember.tensor([1.0, 3.0, 2.0]).max(0).indices
tensor(1)
"""

from __future__ import annotations

from typing import NamedTuple

from ember._tensor import Tensor

__all__ = [
    "max", "min", "sort", "topk",
    "linalg_cholesky_ex", "linalg_inv_ex", "linalg_solve_ex", "linalg_slogdet", "slogdet",
    "linalg_svd", "svd", "linalg_qr", "qr", "linalg_eigh", "linalg_lstsq",
]  # fmt: skip
__all__ += ["median", "nanmedian", "mode", "kthvalue"]


class max(NamedTuple):  # noqa: A001, N801 - named after the op, as torch.return_types.max
    """``(values, indices)`` of ``max(dim)``."""

    values: Tensor
    indices: Tensor


class min(NamedTuple):  # noqa: A001, N801
    """``(values, indices)`` of ``min(dim)``."""

    values: Tensor
    indices: Tensor


class sort(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``sort``."""

    values: Tensor
    indices: Tensor


class topk(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``topk``."""

    values: Tensor
    indices: Tensor


# --------------------------------------------------------------------------- ember.linalg


class linalg_cholesky_ex(NamedTuple):  # noqa: N801
    """``(L, info)`` of ``linalg.cholesky_ex``."""

    L: Tensor
    info: Tensor


class linalg_inv_ex(NamedTuple):  # noqa: N801
    """``(inverse, info)`` of ``linalg.inv_ex``."""

    inverse: Tensor
    info: Tensor


class linalg_solve_ex(NamedTuple):  # noqa: N801
    """``(result, info)`` of ``linalg.solve_ex``."""

    result: Tensor
    info: Tensor


class linalg_slogdet(NamedTuple):  # noqa: N801
    """``(sign, logabsdet)`` of ``linalg.slogdet``."""

    sign: Tensor
    logabsdet: Tensor


class slogdet(NamedTuple):  # noqa: N801
    """``(sign, logabsdet)`` of ``slogdet``."""

    sign: Tensor
    logabsdet: Tensor


class linalg_svd(NamedTuple):  # noqa: N801
    """``(U, S, Vh)`` of ``linalg.svd``."""

    U: Tensor
    S: Tensor
    Vh: Tensor


class svd(NamedTuple):  # noqa: N801
    """``(U, S, V)`` of ``svd``."""

    U: Tensor
    S: Tensor
    V: Tensor


class linalg_qr(NamedTuple):  # noqa: N801
    """``(Q, R)`` of ``linalg.qr``."""

    Q: Tensor
    R: Tensor


class qr(NamedTuple):  # noqa: N801
    """``(Q, R)`` of ``qr``."""

    Q: Tensor
    R: Tensor


class linalg_eigh(NamedTuple):  # noqa: N801
    """``(eigenvalues, eigenvectors)`` of ``linalg.eigh``."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class linalg_lstsq(NamedTuple):  # noqa: N801
    """``(solution, residuals, rank, singular_values)`` of ``linalg.lstsq``."""

    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


class median(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``median(dim)``."""

    values: Tensor
    indices: Tensor


class nanmedian(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``nanmedian(dim)``."""

    values: Tensor
    indices: Tensor


class mode(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``mode``."""

    values: Tensor
    indices: Tensor


class kthvalue(NamedTuple):  # noqa: N801
    """``(values, indices)`` of ``kthvalue``."""

    values: Tensor
    indices: Tensor
