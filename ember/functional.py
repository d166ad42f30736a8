"""The public op functions (``ember.add``, ``ember.sum``, ...), generated from the registry
by ``ember._bind``; ``ember/__init__.py`` re-exports them. The few whose Python signature
differs from their schema's (as in ``torch/functional.py``) are wrapped here."""

from __future__ import annotations

from typing import Any

from ember._bind import bind_all, make_public
from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.overrides import handle_torch_function, has_torch_function, python_route

__all__ = bind_all(globals())
__all__ += ["is_nonzero"]
_einsum_op = globals()["einsum"]
# ember.linalg's vector_norm and matrix_norm, which ember.norm calls as torch.norm does
_public_vector_norm = make_public(ops.aten.linalg_vector_norm, method=False)
_public_matrix_norm = make_public(ops.aten.linalg_matrix_norm, method=False)


def einsum(equation: str, *operands: Any, **kwargs: Any) -> Any:
    """``einsum(equation, *operands)`` or ``einsum(equation, [operands])``, as in PyTorch
    (also its ``__torch_function__`` route: the operands count, plain tensors too).

    >>> ember.einsum("ij,j->i", ember.ones(2, 3), ember.ones(3))
    tensor([3., 3.])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if has_torch_function(operands):
        return handle_torch_function(einsum, operands, equation, *operands, **kwargs)
    return _einsum_op(equation, list(operands), **kwargs)


# the functions torch/functional.py writes in Python (their Python route, their signatures),
# in place of those generated from their ops' schemas
from ember._torch_functional import (  # noqa: E402
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    gradient,
    is_tensor,
    lu,
    meshgrid,
    split,
    stft,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)

_PYTHON_WRITTEN = (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes,
                   broadcast_tensors, cartesian_prod, chain_matmul, cdist, gradient, is_tensor, lu,
                   meshgrid, split, stft, tensordot, unique, unique_consecutive,
                   unravel_index)  # fmt: skip
__all__ += [f.__name__ for f in _PYTHON_WRITTEN if f.__name__ not in __all__]


@python_route("input")
def norm(
    input: Any,
    p: Any = "fro",
    dim: Any = None,
    keepdim: bool = False,
    out: Any = None,
    dtype: Any = None,
) -> Any:
    """The vector or matrix norm, as ``torch.norm`` dispatches it: a number (or "fro" over at
    most two dims) is ``linalg.vector_norm``; "nuc" (or "fro" over more dims) is
    ``linalg.matrix_norm`` over ``dim`` (all dims by default).

    >>> ember.norm(ember.tensor([[3.0, 4.0], [0.0, 0.0]]), "fro")
    tensor(5.)
    """
    dims = None if dim is None else [dim] if isinstance(dim, int) else list(dim)
    extra = {} if out is None else {"out": out}
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return _public_vector_norm(input, 2, dims, keepdim, dtype=dtype, **extra)
        mdims = dims if dims is not None else list(range(input.ndim))
        return _public_matrix_norm(input, p, mdims, keepdim, dtype=dtype, **extra)
    return _public_vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype, **extra)


def _tensor_norm(
    self: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Any:
    """``Tensor.norm``: ``ember.norm(self, p, dim, keepdim, dtype=dtype)``.

    >>> ember.tensor([3.0, 4.0]).norm()
    tensor(5.)
    """
    return norm(self, p, dim, keepdim, dtype=dtype)


_tensor_norm.__name__ = _tensor_norm.__qualname__ = "norm"
Tensor.norm = _tensor_norm  # type: ignore[method-assign]


@python_route("input")
def is_nonzero(input: Tensor) -> bool:
    """The truth of a one-element tensor; RuntimeError for more or fewer elements.

    >>> ember.is_nonzero(ember.tensor([0.0]))
    False
    """
    return input.is_nonzero()  # type: ignore[no-any-return]
