"""The fft ops behind ``ember.fft``: schemas, the checks the CPU kernels and Meta rules share,
and the CompositeImplicitAutograd functions (``fft_fft``, ``fft_rfftn``, ...) that resize their
input and call the three transforms with kernels, as PyTorch does.

# NOTE [fft decompositions]
Every transform is one of three ops: ``_fft_c2c`` (complex to complex, forward or inverse),
``_fft_r2c`` (real to complex, forward, the full or the one-sided half spectrum) and
``_fft_c2r`` (a one-sided half spectrum to a real signal of ``last_dim_size``, inverse).
``normalization`` is 0 (no scaling), 1 (``1/sqrt(n)``) or 2 (``1/n``): ``norm="backward"``
scales the inverse transforms by ``1/n``, ``"forward"`` the forward ones, ``"ortho"`` both by
``1/sqrt(n)``. ``n``/``s`` first ``slice`` or ``constant_pad_nd`` the input to size. A real
input of ``fft``/``ifft`` runs ``_fft_r2c`` with ``onesided=False`` (``ifft`` then conjugates);
of ``fftn``/``ifftn`` it is cast to complex first; an integer or bool input is cast to the
default float dtype. ``hfft`` is ``_fft_c2r`` of the conjugate, ``ihfft`` the conjugate of
``_fft_r2c``. These are the ops a ``__torch_dispatch__`` handler sees on PyTorch.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import define
from ember.ops.native.creation import check_layout, dtype_of
from ember.ops.registry import impl, ops
from ember.ops.shapes import wrap_dim

if TYPE_CHECKING:
    from ember._tensor import Tensor

_FFT = ()  # bound by ember/fft.py as ember.fft.<name>
_OPTIONS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_N = "SymInt? n=None, int dim=-1, str? norm=None"
_S2 = "SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None"
_SN = "SymInt[1]? s=None, int[1]? dim=None, str? norm=None"

# fmt: off
define("_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor",
       variants=("function",))
define("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
       variants=("function",))
define("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor",
       variants=("function",))
for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    define(f"fft_{_name}(Tensor self, {_N}) -> Tensor", variants=_FFT)
for _name in ("fft2", "ifft2", "rfft2", "irfft2"):
    define(f"fft_{_name}(Tensor self, {_S2}) -> Tensor", variants=_FFT)
for _name in ("fftn", "ifftn", "rfftn", "irfftn"):
    define(f"fft_{_name}(Tensor self, {_SN}) -> Tensor", variants=_FFT)
define(f"fft_fftfreq(int n, float d=1.0, *, {_OPTIONS}) -> Tensor", variants=_FFT)
define(f"fft_rfftfreq(int n, float d=1.0, *, {_OPTIONS}) -> Tensor", variants=_FFT)
define("fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor", variants=_FFT)
define("fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor", variants=_FFT)
# fmt: on


# --------------------------------------------------------------------------- shared checks


def fft_dtype(d: dtypes.dtype) -> None:
    """The transforms with kernels take float32, float64, complex64 and complex128."""
    if d.category < dtypes.FLOATING or d.itemsize < 4:
        raise RuntimeError(f"Unsupported dtype {d._short}")


def fft_dims(shape: Sequence[int], dim: Sequence[int]) -> list[int]:
    """``dim`` wrapped, checked to be unique."""
    dims = [wrap_dim(d, len(shape)) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    return dims


# NOTE [fft result layout]
# PyTorch's CPU transforms (MKL) lay their results out as follows, and both ember kernels
# give the same strides. The batch dims (those not transformed) go first, ordered by the
# input's strides (largest first; ties in the order ``_batch_dims`` gives), then the
# transformed dims in the order the transform runs them; the result is row-major in that
# order. ``_fft_c2c`` runs its dims sorted by the input's strides (largest first),
# ``_fft_r2c`` the same except that the last of ``dim`` stays last, and ``_fft_c2r`` first
# runs ``_fft_c2c`` over all but the last dim (the layout of that intermediate orders the
# batch dims of the final 1-d step). So a transposed input gives a transposed result, and
# the transformed dims of a contiguous input move innermost: ``_fft_c2c`` over dim 0 of a
# (3, 4) tensor has strides (1, 3).


def _batch_dims(ndim: int, dims: Sequence[int]) -> list[int]:
    """The dims not in ``dims``, in the order PyTorch's partition leaves them before its
    (stable, for so few dims) sort by stride: scanning from both ends, each transformed dim
    met from the left swaps with the last batch dim met from the right. The order decides
    which of two dims with equal strides (a size-1 or an expanded dim) ends up outermost."""
    order = list(range(ndim))
    first, last = 0, ndim
    while True:
        while first != last and order[first] not in dims:
            first += 1
        if first == last:
            return order[:first]
        last -= 1
        while first != last and order[last] in dims:
            last -= 1
        if first == last:
            return order[:first]
        order[first], order[last] = order[last], order[first]
        first += 1


def _run_strides(
    strides: Sequence[int], out_shape: Sequence[int], dims: Sequence[int]
) -> tuple[int, ...]:
    """The result strides of one transform over ``dims`` (in the order it runs them) of an
    input with ``strides`` (NOTE [fft result layout])."""
    batch = sorted(_batch_dims(len(out_shape), dims), key=lambda d: -strides[d])
    out = [0] * len(out_shape)
    acc = 1
    for d in reversed(dims):  # the signal block is row-major (size-0/1 dims count as 1)
        out[d] = acc
        acc *= max(out_shape[d], 1)
    for d in reversed(batch):  # then the batch dims, outermost last
        out[d] = acc
        acc *= out_shape[d]
    return tuple(out)


def _by_stride(strides: Sequence[int], dims: Sequence[int]) -> list[int]:
    return sorted(dims, key=lambda d: -strides[d])


def c2c_plan(
    self: Tensor, dim: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...], dtypes.dtype]:
    """``_fft_c2c``: a complex input; the result has its shape and dtype. Returns the
    result's shape, strides (NOTE [fft result layout]) and dtype."""
    fft_dtype(self.dtype)
    if not self.dtype.is_complex:
        raise RuntimeError(f"_fft_c2c: expects a complex input tensor, but got {self.dtype._short}")
    dims = fft_dims(self.shape, dim)
    shape, strides = tuple(self.shape), self.stride()
    return shape, _run_strides(strides, shape, _by_stride(strides, dims)), self.dtype


def r2c_plan(
    self: Tensor, dim: Sequence[int], onesided: bool
) -> tuple[tuple[int, ...], tuple[int, ...], dtypes.dtype]:
    """``_fft_r2c``: a real input; the complex result is halved (``n//2 + 1``) along the last
    of ``dim`` when ``onesided``. Returns shape, strides and dtype."""
    fft_dtype(self.dtype)
    if self.dtype.is_complex:
        raise RuntimeError(f"_fft_r2c: expects a real input tensor, but got {self.dtype._short}")
    dims = fft_dims(self.shape, dim)
    shape = list(self.shape)
    if onesided and dims:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    strides = self.stride()
    order = [*_by_stride(strides, dims[:-1]), *dims[-1:]]
    return tuple(shape), _run_strides(strides, shape, order), self.dtype.to_complex()


def c2r_plan(
    self: Tensor, dim: Sequence[int], last_dim_size: int
) -> tuple[tuple[int, ...], tuple[int, ...], dtypes.dtype]:
    """``_fft_c2r``: a complex half spectrum; the real result has ``last_dim_size`` along the
    last of ``dim``. Returns shape, strides and dtype."""
    fft_dtype(self.dtype)
    if not self.dtype.is_complex:
        raise RuntimeError(f"_fft_c2r: expects a complex input tensor, but got {self.dtype._short}")
    dims = fft_dims(self.shape, dim)
    if last_dim_size < 1:
        raise RuntimeError(f"Invalid number of data points ({last_dim_size}) specified")
    shape = list(self.shape)
    strides = self.stride()
    if dims:
        shape[dims[-1]] = last_dim_size
    if len(dims) > 1:  # a c2c over the others first: its layout orders the batch dims
        strides = _run_strides(strides, tuple(self.shape), _by_stride(strides, dims[:-1]))
    return tuple(shape), _run_strides(strides, shape, dims[-1:]), self.dtype.to_real()


def fftfreq_plan(n: int, op: str, options: dict[str, Any]) -> dtypes.dtype:
    """``fft_fftfreq``/``fft_rfftfreq``: the result's dtype (floating or complex)."""
    check_layout(options.get("layout"), op)
    d = dtype_of(options.get("dtype"), dtypes.get_default_dtype())
    if d.category < dtypes.FLOATING:
        raise RuntimeError(f"{op} requires a floating point or complex dtype")
    if d.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{d._short}'")
    if n < 0:
        raise RuntimeError(f"{op}: n must be non-negative, got {n}")
    return d


# --------------------------------------------------------------------------- decompositions

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


def _norm(norm: str | None, forward: bool) -> int:
    """The ``normalization`` code of ``norm`` for a forward or an inverse transform."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _floating(x: Tensor, complex_: bool = False) -> Tensor:
    """An integer or bool input cast to the default float dtype (or its complex type)."""
    if x.dtype.category >= dtypes.FLOATING:
        fft_dtype(x.dtype)  # float16 has no kernel
    else:
        d = dtypes.get_default_dtype()
        return aten._to_copy.default(x, dtype=d.to_complex() if complex_ else d)  # type: ignore[no-any-return]
    if complex_ and not x.dtype.is_complex:
        return aten._to_copy.default(x, dtype=x.dtype.to_complex())  # type: ignore[no-any-return]
    return x


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """``x`` cut (``slice``) or zero-padded (``constant_pad_nd``) to ``sizes`` along ``dims``."""
    pad = [0] * (2 * x.ndim)
    padded = False
    for d, n in zip(dims, sizes, strict=True):
        if n == -1:
            continue
        if n < x.shape[d]:
            x = aten.slice.Tensor(x, d, 0, n)
        elif n > x.shape[d]:
            pad[2 * (x.ndim - 1 - d) + 1] = n - x.shape[d]
            padded = True
    if padded:
        lowest = min(d for d, n in zip(dims, sizes, strict=True) if n > x.shape[d])
        x = aten.constant_pad_nd.default(x, pad[: 2 * (x.ndim - lowest)])
    return x


def _points(n: int) -> int:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _one_dim(x: Tensor, n: int | None, dim: int) -> tuple[int, int | None]:
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, x.ndim)
    return d, None if n is None else _points(n)


def _c2c_or_r2c(x: Tensor, dims: list[int], norm: str | None, forward: bool) -> Tensor:
    """The full transform of a complex input, or of a real one through ``_fft_r2c``
    (``ifft`` of a real input: the conjugate of its forward transform, scaled)."""
    if x.dtype.is_complex:
        return aten._fft_c2c.default(x, dims, _norm(norm, forward), forward)  # type: ignore[no-any-return]
    out = aten._fft_r2c.default(x, dims, _norm(norm, forward), False)
    return out if forward else aten.conj.default(out)  # type: ignore[no-any-return]


@impl(aten.fft_fft.default, _CIA)
def fft_fft(self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    x = _floating(self)
    d, n = _one_dim(x, n, dim)
    x = _resize(x, [d], [n if n is not None else _points(x.shape[d])])
    return _c2c_or_r2c(x, [d], norm, True)


@impl(aten.fft_ifft.default, _CIA)
def fft_ifft(self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    x = _floating(self)
    d, n = _one_dim(x, n, dim)
    x = _resize(x, [d], [n if n is not None else _points(x.shape[d])])
    return _c2c_or_r2c(x, [d], norm, False)


def _real_input(x: Tensor, op: str) -> Tensor:
    if x.dtype.is_complex:
        raise RuntimeError(f"{op} expects a real input tensor, but got {x.dtype._short}")
    return _floating(x)


@impl(aten.fft_rfft.default, _CIA)
def fft_rfft(self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    x = _real_input(self, "rfft")
    d, n = _one_dim(x, n, dim)
    x = _resize(x, [d], [n if n is not None else _points(x.shape[d])])
    return aten._fft_r2c.default(x, [d], _norm(norm, True), True)  # type: ignore[no-any-return]


@impl(aten.fft_irfft.default, _CIA)
def fft_irfft(self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    x = _floating(self, complex_=True)
    d, n = _one_dim(x, n, dim)
    last = n if n is not None else _points(2 * (x.shape[d] - 1))
    x = _resize(x, [d], [last // 2 + 1])
    return aten._fft_c2r.default(x, [d], _norm(norm, False), last)  # type: ignore[no-any-return]


@impl(aten.fft_hfft.default, _CIA)
def fft_hfft(self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    x = _floating(self, complex_=True)
    d, n = _one_dim(x, n, dim)
    last = n if n is not None else _points(2 * (x.shape[d] - 1))
    x = _resize(x, [d], [last // 2 + 1])
    x = aten.clone.default(aten.conj.default(x))
    return aten._fft_c2r.default(x, [d], _norm(norm, True), last)  # type: ignore[no-any-return]


@impl(aten.fft_ihfft.default, _CIA)
def fft_ihfft(self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    x = _real_input(self, "ihfft")
    d, n = _one_dim(x, n, dim)
    x = _resize(x, [d], [n if n is not None else _points(x.shape[d])])
    out = aten._fft_r2c.default(x, [d], _norm(norm, False), True)
    return aten.conj.default(out)  # type: ignore[no-any-return]


def _nd_dims(
    x: Tensor, s: Sequence[int] | None, dim: Sequence[int] | int | None
) -> tuple[list[int], list[int]]:
    """The transformed dims and their sizes (``-1``: the input's) of an n-dimensional
    transform: all dims, or the last ``len(s)``, or ``dim``."""
    if isinstance(dim, int):
        dim = [dim]
    if s is not None:
        s = [operator.index(n) for n in s]
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > x.ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions."
            )
    if dim is None:
        dims = list(range(x.ndim - len(s), x.ndim)) if s is not None else list(range(x.ndim))
    else:
        dims = fft_dims(x.shape, dim)
    sizes = list(s) if s is not None else [-1] * len(dims)
    for i, n in enumerate(sizes):
        if n == -1:
            sizes[i] = x.shape[dims[i]]
        _points(sizes[i])
    return dims, sizes


def _fftn(x: Tensor, s: Any, dim: Any, norm: str | None, forward: bool) -> Tensor:
    x = _floating(x, complex_=True)
    dims, sizes = _nd_dims(x, s, dim)
    x = _resize(x, dims, sizes)
    return aten._fft_c2c.default(x, dims, _norm(norm, forward), forward)  # type: ignore[no-any-return]


def _rfftn(x: Tensor, s: Any, dim: Any, norm: str | None) -> Tensor:
    x = _real_input(x, "rfftn")
    dims, sizes = _nd_dims(x, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(x, dims, sizes)
    return aten._fft_r2c.default(x, dims, _norm(norm, True), True)  # type: ignore[no-any-return]


def _irfftn(x: Tensor, s: Any, dim: Any, norm: str | None) -> Tensor:
    x = _floating(x, complex_=True)
    dims, sizes = _nd_dims(x, s, dim)
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    given = s is not None and list(s)[-1] != -1
    last = sizes[-1] if given else _points(2 * (x.shape[dims[-1]] - 1))
    sizes[-1] = last // 2 + 1
    x = _resize(x, dims, sizes)
    return aten._fft_c2r.default(x, dims, _norm(norm, False), last)  # type: ignore[no-any-return]


@impl(aten.fft_fft2.default, _CIA)
def fft_fft2(self: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    return _fftn(self, s, dim, norm, True)


@impl(aten.fft_ifft2.default, _CIA)
def fft_ifft2(self: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    return _fftn(self, s, dim, norm, False)


@impl(aten.fft_rfft2.default, _CIA)
def fft_rfft2(self: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    return _rfftn(self, s, dim, norm)


@impl(aten.fft_irfft2.default, _CIA)
def fft_irfft2(self: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    return _irfftn(self, s, dim, norm)


@impl(aten.fft_fftn.default, _CIA)
def fft_fftn(self: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    return _fftn(self, s, dim, norm, True)


@impl(aten.fft_ifftn.default, _CIA)
def fft_ifftn(self: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    return _fftn(self, s, dim, norm, False)


@impl(aten.fft_rfftn.default, _CIA)
def fft_rfftn(self: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    return _rfftn(self, s, dim, norm)


@impl(aten.fft_irfftn.default, _CIA)
def fft_irfftn(self: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    return _irfftn(self, s, dim, norm)


def _shift(self: Tensor, dim: Any, inverse: bool) -> Tensor:
    if self.ndim == 0 and dim is None:
        raise RuntimeError("`shifts` required")
    dims = (
        list(range(self.ndim))
        if dim is None
        else fft_dims(self.shape, [dim] if isinstance(dim, int) else dim)
    )
    shifts = [(self.shape[d] + 1) // 2 if inverse else self.shape[d] // 2 for d in dims]
    return aten.roll.default(self, shifts, dims)  # type: ignore[no-any-return]


@impl(aten.fft_fftshift.default, _CIA)
def fft_fftshift(self: Tensor, dim: Any = None) -> Tensor:
    """Move the zero frequency to the middle: ``roll`` by half of each dim."""
    return _shift(self, dim, False)


@impl(aten.fft_ifftshift.default, _CIA)
def fft_ifftshift(self: Tensor, dim: Any = None) -> Tensor:
    """Undo ``fftshift``: ``roll`` by the other half of each dim."""
    return _shift(self, dim, True)
