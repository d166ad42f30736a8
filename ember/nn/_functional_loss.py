"""The losses and distances of ``ember.nn.functional`` (re-exported there): fronts over the
loss ops (``ember/ops/native/loss.py``), the distance ops (``ember/ops/native/distance.py``),
and the losses PyTorch writes in Python (``gaussian_nll_loss``,
``multilabel_soft_margin_loss``, ``normalize``).

Names, signatures, defaults, legacy ``size_average``/``reduce`` flags and the
``__torch_function__`` route of each are PyTorch's (NOTE [two routes] in
``ember/overrides/__init__.py``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn._functional_activation import logsigmoid
from ember.nn.functional import _legacy, _reduction
from ember.ops.native.distance import broadcast_shape
from ember.ops.registry import ops
from ember.overrides import guard_function, python_route

aten = ops.aten

__all__ = [
    "bilinear",
    "binary_cross_entropy",
    "cosine_embedding_loss",
    "cosine_similarity",
    "ctc_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "margin_ranking_loss",
    "multilabel_soft_margin_loss",
    "normalize",
    "pairwise_distance",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
]


def _warn_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _broadcast_pair(a: Tensor, b: Tensor, op: str) -> tuple[Tensor, Tensor]:
    """``torch.broadcast_tensors(a, b)``."""
    if tuple(a.shape) == tuple(b.shape):
        return a, b
    shape = broadcast_shape(a.shape, b.shape, op)
    return a.expand(shape), b.expand(shape)


@python_route()
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross entropy between probabilities ``input`` and ``target``.

    >>> import ember.nn.functional as F
    >>> F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([1.0]))
    tensor(0.6931)
    """
    r = _reduction(reduction, "binary_cross_entropy", size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(broadcast_shape(target.shape, weight.shape, "binary_cross_entropy"))
    return aten.binary_cross_entropy.default(input, target, weight, r)  # type: ignore[no-any-return]


@python_route()
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """Squared error below ``beta`` (halved and divided by ``beta``), absolute error above.

    >>> import ember.nn.functional as F
    >>> F.smooth_l1_loss(ember.tensor([0.0, 3.0]), ember.tensor([0.5, 0.0]))
    tensor(1.3125)
    """
    _warn_size(input, target)
    r = _reduction(reduction, "smooth_l1_loss", size_average, reduce)
    a, b = _broadcast_pair(input, target, "smooth_l1_loss")
    if beta == 0.0:
        return aten.l1_loss.default(a, b, r)  # type: ignore[no-any-return]
    return aten.smooth_l1_loss.default(a, b, r, beta)  # type: ignore[no-any-return]


@python_route()
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """Squared error below ``delta`` (halved), ``delta``-scaled absolute error above.

    >>> import ember.nn.functional as F
    >>> F.huber_loss(ember.tensor([0.0, 3.0]), ember.tensor([0.5, 0.0]))
    tensor(1.3125)
    """
    _warn_size(input, target)
    a, b = _broadcast_pair(input, target, "huber_loss")
    if weight is None:
        return aten.huber_loss.default(a, b, _reduction(reduction, "huber_loss"), delta)  # type: ignore[no-any-return]
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("huber_loss: Weights and input must have the same size.")
    loss = aten.huber_loss.default(a, b, 0, delta) * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    raise ValueError(
        f"huber_loss: Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


@python_route()
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Kullback-Leibler divergence of ``target`` from log-probabilities ``input``
    (``reduction="batchmean"`` divides the sum by the batch size, the mathematical KL).

    >>> import ember.nn.functional as F
    >>> F.kl_div(ember.tensor([[-1.0, -1.0]]), ember.tensor([[0.5, 0.5]]), reduction="batchmean")
    tensor(0.3069)
    """
    if size_average is not None or reduce is not None:
        r = _reduction(_legacy(size_average, reduce, reduction), "kl_div")
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.",
                stacklevel=2,
            )
        r = 2 if reduction == "batchmean" else _reduction(reduction, "kl_div")
    out = aten.kl_div.default(input, target, r, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out  # type: ignore[no-any-return]


def _check_same_dims(input1: Tensor, input2: Tensor, target: Tensor) -> None:
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )


def _pair_loss(name: str, doc: str, check: Callable[..., None] | None = None) -> Any:
    """``nn.functional.<name>``: a loss of two inputs and a target with a ``margin`` (one
    definition for ``margin_ranking_loss`` and ``cosine_embedding_loss``, whose signatures are
    PyTorch's and the same)."""
    op = getattr(aten, name).default

    def loss(
        input1: Tensor,
        input2: Tensor,
        target: Tensor,
        margin: float = 0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> Tensor:
        r = _reduction(reduction, name, size_average, reduce)
        if check is not None:
            check(input1, input2, target)
        return op(input1, input2, target, margin, r)  # type: ignore[no-any-return]

    loss.__name__ = loss.__qualname__ = name
    loss.__doc__ = doc
    return python_route()(loss)


margin_ranking_loss = _pair_loss(
    "margin_ranking_loss",
    """``max(0, -target * (input1 - input2) + margin)``.

    >>> import ember.nn.functional as F
    >>> F.margin_ranking_loss(ember.tensor([1.0]), ember.tensor([2.0]), ember.tensor([1.0]))
    tensor(1.)
    """,
    _check_same_dims,
)
cosine_embedding_loss = _pair_loss(
    "cosine_embedding_loss",
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where -1.

    >>> import ember.nn.functional as F
    >>> F.cosine_embedding_loss(ember.ones(1, 2), ember.ones(1, 2), ember.tensor([1.0]))
    tensor(0.)
    """,
)


@python_route()
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1.

    >>> import ember.nn.functional as F
    >>> F.hinge_embedding_loss(ember.tensor([0.3]), ember.tensor([-1.0]))
    tensor(0.7000)
    """
    r = _reduction(reduction, "hinge_embedding_loss", size_average, reduce)
    return aten.hinge_embedding_loss.default(input, target, margin, r)  # type: ignore[no-any-return]


@python_route()
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with the ``p``-norm distance ``d``.

    >>> import ember.nn.functional as F
    >>> a = ember.zeros(1, 2)
    >>> F.triplet_margin_loss(a, a, a + 3.0, eps=0.0)
    tensor(0.)
    """
    r = _reduction(reduction, "triplet_margin_loss", size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return aten.triplet_margin_loss.default(anchor, positive, negative, margin, p, eps, swap, r)  # type: ignore[no-any-return]


@python_route()
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``log(1 + exp(-target * input))``.

    >>> import ember.nn.functional as F
    >>> F.soft_margin_loss(ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(0.6931)
    """
    r = _reduction(reduction, "soft_margin_loss", size_average, reduce)
    return aten.soft_margin_loss.default(input, target, r)  # type: ignore[no-any-return]


@python_route()
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of ``target`` under a Poisson of rate ``exp(input)`` (or
    ``input`` with ``log_input=False``); ``full`` adds Stirling's term.

    >>> import ember.nn.functional as F
    >>> F.poisson_nll_loss(ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(1.)
    """
    reduction = _legacy(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    r = _reduction(reduction, "poisson_nll_loss")
    return aten.poisson_nll_loss.default(input, target, log_input, full, eps, r)  # type: ignore[no-any-return]


@python_route("input", "target", "var")
def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of ``target`` under normals of mean ``input`` and variance
    ``var`` (one per element, or broadcast over one dim); ``full`` adds the constant.

    >>> import ember.nn.functional as F
    >>> F.gaussian_nll_loss(ember.tensor([0.0]), ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(0.)
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * aten.ones_like.default(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and (
            sum(v for i, v in zip(input.shape, var.shape, strict=True) if i != v) == 1
        ):
            pass  # one dim of var is 1 and broadcasts
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


@python_route()
def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Per-class binary cross entropy of logits ``input`` against 0/1 ``target``, averaged
    over the classes (last dim).

    >>> import ember.nn.functional as F
    >>> F.multilabel_soft_margin_loss(ember.zeros(1, 2), ember.tensor([[1.0, 0.0]]))
    tensor(0.6931)
    """
    reduction = _legacy(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


@python_route("log_probs", "targets", "input_lengths", "target_lengths")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor | Sequence[int],
    target_lengths: Tensor | Sequence[int],
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist temporal classification loss of ``(T, N, C)`` log-probabilities
    against ``targets`` (``(N, S)`` padded, or 1-D concatenated) with per-sample lengths.

    >>> import ember.nn.functional as F
    >>> lp = ember.zeros(4, 1, 3).log_softmax(2)
    >>> round(F.ctc_loss(lp, ember.tensor([[1, 2]]), [4], [2], reduction="sum").item(), 4)
    1.6864
    """
    r = _reduction(reduction, "ctc_loss")
    if isinstance(input_lengths, Tensor) and isinstance(target_lengths, Tensor):
        return aten.ctc_loss.Tensor(  # type: ignore[no-any-return]
            log_probs, targets, input_lengths, target_lengths, blank, r, zero_infinity
        )
    il = input_lengths.tolist() if isinstance(input_lengths, Tensor) else input_lengths
    tl = target_lengths.tolist() if isinstance(target_lengths, Tensor) else target_lengths
    return aten.ctc_loss.IntList(  # type: ignore[no-any-return]
        log_probs, targets, list(il), list(tl), blank, r, zero_infinity
    )


# --------------------------------------------------------------------------- distances


@guard_function
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (norms clamped to ``eps``).

    >>> import ember.nn.functional as F
    >>> F.cosine_similarity(ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    return aten.cosine_similarity.default(x1, x2, dim, eps)  # type: ignore[no-any-return]


@guard_function
def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim.

    >>> import ember.nn.functional as F
    >>> F.pairwise_distance(ember.tensor([[0.0, 0.0]]), ember.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    return aten.pairwise_distance.default(x1, x2, p, eps, keepdim)  # type: ignore[no-any-return]


@python_route("input", "out")
def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim`` (clamped to ``eps``).

    >>> import ember.nn.functional as F
    >>> F.normalize(ember.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    if out is None:
        denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand(list(input.shape))
        return input / denom
    denom = input.norm(p, dim, keepdim=True).clamp_min_(eps).expand(list(input.shape))
    return aten.div.out(input, denom, out=out)  # type: ignore[no-any-return]


@guard_function
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_k = x1 @ weight[k] @ x2 + bias_k``.

    >>> import ember.nn.functional as F
    >>> F.bilinear(ember.ones(1, 2), ember.ones(1, 3), ember.ones(4, 2, 3)).shape
    ember.Size([1, 4])
    """
    return aten.bilinear.default(input1, input2, weight, bias)  # type: ignore[no-any-return]
