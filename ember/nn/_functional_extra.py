"""More of ``ember.nn.functional`` (re-exported there): ``gumbel_softmax``, ``rms_norm``,
``embedding_bag``, ``max_unpool1d/2d/3d``, ``lp_pool1d/2d/3d``, ``local_response_norm``,
``alpha_dropout``, ``feature_alpha_dropout``, ``multi_margin_loss``, ``rrelu``.

Each is a composition of ember's differentiable ops, so values and gradients follow from
theirs. PyTorch writes ``gumbel_softmax``, ``lp_pool*`` and ``local_response_norm`` in
Python the same way; ``rms_norm`` and ``alpha_dropout`` are composite aten ops there; for
``embedding_bag``, ``max_unpool*``, ``multi_margin_loss`` and ``rrelu``, PyTorch has ops of
their own (``_embedding_bag``, ``max_unpool2d``, ``multi_margin_loss``, ``rrelu_with_noise``)
that a ``__torch_dispatch__`` mode sees, where ember's mode sees the ops they are made of
(docs/nn.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember
from ember._tensor import Tensor
from ember.nn import _functional_spatial as _spatial
from ember.nn._functional_activation import leaky_relu
from ember.nn.functional import _check_dropout_p, _reduction, pad, softmax
from ember.overrides import python_route

__all__ = [
    "alpha_dropout",
    "embedding_bag",
    "feature_alpha_dropout",
    "gumbel_softmax",
    "local_response_norm",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "multi_margin_loss",
    "rms_norm",
    "rrelu",
    "rrelu_",
]


@python_route()
def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """Sample from the Gumbel-softmax distribution over ``dim``: soft probabilities, or
    (``hard``) one-hot vectors whose gradient is the soft sample's (straight-through).

    >>> import ember.nn.functional as F
    >>> F.gumbel_softmax(ember.zeros(2, 3), hard=True).sum(-1)
    tensor([1., 1.])
    """
    gumbels = -ember.empty_like(logits).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = ember.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


@python_route()
def rms_norm(
    input: Tensor,
    normalized_shape: Sequence[int] | int,
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """Divide by the root mean square over the last ``len(normalized_shape)`` dims (plus
    ``eps``, by default the dtype's epsilon), then scale by ``weight``.

    >>> import ember.nn.functional as F
    >>> F.rms_norm(ember.tensor([[3.0, 4.0]]), [2])
    tensor([[0.8485, 1.1314]])
    """
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    k = len(shape)
    if k == 0 or list(input.shape[input.ndim - k :]) != shape or input.ndim < k:
        raise RuntimeError(
            f"rms_norm: given normalized_shape={shape}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(
            f"rms_norm: weight of shape {list(weight.shape)} does not match "
            f"normalized_shape={shape}"
        )
    if eps is None:
        eps = ember.finfo(input.dtype).eps
    dims = list(range(-k, 0))
    out = input * (input * input).mean(dims, keepdim=True).add(eps).rsqrt()
    return out * weight if weight is not None else out


@python_route()
def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxima of bags of embeddings: each row of a 2-D ``input`` is a bag,
    or a 1-D ``input`` is cut into bags at ``offsets``; ``padding_idx`` entries are left out.

    >>> import ember.nn.functional as F
    >>> w = ember.arange(6.0).reshape(3, 2)
    >>> F.embedding_bag(ember.tensor([0, 2, 1]), w, ember.tensor([0, 2]), mode="sum")
    tensor([[4., 6.],
            [2., 3.]])
    """
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.dtype not in (ember.int32, ember.int64):
        raise RuntimeError(
            f"embedding_bag: expected input of dtype Long or Int, but got {input.dtype}"
        )
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if sparse and mode == "max":
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                "on GitHub."
            )
        if per_sample_weights.shape != input.shape:
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is "
                f"not None, then it must have the same shape as the input "
                f"({tuple(input.shape)})"
            )
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets).__name__}"
            )
        bags, length = input.shape
        starts = np.arange(bags) * length
        flat = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        total = bags * length
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = np.asarray(offsets.tolist(), dtype=np.int64)
        flat, total = input, input.shape[0]
        if include_last_offset:
            total, starts = int(starts[-1]), starts[:-1]
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    if max_norm is not None:
        with ember.no_grad():  # as F.embedding: renormalise the looked-up rows in place
            ember.embedding_renorm_(weight.detach(), flat.contiguous(), max_norm, norm_type)
    idx = np.asarray(flat.tolist(), dtype=np.int64)[:total]
    ends = np.append(starts[1:], total)
    bag_of = np.repeat(np.arange(len(starts)), np.maximum(ends - starts, 0))
    keep = np.ones(total, dtype=bool) if padding_idx is None else idx != padding_idx % len(weight)
    pos = np.nonzero(keep)[0]
    if sparse:  # the rows through embedding(sparse=True): a sparse COO gradient, one row per
        # looked-up index (docs/sparse.md)
        rows = ember.nn.functional.embedding(ember.from_numpy(idx[pos]), weight, sparse=True)
    else:
        rows = weight[ember.from_numpy(idx[pos])]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[ember.from_numpy(pos)].unsqueeze(1)
    bag_ids = ember.from_numpy(bag_of[pos])
    out_shape = (len(starts), weight.shape[1])
    if mode == "max":
        parts = []
        for b in range(len(starts)):
            sel = np.nonzero(bag_of[pos] == b)[0]
            if len(sel):
                parts.append(rows[ember.from_numpy(sel)].amax(0))
            else:
                parts.append(ember.zeros(weight.shape[1], dtype=weight.dtype))
        return ember.stack(parts) if parts else ember.zeros(out_shape, dtype=weight.dtype)
    out = ember.zeros(out_shape, dtype=weight.dtype).index_add(0, bag_ids, rows)
    if mode == "mean":
        counts = np.bincount(bag_of[pos], minlength=len(starts)).astype(np.float64)
        scale = ember.tensor(1.0 / np.maximum(counts, 1.0), dtype=weight.dtype)
        out = out * scale.unsqueeze(1)
    return out


def _unpool_size(
    name: str,
    input: Tensor,
    kernel: list[int],
    stride: list[int],
    padding: list[int],
    output_size: Sequence[int] | None,
) -> list[int]:
    n = len(kernel)
    default = [
        (input.shape[input.ndim - n + d] - 1) * stride[d] - 2 * padding[d] + kernel[d]
        for d in range(n)
    ]
    if output_size is None:
        return default
    size = list(output_size)
    if len(size) == n + 2:
        size = size[2:]
    elif len(size) == n + 1 and input.ndim == n + 1:
        size = size[1:]
    if len(size) != n:
        raise ValueError(
            f"{name}: output_size should be a sequence containing {n} or {n + 2} elements, but "
            f"it has a length of '{len(size)}'"
        )
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < size[d] < hi:
            raise ValueError(
                f'{name}: invalid output_size "{list(output_size)}" (dim {d} must be between '
                f"{lo} and {hi})"
            )
    return size


def _max_unpool(
    name: str,
    n: int,
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    output_size: Sequence[int] | None,
) -> Tensor:
    def tup(v: Any) -> list[int]:
        return [v] * n if isinstance(v, int) else list(v)

    kernel = tup(kernel_size)
    strides = (
        kernel if stride is None or (not isinstance(stride, int) and not stride) else tup(stride)
    )  # noqa: E501
    pads = tup(padding)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(
            f"{name}: expected a {n + 1}D or {n + 2}D input, but got input of size "
            f"{list(input.shape)}"
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"{name}: expected indices of the input's shape {list(input.shape)}, but got "
            f"{list(indices.shape)}"
        )
    size = _unpool_size(name, input, kernel, strides, pads, output_size)
    lead = list(input.shape[: input.ndim - n])
    flat_in = input.reshape(*lead, -1)
    flat_idx = indices.reshape(*lead, -1)
    numel = math.prod(size)
    if flat_idx.numel() and (int(flat_idx.min()) < 0 or int(flat_idx.max()) >= numel):
        raise RuntimeError(
            f"{name}: found an invalid max index {int(flat_idx.max())} (output volumes are of "
            f"size {'x'.join(map(str, size))})"
        )
    out = ember.zeros(*lead, numel, dtype=input.dtype).scatter(-1, flat_idx, flat_in)
    return out.reshape(*lead, *size)


def _max_unpool_nd(n: int, doc: str) -> Callable[..., Tensor]:
    """``max_unpool{n}d`` (docstring ``doc``): PyTorch's signature over ``_max_unpool``."""

    def max_unpool(
        input: Tensor,
        indices: Tensor,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        output_size: Sequence[int] | None = None,
    ) -> Tensor:
        name = f"max_unpool{n}d"
        return _max_unpool(name, n, input, indices, kernel_size, stride, padding, output_size)

    return python_route()(_spatial._name(max_unpool, f"max_unpool{n}d", doc))


max_unpool1d = _max_unpool_nd(
    1,
    """The inverse of ``max_pool1d``: each value goes back to the position ``indices`` names
    (from ``max_pool1d(..., return_indices=True)``), zeros elsewhere.

    >>> import ember.nn.functional as F
    >>> F.max_unpool1d(ember.tensor([[[5.0, 7.0]]]), ember.tensor([[[1, 2]]]), 2)
    tensor([[[0., 5., 7., 0.]]])
    """,
)
max_unpool2d = _max_unpool_nd(
    2,
    """The inverse of ``max_pool2d`` (see ``max_unpool1d``).

    >>> import ember.nn.functional as F
    >>> F.max_unpool2d(ember.ones(1, 1, 1, 1), ember.tensor([[[[3]]]]), 2)
    tensor([[[[0., 0.],
              [0., 1.]]]])
    """,
)
max_unpool3d = _max_unpool_nd(
    3,
    """The inverse of ``max_pool3d`` (see ``max_unpool1d``).

    >>> import ember.nn.functional as F
    >>> F.max_unpool3d(ember.ones(1, 1, 1, 1, 1), ember.tensor([[[[[7]]]]]), 2).sum()
    tensor(1.)
    """,
)


def _lp_pool(
    n: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool
) -> Tensor:
    kernel = [kernel_size] * n if isinstance(kernel_size, int) else list(kernel_size)
    pool = (_spatial.avg_pool1d, ember.nn.functional.avg_pool2d, _spatial.avg_pool3d)[n - 1]
    if stride is not None:
        out = pool(input.pow(norm_type), kernel, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(norm_type), kernel, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * out.abs().relu()).mul(math.prod(kernel)).pow(1.0 / norm_type)


@python_route()
def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """The power-average pool: ``(sum over each window of x**p) ** (1/p)``.

    >>> import ember.nn.functional as F
    >>> F.lp_pool1d(ember.tensor([[[3.0, 4.0]]]), 2, 2)
    tensor([[[5.]]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


@python_route()
def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """The 2-D power-average pool (see ``lp_pool1d``).

    >>> import ember.nn.functional as F
    >>> F.lp_pool2d(ember.ones(1, 1, 2, 2), 1, 2)
    tensor([[[[4.]]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


@python_route()
def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """The 3-D power-average pool (see ``lp_pool1d``).

    >>> import ember.nn.functional as F
    >>> F.lp_pool3d(ember.ones(1, 1, 2, 2, 2), 1, 2).flatten()
    tensor([8.])
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


@python_route()
def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Divide each element by ``(k + alpha * mean of the squares over the `size`
    neighbouring channels) ** beta``.

    >>> import ember.nn.functional as F
    >>> F.local_response_norm(ember.ones(1, 3, 1), 2, alpha=1.0, k=0.0, beta=1.0).flatten()
    tensor([2., 1., 1.])
    """
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = (input * input).unsqueeze(1)
    if dim == 3:
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = ember.nn.functional.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _spatial.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


_SELU_ALPHA = 1.7580993408473766  # -scale * alpha of SELU: where a SELU's output saturates


def _alpha_dropout(
    name: str, input: Tensor, p: float, training: bool, inplace: bool, feature: bool
) -> Tensor:
    _check_dropout_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input.mul(0)
    if feature and input.ndim < 2:
        raise RuntimeError(f"{name}: Feature dropout requires at least 2 dimensions in the input")
    shape = list(input.shape[:2]) + [1] * (input.ndim - 2) if feature else list(input.shape)
    noise = ember.empty(shape, dtype=input.dtype).bernoulli_(1 - p)
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    b = noise.add(-1).mul_(_SELU_ALPHA * a).add_(_SELU_ALPHA * a * p)
    noise.mul_(a)
    if inplace:
        return input.mul_(noise).add_(b)
    return input * noise + b


@python_route()
def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value and
    the result is rescaled to keep the mean and variance.

    >>> import ember.nn.functional as F
    >>> F.alpha_dropout(ember.ones(3), 0.5, training=False)
    tensor([1., 1., 1.])
    """
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, feature=False)


@python_route()
def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """``alpha_dropout`` of whole channels (dims 0 and 1 pick the channel).

    >>> import ember.nn.functional as F
    >>> F.feature_alpha_dropout(ember.ones(1, 2, 2), 0.5, training=False).shape
    ember.Size([1, 2, 2])
    """
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, feature=True)


@python_route()
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: per sample, the mean over classes ``j != y`` of
    ``max(0, margin - x[y] + x[j]) ** p`` (times ``weight[y]``).

    >>> import ember.nn.functional as F
    >>> F.multi_margin_loss(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([3]))
    tensor(0.3250)
    """
    red = _reduction(reduction, "multi_margin_loss", size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if input.ndim not in (0, 1, 2):
        raise RuntimeError(
            f"multi_margin_loss: Expected non-empty vector or matrix with optional 0-dim batch "
            f"size, but got: {list(input.shape)}"
        )
    x = input.reshape(1, -1) if input.ndim < 2 else input
    y = target.reshape(-1)
    n, c = x.shape
    if y.shape[0] != n:
        raise RuntimeError(
            f"multi_margin_loss: inconsistent target size: {list(target.shape)} for input of "
            f"size: {list(input.shape)}"
        )
    if n and (int(y.min()) < 0 or int(y.max()) >= c):
        raise IndexError(f"multi_margin_loss: target out of range for {c} classes")
    x_y = x.gather(1, y.unsqueeze(1))
    z = (x - x_y + margin).clamp(min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y].unsqueeze(1)
    others = ember.ones(n, c, dtype=x.dtype).scatter(1, y.unsqueeze(1), 0.0)
    loss = (z * others).sum(1) / c
    if input.ndim < 2:
        loss = loss.reshape(target.shape if target.ndim else ())
    if red == 1:
        return loss.mean()
    if red == 2:
        return loss.sum()
    return loss


def _rrelu(input: Tensor, lower: float, upper: float, training: bool, inplace: bool) -> Tensor:
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slopes = ember.empty_like(input).uniform_(lower, upper)
    noise = ember.where(input >= 0, ember.ones_like(input), slopes)
    return input.mul_(noise) if inplace else input * noise


@python_route()
def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Leaky ReLU with a random slope for negatives: drawn from ``U(lower, upper)`` per
    element in training, ``(lower + upper) / 2`` otherwise.

    >>> import ember.nn.functional as F
    >>> F.rrelu(ember.tensor([-2.0, 3.0]), 0.25, 0.25)
    tensor([-0.5000,  3.0000])
    """
    return _rrelu(input, lower, upper, training, inplace)


@python_route()
def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place ``rrelu``.

    >>> import ember.nn.functional as F
    >>> F.rrelu_(ember.tensor([-2.0]), 0.5, 0.5)
    tensor([-1.])
    """
    return _rrelu(input, lower, upper, training, True)
