"""The spatial part of ``ember.nn.functional`` (re-exported there): convolution in 1-3 dims
and transposed, pooling, group and instance norm, channel dropout, resampling, pixel
shuffles, ``unfold``/``fold``. Each is a thin front over the aten ops of
``ember/ops/native/spatial.py``, with PyTorch's signature, defaults, checks and
``__torch_function__`` route (NOTE [two routes] in ``ember/overrides/__init__.py``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import ember
from ember._tensor import Tensor
from ember.ops.native.spatial import GRID_PADDING, INTERPOLATION
from ember.ops.registry import ops
from ember.overrides import guard_function, python_route

aten = ops.aten
_Size = int | Sequence[int]

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "affine_grid",
    "avg_pool1d",
    "avg_pool3d",
    "channel_shuffle",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "fold",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "grid_sample",
    "group_norm",
    "instance_norm",
    "interpolate",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "pixel_shuffle",
    "pixel_unshuffle",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


def _tuple(v: Any, n: int) -> list[int]:
    """``v`` as a list of ``n`` ints (one int repeated)."""
    return [v] * n if isinstance(v, int) else list(v)


# --------------------------------------------------------------------------- convolution


def _conv(
    n: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: _Size,
    padding: _Size | str,
    dilation: _Size,
    groups: int,
) -> Tensor:
    op = getattr(aten, f"conv{n}d")
    s, d = _tuple(stride, n), _tuple(dilation, n)
    if isinstance(padding, str):
        return op.padding(input, weight, bias, s, padding, d, groups)  # type: ignore[no-any-return]
    return op.default(input, weight, bias, s, _tuple(padding, n), d, groups)  # type: ignore[no-any-return]


#: the input of an n-d op, as the docstrings name it (the batch dimension may be left out)
_INPUT = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


def _name(fn: Callable[..., Any], name: str, doc: str) -> Callable[..., Any]:
    """``fn`` (one member of an n-d family, made by a function below) named ``name``."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _example(call: str, result: str) -> str:
    return f"\n\n    >>> import ember.nn.functional as F\n    >>> {call}\n    {result}\n    "


def _conv_nd(n: int) -> Callable[..., Tensor]:
    """``conv{n}d``: PyTorch's signature over ``aten.conv{n}d``."""

    def conv(
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        stride: _Size = 1,
        padding: _Size | str = 0,
        dilation: _Size = 1,
        groups: int = 1,
    ) -> Tensor:
        return _conv(n, input, weight, bias, stride, padding, dilation, groups)

    x, w = ", ".join(["1", "2"] + ["5"] * n), ", ".join(["3", "2"] + ["3"] * n)
    doc = (
        f"{n}-d convolution (cross-correlation) over ``{_INPUT[n]}`` input; ``padding`` may "
        "be ``'same'`` or ``'valid'``."
        + _example(f'F.conv{n}d(ember.ones({x}), ember.ones({w}), padding="same").shape',
                   f"ember.Size([{', '.join(['1', '3'] + ['5'] * n)}])")
    )  # fmt: skip
    return guard_function(_name(conv, f"conv{n}d", doc))


conv1d, conv2d, conv3d = _conv_nd(1), _conv_nd(2), _conv_nd(3)


def _conv_transpose(
    n: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: _Size,
    padding: _Size,
    output_padding: _Size,
    groups: int,
    dilation: _Size,
) -> Tensor:
    if isinstance(padding, str):
        raise TypeError(f"conv_transpose{n}d(): argument 'padding' must be tuple of ints, not str")
    packet = getattr(aten, f"conv_transpose{n}d")
    op = packet.default if n == 1 else packet.input
    return op(  # type: ignore[no-any-return]
        input, weight, bias, _tuple(stride, n), _tuple(padding, n), _tuple(output_padding, n),
        groups, _tuple(dilation, n),
    )  # fmt: skip


def _conv_transpose_nd(n: int) -> Callable[..., Tensor]:
    """``conv_transpose{n}d``: PyTorch's signature over ``aten.conv_transpose{n}d``."""

    def conv_transpose(
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        stride: _Size = 1,
        padding: _Size = 0,
        output_padding: _Size = 0,
        groups: int = 1,
        dilation: _Size = 1,
    ) -> Tensor:
        return _conv_transpose(
            n, input, weight, bias, stride, padding, output_padding, groups, dilation
        )

    x, w = ", ".join(["1", "2"] + ["4"] * n), ", ".join(["2", "3"] + ["2"] * n)
    doc = (
        f"{n}-d transposed convolution over ``{_INPUT[n]}`` input, weight ``(C_in, C_out // "
        "groups, *kernel_size)``."
        + _example(f"F.conv_transpose{n}d(ember.ones({x}), ember.ones({w}), stride=2).shape",
                   f"ember.Size([{', '.join(['1', '3'] + ['8'] * n)}])")
    )  # fmt: skip
    return guard_function(_name(conv_transpose, f"conv_transpose{n}d", doc))


conv_transpose1d = _conv_transpose_nd(1)
conv_transpose2d = _conv_transpose_nd(2)
conv_transpose3d = _conv_transpose_nd(3)


# --------------------------------------------------------------------------- pooling


def _stride(stride: _Size | None, n: int) -> list[int]:
    return [] if stride is None else _tuple(stride, n)


def _max_pool(
    n: int,
    input: Tensor,
    kernel_size: _Size,
    stride: _Size | None,
    padding: _Size,
    dilation: _Size,
    ceil_mode: bool,
) -> tuple[Tensor, Tensor]:
    op = getattr(aten, f"max_pool{n}d_with_indices").default
    k, p, d = _tuple(kernel_size, n), _tuple(padding, n), _tuple(dilation, n)
    out = op(input, k, _stride(stride, n), p, d, ceil_mode)
    return out[0], out[1]


def _max_pool_nd(n: int, with_indices: bool) -> Callable[..., Any]:
    """``max_pool{n}d`` (the maxima, and their positions with ``return_indices``) or
    ``max_pool{n}d_with_indices`` (both, always): PyTorch's signature."""

    def max_pool(
        input: Tensor,
        kernel_size: _Size,
        stride: _Size | None = None,
        padding: _Size = 0,
        dilation: _Size = 1,
        ceil_mode: bool = False,
        return_indices: bool = False,
    ) -> Any:
        out = _max_pool(n, input, kernel_size, stride, padding, dilation, ceil_mode)
        return out if with_indices or return_indices else out[0]

    name = f"max_pool{n}d" + ("_with_indices" if with_indices else "")
    x = ", ".join(["1", "1"] + ["4"] * n)
    out = f"ember.Size([{', '.join(['1', '1'] + ['2'] * n)}])"
    doc = (
        f"{n}-d max pooling over ``{_INPUT[n]}`` input"
        + (": the maxima and their flat positions in each plane."
           if with_indices else "; with ``return_indices`` also the argmax positions.")
        + _example(f"F.{name}(ember.ones({x}), 2){'[1]' if with_indices else ''}.shape", out)
    )  # fmt: skip
    return python_route()(_name(max_pool, name, doc))


max_pool1d_with_indices = _max_pool_nd(1, True)
max_pool2d_with_indices = _max_pool_nd(2, True)
max_pool3d_with_indices = _max_pool_nd(3, True)
max_pool1d, max_pool3d = _max_pool_nd(1, False), _max_pool_nd(3, False)


@guard_function
def avg_pool1d(
    input: Tensor,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """1-d average pooling over ``(N, C, L)`` or ``(C, L)``.

    >>> import ember.nn.functional as F
    >>> F.avg_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
    tensor([[[2., 1.]]])
    """
    return aten.avg_pool1d.default(  # type: ignore[no-any-return]
        input, _tuple(kernel_size, 1), _stride(stride, 1), _tuple(padding, 1), ceil_mode,
        count_include_pad,
    )  # fmt: skip


@guard_function
def avg_pool3d(
    input: Tensor,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """3-d average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> import ember.nn.functional as F
    >>> F.avg_pool3d(ember.ones(1, 1, 4, 4, 4), 2).shape
    ember.Size([1, 1, 2, 2, 2])
    """
    return aten.avg_pool3d.default(  # type: ignore[no-any-return]
        input, _tuple(kernel_size, 3), _stride(stride, 3), _tuple(padding, 3), ceil_mode,
        count_include_pad, divisor_override,
    )  # fmt: skip


def _output_size(output_size: Any, input: Tensor, n: int) -> list[int]:
    """``output_size`` as ``n`` ints; a None keeps the input's size (PyTorch's
    ``_list_with_default``)."""
    if isinstance(output_size, int):
        return [output_size] * n
    size = list(output_size)
    if len(size) != n:
        raise ValueError(
            f"Input dimension should be at least {len(size) + 1}, got output_size {size}"
        )
    return [input.shape[input.ndim - n + i] if v is None else v for i, v in enumerate(size)]


@guard_function
def adaptive_avg_pool1d(input: Tensor, output_size: _Size) -> Tensor:
    """1-d adaptive average pooling to ``output_size`` positions.

    >>> import ember.nn.functional as F
    >>> F.adaptive_avg_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 1)
    tensor([[[1.5000]]])
    """
    return aten.adaptive_avg_pool1d.default(input, _tuple(output_size, 1))  # type: ignore[no-any-return]


@python_route()
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """2-d adaptive average pooling to ``output_size`` (an int, or a pair with None for "keep").

    >>> import ember.nn.functional as F
    >>> F.adaptive_avg_pool2d(ember.ones(1, 2, 7, 5), (3, None)).shape
    ember.Size([1, 2, 3, 5])
    """
    return aten.adaptive_avg_pool2d.default(input, _output_size(output_size, input, 2))  # type: ignore[no-any-return]


@python_route()
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """3-d adaptive average pooling to ``output_size``.

    >>> import ember.nn.functional as F
    >>> F.adaptive_avg_pool3d(ember.ones(1, 2, 4, 7, 5), 2).shape
    ember.Size([1, 2, 2, 2, 2])
    """
    return aten.adaptive_avg_pool3d.default(input, _output_size(output_size, input, 3))  # type: ignore[no-any-return]


def _adaptive_max(n: int, input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    if n == 1:
        out = aten.adaptive_max_pool1d.default(input, _tuple(output_size, 1))
    else:
        op = getattr(aten, f"adaptive_max_pool{n}d").default
        out = op(input, _output_size(output_size, input, n))
    return out[0], out[1]


def _adaptive_max_pool_nd(n: int, with_indices: bool) -> Callable[..., Any]:
    """``adaptive_max_pool{n}d`` or ``adaptive_max_pool{n}d_with_indices``: PyTorch's
    signature."""

    def adaptive_max_pool(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
        out = _adaptive_max(n, input, output_size)
        return out if with_indices or return_indices else out[0]

    name = f"adaptive_max_pool{n}d" + ("_with_indices" if with_indices else "")
    x = ", ".join(["1", "2"] + ["4"] * n)
    out = f"ember.Size([{', '.join(['1', '2'] + ['2'] * n)}])"
    doc = (
        f"{n}-d adaptive max pooling to ``output_size`` (an int, or one per dimension, None "
        "keeping the input's size)"
        + (": the maxima and their flat positions." if with_indices else ".")
        + _example(f"F.{name}(ember.ones({x}), 2){'[1]' if with_indices else ''}.shape", out)
    )  # fmt: skip
    return python_route()(_name(adaptive_max_pool, name, doc))


adaptive_max_pool1d_with_indices = _adaptive_max_pool_nd(1, True)
adaptive_max_pool2d_with_indices = _adaptive_max_pool_nd(2, True)
adaptive_max_pool3d_with_indices = _adaptive_max_pool_nd(3, True)
adaptive_max_pool1d = _adaptive_max_pool_nd(1, False)
adaptive_max_pool2d = _adaptive_max_pool_nd(2, False)
adaptive_max_pool3d = _adaptive_max_pool_nd(3, False)


def _fractional_max_pool_nd(n: int, with_indices: bool) -> Callable[..., Any]:
    """``fractional_max_pool{n}d`` or its ``_with_indices`` form: PyTorch's signature over
    ``aten.fractional_max_pool{n}d`` (NOTE [fractional max pooling])."""
    name = f"fractional_max_pool{n}d"

    def fractional_max_pool(
        input: Tensor,
        kernel_size: Any,
        output_size: Any = None,
        output_ratio: Any = None,
        return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ) -> Any:
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
        if output_size is None:
            if n == 2 and len(output_ratio) > 2:  # (a number has no len(), as in PyTorch)
                raise ValueError(
                    f"{name} requires output_ratio to either be a single Int or tuple of Ints."
                )
            ratio = [output_ratio] * n if isinstance(output_ratio, (int, float)) else output_ratio
            output_size = [int(input.shape[input.ndim - n + i] * ratio[i]) for i in range(n)]
        if _random_samples is None:
            batch = 1 if input.ndim == n + 1 else input.shape[0]
            channels = input.shape[input.ndim - n - 1]
            _random_samples = ember.rand(  # (the public call, as PyTorch's: modes see it)
                batch, channels, n, dtype=input.dtype, device=input.device
            )
        op = getattr(aten, name).default
        out = op(input, _tuple(kernel_size, n), _tuple(output_size, n), _random_samples)
        return (out[0], out[1]) if with_indices or return_indices else out[0]

    shape = ", ".join(["1", "2"] + ["8"] * n)
    result = f"ember.Size([{', '.join(['1', '2'] + ['4'] * n)}])"
    doc = (
        f"{n}-d fractional max pooling (Graham, 2014): ``kernel_size`` windows at pseudo-random "
        "starts, one sample in [0, 1) per plane and dim (``_random_samples`` of shape "
        f"(N, C, {n}), drawn from ``ember.rand`` when not given), to ``output_size`` or "
        "``output_ratio`` times the input's size"
        + (": the maxima and their flat positions." if with_indices else ".")
        + _example(f"F.{name}(ember.randn({shape}), 2, output_size={n * (4,)}).shape", result)
    )  # fmt: skip
    return python_route()(
        _name(fractional_max_pool, name + ("_with_indices" if with_indices else ""), doc)
    )


fractional_max_pool2d = _fractional_max_pool_nd(2, False)
fractional_max_pool2d_with_indices = _fractional_max_pool_nd(2, True)
fractional_max_pool3d = _fractional_max_pool_nd(3, False)
fractional_max_pool3d_with_indices = _fractional_max_pool_nd(3, True)


# --------------------------------------------------------------------------- normalization


@python_route()
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each sample over groups of ``C // num_groups`` channels (and all positions),
    then scale and shift per channel.

    >>> import ember.nn.functional as F
    >>> F.group_norm(ember.tensor([[1.0, 3.0, 2.0, 6.0]]), 2)
    tensor([[-1.0000,  1.0000, -1.0000,  1.0000]])
    """
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    if num_groups > 0 and input.shape[1] % num_groups == 0:
        per_channel = input.shape[0] * input.shape[1] // num_groups * math.prod(input.shape[2:])
        if per_channel == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{[input.shape[0] * input.shape[1] // num_groups, num_groups, *input.shape[2:]]}"
            )
    return aten.group_norm.default(input, num_groups, weight, bias, eps)  # type: ignore[no-any-return]


@python_route()
def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each (sample, channel) over its positions; with running statistics, update
    them (``use_input_stats``) or normalize by them.

    >>> import ember.nn.functional as F
    >>> F.instance_norm(ember.tensor([[[1.0, 3.0], [2.0, 6.0]]]))
    tensor([[[-1.0000,  1.0000],
             [-1.0000,  1.0000]]])
    """
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size "
            f"{list(input.shape)}"
        )
    return aten.instance_norm.default(  # type: ignore[no-any-return]
        input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False
    )


# --------------------------------------------------------------------------- channel dropout


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    if inplace:
        return aten.feature_dropout_.default(input, p, training)  # type: ignore[no-any-return]
    return aten.feature_dropout.default(input, p, training)  # type: ignore[no-any-return]


def _maybe_unbatched_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, batched_ndim: int
) -> Tensor:
    """``_feature_dropout`` of ``input``, given a batch dimension first when it has fewer
    than ``batched_ndim`` dims (and the result without it)."""
    if input.ndim == batched_ndim:
        return _feature_dropout(input, p, training, inplace)
    out = _feature_dropout(aten.unsqueeze.default(input, 0), p, training, inplace)
    return input if inplace else aten.squeeze.dim(out, 0)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


@python_route()
def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p``,
    scaling the rest by ``1 / (1 - p)``.

    >>> import ember.nn.functional as F
    >>> F.dropout1d(ember.ones(2, 3), 0.5, training=False)
    tensor([[1., 1., 1.],
            [1., 1., 1.]])
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _maybe_unbatched_dropout(input, p, training, inplace, 3)


@python_route()
def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels (2-d feature maps) of ``(N, C, H, W)`` input with probability
    ``p``, scaling the rest by ``1 / (1 - p)``; 3-D input is taken as ``(N, C, L)``, as in
    PyTorch.

    >>> import ember.nn.functional as F
    >>> F.dropout2d(ember.ones(1, 2, 2, 2), 0.0).sum()
    tensor(8.)
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead.",
            stacklevel=3,  # the caller's line: python_route adds a frame
        )
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. Use dropout1d for (N, C, L) inputs.",
            stacklevel=3,  # the caller's line: python_route adds a frame
        )
    return _feature_dropout(input, p, training, inplace)


@python_route()
def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels (3-d feature maps) of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input
    with probability ``p``, scaling the rest by ``1 / (1 - p)``.

    >>> import ember.nn.functional as F
    >>> F.dropout3d(ember.ones(1, 2, 2, 2, 2), 1.0).sum()
    tensor(0.)
    """
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead.",
            stacklevel=3,  # the caller's line: python_route adds a frame
        )
    return _maybe_unbatched_dropout(input, p, training, inplace, 5)


# --------------------------------------------------------------------------- resampling

_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")
_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_UPSAMPLE_OPS = {
    ("nearest", 1): "upsample_nearest1d",
    ("nearest", 2): "upsample_nearest2d",
    ("nearest", 3): "upsample_nearest3d",
    ("nearest-exact", 1): "_upsample_nearest_exact1d",
    ("nearest-exact", 2): "_upsample_nearest_exact2d",
    ("nearest-exact", 3): "_upsample_nearest_exact3d",
    ("linear", 1): "upsample_linear1d",
    ("bilinear", 2): "upsample_bilinear2d",
    ("bicubic", 2): "upsample_bicubic2d",
    ("trilinear", 3): "upsample_trilinear3d",
}


def _is_integer(x: Any) -> bool:
    if isinstance(x, Tensor):
        return not x.dtype.is_floating_point and x.ndim == 0
    return isinstance(x, int) and not isinstance(x, bool)


@python_route()
def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of ``(N, C, *spatial)`` input to ``size`` or by
    ``scale_factor``: modes ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D),
    ``'bilinear'``/``'bicubic'`` (4-D), ``'trilinear'`` (5-D), ``'area'``.

    >>> import ember.nn.functional as F
    >>> F.interpolate(ember.tensor([[[1.0, 3.0]]]), scale_factor=2, mode="linear")
    tensor([[[1.0000, 1.5000, 2.5000, 3.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    output_size: list[int] | None
    scale_factors: list[float] | None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}"
                )
            output_size = [int(x) for x in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        assert scale_factors is not None
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias and mode == "lanczos":
        raise NotImplementedError(
            "interpolate: antialias=True with mode 'lanczos' is not supported by ember yet; "
            "use mode 'bilinear' or 'bicubic'"
        )
    if antialias:  # 4-D bilinear or bicubic, checked above
        vec = getattr(aten, f"_upsample_{mode}2d_aa").vec
        return vec(input, output_size, align_corners, scale_factors)  # type: ignore[no-any-return]
    if mode == "area" and 1 <= dim <= 3:
        assert output_size is not None
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
        return pool(input, output_size)  # type: ignore[operator, no-any-return]
    name = _UPSAMPLE_OPS.get((mode, dim))
    if name is not None:
        vec = getattr(aten, name).vec
        if mode in _INTERPOLATING:
            return vec(input, output_size, align_corners, scale_factors)  # type: ignore[no-any-return]
        return vec(input, output_size, scale_factors)  # type: ignore[no-any-return]
    want = _MODE_DIMS.get(mode)
    if want is not None and 1 <= dim <= 3:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {want + 2}D input"
        )
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
        f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
        f"(got {mode})"
    )


@python_route()
def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated name of :func:`interpolate`.

    >>> import warnings
    >>> import ember.nn.functional as F
    >>> with warnings.catch_warnings(action="ignore"):  # it warns that it is deprecated
    ...     F.upsample(ember.ones(1, 1, 2), scale_factor=2).shape
    ember.Size([1, 1, 4])
    """
    warnings.warn(
        "nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
        stacklevel=3,  # the caller's line: python_route adds a frame
    )
    return interpolate(input, size, scale_factor, mode, align_corners)  # type: ignore[no-any-return]


def _deprecated_upsample(mode: str, align_corners: bool | None) -> Any:
    """``upsample_<mode>`` (deprecated): ``interpolate`` with that mode (and
    ``align_corners``, when given), one definition for both."""
    name = f"upsample_{mode}"
    options: dict[str, Any] = {"mode": mode}
    if align_corners is not None:
        options["align_corners"] = align_corners
    spelled = ", ".join(f"{k}={v!r}" for k, v in options.items())

    def upsample_mode(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
        warnings.warn(
            f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.",
            stacklevel=3,  # the caller's line: python_route adds a frame
        )
        return interpolate(input, size, scale_factor, **options)  # type: ignore[no-any-return]

    upsample_mode.__name__ = upsample_mode.__qualname__ = name
    upsample_mode.__doc__ = f"""Deprecated: ``interpolate(..., {spelled})``.

    >>> import warnings
    >>> import ember.nn.functional as F
    >>> with warnings.catch_warnings(action="ignore"):  # it warns that it is deprecated
    ...     F.{name}(ember.ones(1, 1, 2, 2), scale_factor=2).shape
    ember.Size([1, 1, 4, 4])
    """
    return python_route()(upsample_mode)


upsample_nearest = _deprecated_upsample("nearest", None)
upsample_bilinear = _deprecated_upsample("bilinear", True)


def _warn_align_corners() -> None:
    warnings.warn(
        "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
        "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
        "documentation of grid_sample for details.",
        stacklevel=4,  # the caller of grid_sample or affine_grid
    )


@python_route()
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample ``input`` at the points of ``grid`` (``(N, *out, 2)`` of x, y in [-1, 1], or 3
    coordinates for 5-D input): modes ``'bilinear'``, ``'nearest'``, ``'bicubic'`` (4-D input
    only); padding ``'zeros'``, ``'border'``, ``'reflection'``.

    >>> import ember.nn.functional as F
    >>> grid = ember.zeros(1, 1, 1, 2)  # the centre of the image
    >>> F.grid_sample(ember.tensor([[[[1.0, 2.0], [3.0, 4.0]]]]), grid, align_corners=False)
    tensor([[[[2.5000]]]])
    """
    if mode not in INTERPOLATION:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in GRID_PADDING:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    return aten.grid_sampler.default(  # type: ignore[no-any-return]
        input, grid, INTERPOLATION[mode], GRID_PADDING[padding_mode], align_corners
    )


@python_route()
def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (``(N, 2, 3)`` or ``(N, 3, 4)``) for an
    output of ``size`` (``(N, C, H, W)`` or ``(N, C, D, H, W)``), for :func:`grid_sample`.

    >>> import ember.nn.functional as F
    >>> theta = ember.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(theta, [1, 1, 1, 2], align_corners=False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                f"{theta.shape}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                f"{theta.shape}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=3,  # the caller's line: python_route adds a frame
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return aten.affine_grid_generator.default(theta, size, align_corners)  # type: ignore[no-any-return]


@guard_function
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Channels split into ``groups`` groups and interleaved: ``(N, g * k, *)`` with channel
    ``i * k + j`` moved to ``j * g + i`` (ShuffleNet's shuffle).

    >>> ember.nn.functional.channel_shuffle(ember.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    return aten.channel_shuffle.default(input, groups)  # type: ignore[no-any-return]


@guard_function
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C * r^2, H, W)`` → ``(*, C, H * r, W * r)``: channels become space.

    >>> import ember.nn.functional as F
    >>> F.pixel_shuffle(ember.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    return aten.pixel_shuffle.default(input, upscale_factor)  # type: ignore[no-any-return]


@guard_function
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H * r, W * r)`` → ``(*, C * r^2, H, W)``: the inverse of :func:`pixel_shuffle`.

    >>> import ember.nn.functional as F
    >>> F.pixel_unshuffle(ember.arange(4.0).reshape(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    return aten.pixel_unshuffle.default(input, downscale_factor)  # type: ignore[no-any-return]


@python_route()
def unfold(
    input: Tensor,
    kernel_size: _Size,
    dilation: _Size = 1,
    padding: _Size = 0,
    stride: _Size = 1,
) -> Tensor:
    """Sliding blocks of ``(N, C, H, W)`` input as columns ``(N, C * kh * kw, L)`` (im2col).

    >>> import ember.nn.functional as F
    >>> F.unfold(ember.ones(1, 2, 3, 3), 2).shape
    ember.Size([1, 8, 4])
    """
    return aten.im2col.default(  # type: ignore[no-any-return]
        input, _tuple(kernel_size, 2), _tuple(dilation, 2), _tuple(padding, 2), _tuple(stride, 2)
    )


@python_route()
def fold(
    input: Tensor,
    output_size: _Size,
    kernel_size: _Size,
    dilation: _Size = 1,
    padding: _Size = 0,
    stride: _Size = 1,
) -> Tensor:
    """Sum columns ``(N, C * kh * kw, L)`` of sliding blocks back into ``(N, C, *output_size)``
    (col2im, the adjoint of :func:`unfold`).

    >>> import ember.nn.functional as F
    >>> F.fold(ember.ones(1, 8, 4), (3, 3), 2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    return aten.col2im.default(  # type: ignore[no-any-return]
        input, _tuple(output_size, 2), _tuple(kernel_size, 2), _tuple(dilation, 2),
        _tuple(padding, 2), _tuple(stride, 2),
    )  # fmt: skip
