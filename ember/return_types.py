"""Named tuples that ops with several results return, as ``torch.return_types`` does.

>>> v, i = ember.tensor([1.0, 3.0, 2.0]).max(0)
>>> ember.tensor([1.0, 3.0, 2.0]).max(0).indices
tensor(1)

Each is a tuple with a read-only attribute per field, printed as PyTorch prints its
structseqs (``ember.return_types.max(\\nvalues=...,\\nindices=...)``). It is built either
from one sequence, as PyTorch's (``ember.return_types.max((v, i))``), or from the fields
themselves (``max(v, i)``, as kernels build them). An ``out=`` call returns the ``<op>_out``
kind (``ember.max(x, 0, out=(v, i))`` is a ``max_out``).
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

#: per op, its fields, in PyTorch's order (each op also has an ``<op>_out`` kind)
FIELDS: dict[str, tuple[str, ...]] = {
    "aminmax": ("min", "max"),
    "cummax": ("values", "indices"),
    "cummin": ("values", "indices"),
    "frexp": ("mantissa", "exponent"),
    "geqrf": ("a", "tau"),
    "histogram": ("hist", "bin_edges"),
    "kthvalue": ("values", "indices"),
    "linalg_cholesky_ex": ("L", "info"),
    "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"),
    "linalg_ldl_factor": ("LD", "pivots"),
    "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"),
    "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"),
    "lu_unpack": ("P", "L", "U"),
    "max": ("values", "indices"),
    "median": ("values", "indices"),
    "min": ("values", "indices"),
    "mode": ("values", "indices"),
    "nanmedian": ("values", "indices"),
    "qr": ("Q", "R"),
    "slogdet": ("sign", "logabsdet"),
    "sort": ("values", "indices"),
    "svd": ("U", "S", "V"),
    "topk": ("values", "indices"),
    "triangular_solve": ("solution", "cloned_coefficient"),
}
#: kinds PyTorch has without an ``_out`` twin
_NO_OUT = {
    "histogramdd": ("hist", "bin_edges"),
    "_lu_with_info": ("LU", "pivots", "info"),
}


class _ReturnType(tuple[Any, ...]):
    """What every kind shares: construction, printing, pickling (see the module docstring)."""

    __slots__ = ()
    #: the field names (``_fields`` also makes ``ember.utils._pytree`` treat it as a node)
    _fields: tuple[str, ...] = ()
    n_fields = n_sequence_fields = 0
    n_unnamed_fields = 0

    def __new__(cls, *values: Any) -> Any:
        n = len(cls._fields)
        if len(values) == 1 and n != 1:
            values = tuple(values[0])
        if len(values) != n:
            raise TypeError(
                f"ember.return_types.{cls.__name__}() takes a {n}-sequence "
                f"({len(values)}-sequence given)"
            )
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self, strict=True))
        return f"ember.return_types.{type(self).__name__}(\n{body})"

    __str__ = __repr__

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (tuple(self),))


def _kind(name: str, fields: tuple[str, ...]) -> type[_ReturnType]:
    attrs: dict[str, Any] = {
        "__slots__": (), "__module__": __name__, "__qualname__": name, "_fields": fields,
        "n_fields": len(fields), "n_sequence_fields": len(fields),
    }  # fmt: skip
    for i, f in enumerate(fields):
        attrs[f] = property(itemgetter(i), doc=f"Field {i} of the result.")
    return type(name, (_ReturnType,), attrs)


_KINDS = {n: f for name, f in FIELDS.items() for n in (name, f"{name}_out")} | _NO_OUT
globals().update({name: _kind(name, fields) for name, fields in _KINDS.items()})
__all__ = sorted(_KINDS)


def out_kind(op_name: str) -> type[_ReturnType] | None:
    """The kind an ``out=`` call of the op ``op_name`` returns (``max_out``), if it has one."""
    return globals().get(f"{op_name}_out") if op_name in FIELDS else None  # type: ignore[no-any-return]


if TYPE_CHECKING:  # the kinds are made above, from FIELDS: tell the type checker so

    def __getattr__(name: str) -> type[_ReturnType]: ...
