"""The functions PyTorch writes in Python (``torch/functional.py``) over its ops: ``unique``,
``unique_consecutive``, ``meshgrid``, ``cartesian_prod``, ``block_diag``, ``cdist``,
``tensordot`` and ``atleast_1d``/``2d``/``3d``; and ``is_tensor`` (``torch/__init__.py``).
Each takes the Python route of ``__torch_function__`` as PyTorch's does (plain tensors
count: NOTE [two routes] in ``ember/overrides/__init__.py``) and calls the aten op, which
``__torch_dispatch__`` code then sees. ``ember/functional.py`` exports them in place of the
functions generated from those ops' schemas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._tensor import Tensor
from ember._warn import warn_user
from ember.ops.registry import ops
from ember.overrides import python_route

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_tensors",
    "cartesian_prod",
    "chain_matmul",
    "cdist",
    "is_tensor",
    "lu",
    "meshgrid",
    "stft",
    "tensordot",
    "unique",
    "unique_consecutive",
]

aten = ops.aten

_COMPUTE_MODES = {
    "use_mm_for_euclid_dist_if_necessary": None,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def _pick(output: Tensor, inverse: Tensor, counts: Tensor, want_inverse: bool,
          want_counts: bool) -> Any:  # fmt: skip
    """The result PyTorch returns for the flags: the values alone, or a tuple with the inverse
    and/or the counts."""
    if want_inverse and want_counts:
        return output, inverse, counts
    if want_inverse:
        return output, inverse
    if want_counts:
        return output, counts
    return output


@python_route("input")
def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct elements of ``input`` (or its distinct slices along ``dim``), sorted; with
    the index of each element's value in them (``return_inverse``) and how often each occurs
    (``return_counts``).

    >>> ember.unique(ember.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    if dim is not None:
        out = aten.unique_dim.default(input, dim, sorted, return_inverse, return_counts)
    else:
        out = aten._unique2.default(input, sorted, return_inverse, return_counts)
    return _pick(*out, return_inverse, return_counts)


@python_route("input")
def unique_consecutive(
    input: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """One element (or slice along ``dim``) for each run of equal consecutive ones, with the
    inverse and counts on request, as ``unique``.

    >>> ember.unique_consecutive(ember.tensor([1, 1, 2, 2, 1]))
    tensor([1, 2, 1])
    """
    out = aten.unique_consecutive.default(input, return_inverse, return_counts, dim)
    return _pick(*out, return_inverse, return_counts)


def _tensor_list(tensors: tuple[Any, ...]) -> list[Any]:
    """Variadic tensors, or one list or tuple of them (the older calling form)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


@python_route("tensors")
def meshgrid(*tensors: Tensor, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of 1-D (or 0-dim) tensors: ``indexing="ij"`` (the default, with
    PyTorch's warning when it is not given) puts the first tensor along dim 0, ``"xy"`` along
    dim 1.

    >>> x, y = ember.meshgrid(ember.tensor([1, 2]), ember.tensor([3, 4, 5]), indexing="ij")
    >>> x.shape, y[0]
    (ember.Size([2, 3]), tensor([3, 4, 5]))
    """
    items = _tensor_list(tensors)
    if indexing is None:
        return tuple(aten.meshgrid.default(items))
    return tuple(aten.meshgrid.indexing(items, indexing=indexing))


@python_route("tensors")
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D tensor, one per row, in
    ``itertools.product`` order.

    >>> ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    return aten.cartesian_prod.default(list(tensors))


@python_route("tensors")
def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the tensors (0-dim and 1-D ones as one-row matrices).

    >>> ember.block_diag(ember.ones(1, 2), ember.tensor(3.0))
    tensor([[1., 1., 0.],
            [0., 0., 3.]])
    """
    return aten.block_diag.default(list(tensors))


def _atleast(n: int) -> Any:
    packet = getattr(aten, f"atleast_{n}d")

    @python_route("tensors")
    def atleast(*tensors: Any) -> Any:
        one = tensors[0] if len(tensors) == 1 else tensors
        if isinstance(one, (list, tuple)):
            return tuple(packet.Sequence(list(one)))
        return packet.default(one)

    atleast.__name__ = atleast.__qualname__ = f"atleast_{n}d"
    return atleast


atleast_1d = _atleast(1)
atleast_1d.__doc__ = """Each tensor with at least one dimension (a 0-dim one as a 1-element
1-D tensor); one tensor gives a tensor, several (or a list) a tuple.

>>> ember.atleast_1d(ember.tensor(1.0))
tensor([1.])
"""
atleast_2d = _atleast(2)
atleast_2d.__doc__ = """Each tensor with at least two dimensions (a 1-D one as one row); one
tensor gives a tensor, several (or a list) a tuple.

>>> ember.atleast_2d(ember.tensor([1.0, 2.0]))
tensor([[1., 2.]])
"""
atleast_3d = _atleast(3)
atleast_3d.__doc__ = """Each tensor with at least three dimensions (a 1-D one of size n as
(1, n, 1), a 2-D one with a trailing dim); one tensor gives a tensor, several (or a list) a
tuple.

>>> ember.atleast_3d(ember.tensor([1.0, 2.0])).shape
ember.Size([1, 2, 1])
"""


@python_route("x1", "x2")
def cdist(
    x1: Tensor,
    x2: Tensor,
    p: float = 2.0,
    compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
) -> Tensor:
    """The ``p``-norm distance of every row of ``x1`` to every row of ``x2`` (batched over
    leading dims); ``compute_mode`` picks PyTorch's matrix-product path for ``p = 2`` (NOTE
    [cdist paths] in ``ember/ops/native/products.py``).

    >>> ember.cdist(ember.tensor([[0.0, 0.0]]), ember.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5., 1.]])
    """
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return aten.cdist.default(x1, x2, p, _COMPUTE_MODES[compute_mode])


@python_route("a", "b")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """The contraction of ``a``'s last ``dims`` dims with ``b``'s first ``dims`` (an int), or
    of the dims two lists name (``([1, 0], [0, 1])``, or a 2-row tensor of them).

    >>> ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), dims=1).shape
    ember.Size([2, 4])
    """
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    if out is None:
        return aten.tensordot.default(a, b, dims_a, dims_b)
    return aten.tensordot.out(a, b, dims_a, dims_b, out=out)


def _tensordot_dims(a: Tensor, b: Tensor, dims: Any) -> tuple[list[int], list[int]]:
    if isinstance(dims, bool) or not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError(
            "tensordot expects dims to be int or tuple[list[int], list[int]] or "
            f"list[list[int]] containing two lists, but got dims={dims}"
        )
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims.shape[0] != 2:
                raise AssertionError(
                    f"dims tensor must have size 2 in first dimension, got {dims.shape[0]}"
                )
            return [int(d) for d in dims[0].tolist()], [int(d) for d in dims[1].tolist()]
        dims = int(dims.item())
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    first, second = dims
    return _ints(first), _ints(second)


def _ints(d: Any) -> list[int]:
    return [int(x) for x in d] if isinstance(d, Sequence) else [int(d)]


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a Tensor (of any subclass); not overridable, as in PyTorch.

    >>> ember.is_tensor(ember.ones(1)), ember.is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


@python_route("tensors")
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common broadcast shape (views; one already of that shape
    is returned itself).

    >>> a, b = ember.broadcast_tensors(ember.ones(2, 1), ember.zeros(3))
    >>> a.shape, b.shape
    (ember.Size([2, 3]), ember.Size([2, 3]))
    """
    return tuple(aten.broadcast_tensors.default(_tensor_list(tensors)))


@python_route("matrices")
def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """The product of 2-D matrices, multiplied in the cheapest order (deprecated in PyTorch in
    favour of ``linalg.multi_dot``, and warns so once).

    >>> ember.chain_matmul(ember.ones(2, 3), ember.ones(3, 4), ember.ones(4, 1)).shape
    ember.Size([2, 1])
    """
    items = _tensor_list(matrices)
    if out is not None:
        return aten.chain_matmul.out(items, out=out)
    return aten.chain_matmul.default(items)


def _assert(condition: Any, message: str) -> None:
    """``torch._assert``: raise ``AssertionError(message)`` unless ``condition`` holds (what
    ``symbolic_trace`` records to check a ``concrete_args`` value).

    >>> ember._assert(ember.tensor(True), "never raised")
    """
    if not condition:
        raise AssertionError(message)


_warned_lu: list[bool] = []


@python_route("A")
def lu(
    A: Tensor, pivot: bool = True, get_infos: bool = False, out: Sequence[Tensor] | None = None
) -> tuple[Tensor, ...]:
    """``(LU, pivots)`` of ``A = P L U``, with ``infos`` when ``get_infos`` (deprecated in
    PyTorch for ``linalg.lu_factor``; warns once; NOTE [LU factors]).

    >>> LU, pivots = ember.tensor([[1.0, 2.0], [3.0, 4.0]]).lu()
    >>> pivots
    tensor([2, 2], dtype=ember.int32)
    """
    if not _warned_lu:
        _warned_lu.append(True)
        warn_user(
            "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
            "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
            "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
            "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
            "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be "
            "replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)"
        )
    LU, piv, info = aten._lu_with_info.default(A, pivot, not get_infos)
    result = (LU, piv, info) if get_infos else (LU, piv)
    if out is None:
        return result
    if len(out) != len(result):
        raise TypeError(f"expected a tuple of {len(result)} tensors for out, got {len(out)}")
    for o, r in zip(out, result, strict=True):
        o.resize_(r.shape).copy_(r)
    return tuple(out)


@python_route("input")
def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform (NOTE [stft] in ``ember/ops/native/spectral.py``).

    >>> ember.stft(ember.ones(16), 8, window=ember.hann_window(8), return_complex=True).shape
    ember.Size([5, 9])
    """
    return aten.stft.center(  # type: ignore[no-any-return]
        input, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
        return_complex, align_to_window,
    )  # fmt: skip
