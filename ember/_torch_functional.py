"""The functions PyTorch writes in Python (``torch/functional.py``) over its ops: ``unique``,
``unique_consecutive``, ``meshgrid``, ``cartesian_prod``, ``block_diag``, ``cdist``,
``tensordot``, ``split``, ``stft`` and ``atleast_1d``/``2d``/``3d``; and ``is_tensor``
(``torch/__init__.py``).
Each takes the Python route of ``__torch_function__`` as PyTorch's does (plain tensors
count: NOTE [two routes] in ``ember/overrides/__init__.py``) and calls the aten op, which
``__torch_dispatch__`` code then sees. ``ember/functional.py`` exports them in place of the
functions generated from those ops' schemas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._factory import tensor as _tensor
from ember._tensor import Size, Tensor
from ember._warn import warn_user
from ember.dtypes import INTEGRAL, get_default_dtype, int64
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes as _broadcast
from ember.overrides import python_route

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "chain_matmul",
    "cdist",
    "is_tensor",
    "lu",
    "meshgrid",
    "split",
    "stft",
    "tensordot",
    "unique",
    "unique_consecutive",
    "unravel_index",
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


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape tensors of these shapes broadcast to (an int stands for a 1-d shape), with
    no tensor made.

    >>> ember.broadcast_shapes((2, 1), (3,), 3)
    ember.Size([2, 3])
    """
    dims = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    for s in dims:
        if any(not isinstance(n, int) for n in s):
            raise TypeError(f"broadcast_shapes(): expected ints or tuples of ints, got {s}")
        if any(n < 0 for n in s):
            raise ValueError(
                f"broadcast_shapes(): a shape has a negative size, {s}; sizes must be >= 0"
            )
    return Size(_broadcast(*dims, op="broadcast_shapes"))


# NOTE [gradient]
# ``gradient`` estimates derivatives by central differences, in PyTorch's (and NumPy's)
# formulas: ``(f[i+1] - f[i-1]) / 2h`` inside for a uniform spacing ``h``, the second-order
# three-point formula for coordinates (``a f[i-1] + b f[i] + c f[i+1]`` with weights from
# the two neighbouring steps), and one-sided first- or second-order differences at the two
# ends (``edge_order``). It is written with tensor slices and arithmetic, so it is
# differentiable and a dispatch mode sees those ops.


def _gradient_dims(input: Tensor, spacing: Any, dim: Any) -> tuple[list[int], list[Any]]:
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [d % input.ndim if -input.ndim <= d < input.ndim else d for d in dims]
        for d in dims:
            if not 0 <= d < input.ndim:
                raise IndexError(f"gradient: dim {d} is out of range for a {input.ndim}-d input")
        for d in dims:
            if dims.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if isinstance(spacing, (int, float)) or (isinstance(spacing, Tensor) and spacing.ndim == 0):
        return dims, [spacing] * len(dims)
    steps = list(spacing)
    if len(steps) != len(dims):
        given = "dim argument was given" if dim is not None else "dim argument was not given"
        want = "len(dim)" if dim is not None else "'self.dim()"
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to {want} = {len(dims)}', since {given}, but got a list of length "
            f"{len(steps)}"
        )
    return dims, steps


def _along(t: Tensor, d: int, start: int | None, stop: int | None) -> Tensor:
    index: list[Any] = [slice(None)] * t.ndim
    index[d] = slice(start, stop)
    return t[tuple(index)]


def _shaped(w: Tensor, d: int, ndim: int) -> Tensor:
    """A 1-d weight along dim ``d`` of an ``ndim``-d tensor."""
    return w.reshape([-1 if k == d else 1 for k in range(ndim)])


def _gradient_uniform(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    inner = (_along(f, d, 2, None) - _along(f, d, None, -2)) / (2 * h)
    if edge_order == 1:
        first = (_along(f, d, 1, 2) - _along(f, d, 0, 1)) / h
        last = (_along(f, d, -1, None) - _along(f, d, -2, -1)) / h
    else:
        f0, f1, f2 = (_along(f, d, k, k + 1) for k in range(3))
        l0, l1, l2 = (_along(f, d, k, k + 1 if k < -1 else None) for k in (-3, -2, -1))
        first = (-1.5 * f0 + 2 * f1 - 0.5 * f2) / h
        last = (0.5 * l0 - 2 * l1 + 1.5 * l2) / h
    return aten.cat.default([first, inner, last], d)  # type: ignore[no-any-return]


def _gradient_coordinates(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    if x.ndim != 1 or x.shape[0] != f.shape[d]:
        raise RuntimeError(
            f"torch.gradient expected each tensor in spacing to be 1-d with as many "
            f"coordinates as dim {d} has elements ({f.shape[d]}), got shape {list(x.shape)}"
        )
    if x.dtype.category < 2:  # integer coordinates: differences in the input's float dtype
        x = x.to(f.dtype)
    h = x[1:] - x[:-1]
    hd, hs = h[:-1], h[1:]
    a = -hs / (hd * (hd + hs))
    b = (hs - hd) / (hd * hs)
    c = hd / (hs * (hd + hs))
    n = f.ndim
    inner = (
        _shaped(a, d, n) * _along(f, d, None, -2)
        + _shaped(b, d, n) * _along(f, d, 1, -1)
        + _shaped(c, d, n) * _along(f, d, 2, None)
    )
    if edge_order == 1:
        first = (_along(f, d, 1, 2) - _along(f, d, 0, 1)) / h[0]
        last = (_along(f, d, -1, None) - _along(f, d, -2, -1)) / h[-1]
    else:
        d1, d2 = h[0], h[1]
        f0, f1, f2 = (_along(f, d, k, k + 1) for k in range(3))
        first = (
            -(2 * d1 + d2) / (d1 * (d1 + d2)) * f0
            + (d1 + d2) / (d1 * d2) * f1
            - d1 / (d2 * (d1 + d2)) * f2
        )
        e1, e2 = h[-2], h[-1]
        l0, l1, l2 = (_along(f, d, k, k + 1 if k < -1 else None) for k in (-3, -2, -1))
        last = (
            e2 / (e1 * (e1 + e2)) * l0
            - (e1 + e2) / (e1 * e2) * l1
            + (2 * e2 + e1) / (e2 * (e1 + e2)) * l2
        )
    return aten.cat.default([first, inner, last], d)  # type: ignore[no-any-return]


@python_route("input")
def gradient(
    input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1
) -> tuple[Tensor, ...]:
    """Derivative estimates of ``input`` along each of ``dim`` (all by default), by central
    differences (NOTE [gradient]); ``spacing`` is one step for every dim, a step per dim, or
    a 1-d tensor of coordinates per dim.

    >>> ember.gradient(ember.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims, steps = _gradient_dims(input, spacing, dim)
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError(
            "torch.gradient expected each dimension size to be at least edge_order+1 "
            f"(edge_order={edge_order}, sizes {list(input.shape)})"
        )
    f = input if input.dtype.category >= 2 else input.to(get_default_dtype())
    out = []
    for d, h in zip(dims, steps, strict=True):
        if isinstance(h, Tensor) and h.ndim > 0:
            out.append(_gradient_coordinates(f, d, h, edge_order))
        else:
            out.append(
                _gradient_uniform(f, d, h.item() if isinstance(h, Tensor) else h, edge_order)
            )
    return tuple(out)


@python_route("indices")
def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates, in a tensor of ``shape``, of flat (row-major) ``indices``: one int64
    tensor per dim. As PyTorch's, indices wrap: ``-1`` is the last element.

    >>> ember.unravel_index(ember.tensor([5, 7]), (3, 4))
    (tensor([1, 1]), tensor([1, 3]))
    """
    if not isinstance(indices, Tensor):
        indices = _tensor(indices)
    if indices.dtype.category != INTEGRAL:
        raise TypeError(
            f"expected 'indices' to be integer dtype, but got {indices.dtype}; pass an integer "
            "tensor (e.g. indices.long())"
        )
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(not isinstance(n, int) for n in dims):
        raise TypeError(f"unravel_index(): 'shape' must be ints, got {dims}")
    if any(n < 0 for n in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {dims}")
    if not dims:
        return ()
    strides, acc = [], 1
    for n in reversed(dims):
        strides.append(acc)
        acc *= n
    flat = aten.unsqueeze.default(aten._to_copy.default(indices, dtype=int64), -1)
    step = aten.div.Tensor_mode(flat, _tensor(strides[::-1]), rounding_mode="floor")
    return tuple(aten.unbind.int(aten.remainder.Tensor(step, _tensor(list(dims))), -1))


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


@python_route("tensor")
def split(
    tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """``tensor`` in pieces of ``split_size_or_sections`` along ``dim`` (an int: pieces of
    that size, the last one smaller; a list: those sizes), as ``tensor.split`` does.

    >>> [p.tolist() for p in ember.split(ember.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    return tensor.split(split_size_or_sections, dim)  # type: ignore[no-any-return]


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
