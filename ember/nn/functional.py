"""``ember.nn.functional``: PyTorch's functional layer API, each a thin front over aten ops.

Names, signatures and defaults are PyTorch's, and so is the ``__torch_function__`` route of
each: ``@python_route()`` for the functions PyTorch writes in Python (tensor arguments count,
plain ones too), ``@guard_function`` for those it binds in C++ (NOTE [two routes] in
``ember/overrides/__init__.py``). ``reduction`` strings map to the aten enum (``"none"`` 0,
``"mean"`` 1, ``"sum"`` 2).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.ops.native.nn import reduce_loss
from ember.ops.registry import ops
from ember.overrides import guard_function, python_route

aten = ops.aten
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
_IntOrPair = int | Sequence[int]

__all__ = [
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "dropout",
    "embedding",
    "gelu",
    "l1_loss",
    "layer_norm",
    "linear",
    "log_softmax",
    "max_pool2d",
    "mse_loss",
    "multi_head_attention_forward",
    "nll_loss",
    "one_hot",
    "pad",
    "relu",
    "scaled_dot_product_attention",
    "sigmoid",
    "silu",
    "softmax",
    "tanh",
]

# ---- the spatial ops (convolution, pooling, resampling...): ember/nn/_functional_spatial.py
from ember.nn import _functional_spatial  # noqa: E402
from ember.nn._functional_spatial import *  # noqa: E402, F403

__all__ += _functional_spatial.__all__
# ---- end of the spatial ops


def _reduction(reduction: str, op: str, size_average: Any = None, reduce: Any = None) -> int:
    """The aten enum of ``reduction``, or of the legacy ``size_average``/``reduce`` flags."""
    reduction = _legacy(size_average, reduce, reduction)
    try:
        return _REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(
            f"{op}: {reduction!r} is not a valid value for reduction; use 'none', 'mean' or 'sum'"
        ) from None


def _pair(v: _IntOrPair) -> list[int]:
    return [v, v] if isinstance(v, int) else list(v)


# --------------------------------------------------------------------------- layers


@guard_function
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``.

    >>> import ember.nn.functional as F
    >>> F.linear(ember.ones(2, 3), ember.ones(4, 3)).shape
    ember.Size([2, 4])
    """
    return aten.linear.default(input, weight, bias)


@python_route()
def max_pool2d(
    input: Tensor,
    kernel_size: _IntOrPair,
    stride: _IntOrPair | None = None,
    padding: _IntOrPair = 0,
    dilation: _IntOrPair = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """2-d max pooling; with ``return_indices`` also the flat argmax positions.

    >>> import ember.nn.functional as F
    >>> F.max_pool2d(ember.ones(1, 1, 4, 4), 2).shape
    ember.Size([1, 1, 2, 2])
    """
    s = [] if stride is None else _pair(stride)
    args = (input, _pair(kernel_size), s, _pair(padding), _pair(dilation), ceil_mode)
    if not return_indices:  # the composite op, as PyTorch calls (what export records)
        return aten.max_pool2d.default(*args)
    out = aten.max_pool2d_with_indices.default(*args)
    return out[0], out[1]


@guard_function
def avg_pool2d(
    input: Tensor,
    kernel_size: _IntOrPair,
    stride: _IntOrPair | None = None,
    padding: _IntOrPair = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """2-d average pooling.

    >>> import ember.nn.functional as F
    >>> F.avg_pool2d(ember.ones(1, 1, 4, 4), 2).shape
    ember.Size([1, 1, 2, 2])
    """
    s = [] if stride is None else _pair(stride)
    return aten.avg_pool2d.default(
        input, _pair(kernel_size), s, _pair(padding), ceil_mode, count_include_pad, divisor_override
    )


@python_route()
def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dims, then scale and shift.

    >>> import ember.nn.functional as F
    >>> F.layer_norm(ember.tensor([[1.0, 3.0]]), [2])
    tensor([[-1.0000,  1.0000]])
    """
    return aten.layer_norm.default(input, list(normalized_shape), weight, bias, eps)


@python_route()
def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel (dim 1) by batch statistics (training, updating the running
    ones in place) or by the running statistics.

    >>> import ember.nn.functional as F
    >>> F.batch_norm(ember.tensor([[1.0], [3.0]]), None, None, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    if training:
        size = list(input.shape)
        # values per channel, as PyTorch counts them: an empty batch has none and is fine
        if input.ndim < 2 or math.prod(size[:1] + size[2:]) == 1:
            raise ValueError(
                f"batch_norm: Expected more than 1 value per channel when training, "
                f"got input size {size}"
            )
    return aten.batch_norm.default(
        input, weight, bias, running_mean, running_var, training, momentum, eps, False
    )


@python_route()
def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``.

    >>> import ember.nn.functional as F
    >>> F.embedding(ember.tensor([1, 0]), ember.tensor([[0.0], [1.0]]))
    tensor([[1.],
            [0.]])
    """
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise AssertionError("embedding: Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % n
    else:
        padding_idx = -1
    if max_norm is not None:
        # as PyTorch: the looked-up rows of ``weight`` are renormalised in place, outside
        # autograd (on a detached alias, so the version counter still moves), then read
        indices = input.contiguous()
        with no_grad():
            aten.embedding_renorm_.default(weight.detach(), indices, max_norm, norm_type)
    else:
        indices = input
    return aten.embedding.default(weight, indices, padding_idx, scale_grad_by_freq, sparse)


def _check_dropout_p(p: float) -> None:
    """A dropout probability must lie in [0, 1] (``dropout``, ``alpha_dropout`` and the
    ``Dropout`` modules, which check it when made)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


@python_route()
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    >>> import ember.nn.functional as F
    >>> F.dropout(ember.ones(3), 0.5, training=False)
    tensor([1., 1., 1.])
    """
    _check_dropout_p(p)
    out = aten.dropout.default(input, p, training)
    if inplace:
        return input.copy_(out) if out is not input else input
    return out


@guard_function
def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims (``pad`` lists (left, right) from the last dim).

    >>> import ember.nn.functional as F
    >>> F.pad(ember.ones(1, 2), (1, 1))
    tensor([[0., 1., 1., 0.]])
    """
    return aten.pad.default(input, list(pad), mode, value)


@guard_function
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding with a new last dim of ``num_classes``.

    >>> import ember.nn.functional as F
    >>> F.one_hot(ember.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    return aten.one_hot.default(tensor, num_classes)


# --------------------------------------------------------------------------- activations


@python_route()
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``.

    >>> import ember.nn.functional as F
    >>> F.relu(ember.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return input.relu_() if inplace else input.relu()


@python_route()
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit (``approximate="tanh"`` for the tanh form).

    >>> import ember.nn.functional as F
    >>> F.gelu(ember.tensor([0.0]))
    tensor([0.])
    """
    return aten.gelu.default(input, approximate=approximate)


@python_route()
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``.

    >>> import ember.nn.functional as F
    >>> F.silu(ember.tensor([0.0]))
    tensor([0.])
    """
    return input.silu_() if inplace else input.silu()


@python_route()
def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent.

    >>> import ember.nn.functional as F
    >>> F.tanh(ember.tensor([0.0]))
    tensor([0.])
    """
    return input.tanh()


@python_route()
def sigmoid(input: Tensor) -> Tensor:
    """Logistic sigmoid.

    >>> import ember.nn.functional as F
    >>> F.sigmoid(ember.tensor([0.0]))
    tensor([0.5000])
    """
    return input.sigmoid()


def _softmax_dim(ndim: int) -> int:
    return 0 if ndim in (0, 1, 3) else 1


@python_route()
def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``, computed stably.

    >>> import ember.nn.functional as F
    >>> F.softmax(ember.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    return aten.softmax.int(input, _softmax_dim(input.ndim) if dim is None else dim, dtype)


@python_route()
def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``log(softmax(x, dim))``, computed stably.

    >>> import ember.nn.functional as F
    >>> F.log_softmax(ember.tensor([0.0, 0.0]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    return aten.log_softmax.int(input, _softmax_dim(input.ndim) if dim is None else dim, dtype)


# --------------------------------------------------------------------------- losses


def _legacy(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else ("mean" if size_average else "sum")


@python_route()
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of class indices ``target`` under log-probabilities ``input``.

    >>> import ember.nn.functional as F
    >>> F.nll_loss(ember.tensor([[-1.0, -2.0]]), ember.tensor([1]))
    tensor(2.)
    """
    r = _reduction(reduction, "nll_loss", size_average, reduce)
    return aten.nll_loss_nd.default(input, target, weight, r, ignore_index)


@python_route()
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy of logits ``input`` against class indices or class probabilities.

    >>> import ember.nn.functional as F
    >>> F.cross_entropy(ember.tensor([[0.0, 0.0]]), ember.tensor([1]))
    tensor(0.6931)
    """
    r = _reduction(reduction, "cross_entropy", size_average, reduce)
    return aten.cross_entropy_loss.default(input, target, weight, r, ignore_index, label_smoothing)


def _pointwise_loss_function(name: str, doc: str) -> Any:
    """``nn.functional.<name>`` for ``mse_loss`` and ``l1_loss``, whose signatures are
    PyTorch's and the same: one definition."""

    def loss(
        input: Tensor,
        target: Tensor,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        weight: Tensor | None = None,
    ) -> Tensor:
        _check_target_size(input, target)
        r = _reduction(reduction, name, size_average, reduce)
        return _pointwise_loss(name, input, target, r, weight)

    loss.__name__ = loss.__qualname__ = name
    loss.__doc__ = doc
    return python_route()(loss)


mse_loss = _pointwise_loss_function(
    "mse_loss",
    """Mean squared error.

    >>> import ember.nn.functional as F
    >>> F.mse_loss(ember.tensor([1.0, 3.0]), ember.tensor([1.0, 1.0]))
    tensor(2.)
    """,
)
l1_loss = _pointwise_loss_function(
    "l1_loss",
    """Mean absolute error.

    >>> import ember.nn.functional as F
    >>> F.l1_loss(ember.tensor([1.0, 3.0]), ember.tensor([1.0, 1.0]))
    tensor(1.)
    """,
)


def _check_target_size(input: Tensor, target: Tensor) -> None:
    """PyTorch's warning when a pointwise loss would broadcast target against input; at the
    line that called the loss (this helper, the loss, its ``python_route`` wrapper, then it)."""
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=4,
        )


def _pointwise_loss(
    op: str, input: Tensor, target: Tensor, r: int, weight: Tensor | None
) -> Tensor:
    """``mse_loss`` or ``l1_loss``: the aten op, or composed when a ``weight`` scales it."""
    if weight is None:
        return getattr(aten, op).default(input, target, r)  # type: ignore[no-any-return]
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError(
            f"{op}: Weights and input must have the same size, got {list(weight.shape)} and "
            f"{list(input.shape)}"
        )
    d = input - target
    loss = (d * d if op == "mse_loss" else d.abs()) * weight
    if r == 1:  # mean: a weighted mean, as PyTorch (sum(w * l) / sum(w))
        return loss.sum() / weight.sum()
    return reduce_loss(loss, r)


@python_route()
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)`` against ``target``, computed stably.

    >>> import ember.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(0.6931)
    """
    r = _reduction(reduction, "binary_cross_entropy_with_logits", size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    return aten.binary_cross_entropy_with_logits.default(input, target, weight, pos_weight, r)


# --------------------------------------------------------------------------- attention


@guard_function
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(q @ k.T * scale + mask) @ v`` (bool masks: True keeps a position).

    >>> import ember.nn.functional as F
    >>> q, k, v = ember.ones(1, 2, 4), ember.ones(1, 3, 4), ember.ones(1, 3, 5)
    >>> F.scaled_dot_product_attention(q, k, v).shape
    ember.Size([1, 2, 5])
    """
    return aten.scaled_dot_product_attention.default(
        query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa
    )


# --------------------------------------------------------------------------- more layers
# activations, losses and distances, and multi-head attention live in modules of their own,
# re-exported here
# isort: split
from ember.nn import _functional_activation as _activation  # noqa: E402
from ember.nn import _functional_loss as _loss  # noqa: E402
from ember.nn._functional_activation import *  # noqa: E402, F403
from ember.nn._functional_attention import multi_head_attention_forward  # noqa: E402, F401
from ember.nn._functional_loss import *  # noqa: E402, F403

__all__ += _activation.__all__ + _loss.__all__

# the functions added for issue 18 (compositions of the ops above), re-exported here
# isort: split
from ember.nn import _functional_extra as _extra  # noqa: E402
from ember.nn._functional_extra import *  # noqa: E402, F403

__all__ += _extra.__all__
