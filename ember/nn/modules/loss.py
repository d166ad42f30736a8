"""Losses: ``MSELoss``, ``L1Loss``, ``CrossEntropyLoss``, ``NLLLoss``, ``BCEWithLogitsLoss``,
``BCELoss``, ``SmoothL1Loss``, ``HuberLoss``, ``KLDivLoss``, ``CTCLoss``, ..."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module


class _Loss(Module):
    def __init__(
        self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean"
    ) -> None:
        super().__init__()
        self.reduction = F._legacy(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class _MarginLoss(_Loss):
    """A loss with a ``margin`` before the reduction options (PyTorch's signature)."""

    def __init__(
        self,
        margin: float = 0.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class _FunctionalLoss(_Loss):
    """A loss of ``(input, target)`` over one functional: ``forward`` is
    ``_fn(input, target, **options)``, the options the attributes named in ``_options``
    (by keyword, in that order)."""

    _fn: ClassVar[Callable[..., Tensor]]
    _options: ClassVar[tuple[str, ...]] = ("reduction",)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return self._fn(input, target, **{name: getattr(self, name) for name in self._options})


class MSELoss(_FunctionalLoss):
    """Mean squared error.

    >>> ember.nn.MSELoss()(ember.tensor([1.0, 3.0]), ember.tensor([1.0, 1.0]))
    tensor(2.)
    """

    _fn = staticmethod(F.mse_loss)


class L1Loss(_FunctionalLoss):
    """Mean absolute error.

    >>> ember.nn.L1Loss()(ember.tensor([1.0, 3.0]), ember.tensor([1.0, 1.0]))
    tensor(1.)
    """

    _fn = staticmethod(F.l1_loss)


class NLLLoss(_FunctionalLoss, _WeightedLoss):
    """Negative log likelihood of class indices under log-probabilities.

    >>> ember.nn.NLLLoss()(ember.tensor([[-1.0, -2.0]]), ember.tensor([1]))
    tensor(2.)
    """

    _fn = staticmethod(F.nll_loss)
    _options = ("weight", "ignore_index", "reduction")

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index


class CrossEntropyLoss(_FunctionalLoss, _WeightedLoss):
    """Cross entropy of logits against class indices or probabilities.

    >>> ember.nn.CrossEntropyLoss()(ember.tensor([[0.0, 0.0]]), ember.tensor([1]))
    tensor(0.6931)
    """

    _fn = staticmethod(F.cross_entropy)
    _options = ("weight", "ignore_index", "reduction", "label_smoothing")

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing


class BCEWithLogitsLoss(_FunctionalLoss):
    """Binary cross entropy on logits.

    >>> ember.nn.BCEWithLogitsLoss()(ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(0.6931)
    """

    _fn = staticmethod(F.binary_cross_entropy_with_logits)
    _options = ("weight", "pos_weight", "reduction")

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)


# --------------------------------------------------------------------------- more losses


class BCELoss(_FunctionalLoss, _WeightedLoss):
    """Binary cross entropy between probabilities and targets.

    >>> ember.nn.BCELoss()(ember.tensor([0.5]), ember.tensor([1.0]))
    tensor(0.6931)
    """

    _fn = staticmethod(F.binary_cross_entropy)
    _options = ("weight", "reduction")


class SmoothL1Loss(_FunctionalLoss):
    """Squared error below ``beta``, absolute error above.

    >>> ember.nn.SmoothL1Loss()(ember.tensor([0.0, 3.0]), ember.tensor([0.5, 0.0]))
    tensor(1.3125)
    """

    _fn = staticmethod(F.smooth_l1_loss)
    _options = ("reduction", "beta")

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta


class HuberLoss(_Loss):
    """Squared error below ``delta``, ``delta``-scaled absolute error above.

    >>> ember.nn.HuberLoss()(ember.tensor([0.0, 3.0]), ember.tensor([0.5, 0.0]))
    tensor(1.3125)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor, weight: Tensor | None = None) -> Tensor:
        return F.huber_loss(
            input, target, reduction=self.reduction, delta=self.delta, weight=weight
        )


class KLDivLoss(_FunctionalLoss):
    """Kullback-Leibler divergence from log-probabilities (``reduction="batchmean"`` for
    the mathematical KL per sample).

    >>> ember.nn.KLDivLoss(reduction="batchmean")(ember.tensor([[-1.0, -1.0]]),
    ...                                           ember.tensor([[0.5, 0.5]]))
    tensor(0.3069)
    """

    _fn = staticmethod(F.kl_div)
    _options = ("reduction", "log_target")

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target


class MarginRankingLoss(_MarginLoss):
    """``max(0, -y * (x1 - x2) + margin)``.

    >>> ember.nn.MarginRankingLoss()(ember.tensor([1.0]), ember.tensor([2.0]), ember.tensor([1.0]))
    tensor(1.)
    """

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class HingeEmbeddingLoss(_FunctionalLoss, _MarginLoss):
    """``x`` where ``y`` is 1, ``max(0, margin - x)`` where it is -1.

    >>> ember.nn.HingeEmbeddingLoss()(ember.tensor([0.3]), ember.tensor([-1.0]))
    tensor(0.7000)
    """

    _fn = staticmethod(F.hinge_embedding_loss)
    _options = ("margin", "reduction")

    def __init__(
        self,
        margin: float = 1.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(margin, size_average, reduce, reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """``1 - cos(x1, x2)`` where ``y`` is 1, ``max(0, cos(x1, x2) - margin)`` where -1.

    >>> ember.nn.CosineEmbeddingLoss()(ember.ones(1, 2), ember.ones(1, 2), ember.tensor([1.0]))
    tensor(0.)
    """

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class TripletMarginLoss(_Loss):
    """``max(0, d(a, p) - d(a, n) + margin)`` with the ``p``-norm distance.

    >>> a = ember.zeros(1, 2)
    >>> ember.nn.TripletMarginLoss(eps=0.0)(a, a, a + 3.0)
    tensor(0.)
    """

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


class SoftMarginLoss(_FunctionalLoss):
    """``log(1 + exp(-y * x))``.

    >>> ember.nn.SoftMarginLoss()(ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(0.6931)
    """

    _fn = staticmethod(F.soft_margin_loss)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood (rate ``exp(input)`` with ``log_input``).

    >>> ember.nn.PoissonNLLLoss()(ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(1.)
    """

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: bool | None = None,
        eps: float = 1e-8,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with a predicted variance.

    >>> ember.nn.GaussianNLLLoss()(ember.tensor([0.0]), ember.tensor([0.0]), ember.tensor([1.0]))
    tensor(0.)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return F.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )


class MultiLabelSoftMarginLoss(_FunctionalLoss, _WeightedLoss):
    """Per-class binary cross entropy of logits, averaged over classes.

    >>> ember.nn.MultiLabelSoftMarginLoss()(ember.zeros(1, 2), ember.tensor([[1.0, 0.0]]))
    tensor(0.6931)
    """

    _fn = staticmethod(F.multilabel_soft_margin_loss)
    _options = ("weight", "reduction")


class CTCLoss(_Loss):
    """Connectionist temporal classification loss.

    >>> lp = ember.zeros(4, 1, 3).log_softmax(2)
    >>> round(ember.nn.CTCLoss(reduction="sum")(lp, ember.tensor([[1, 2]]), [4], [2]).item(), 4)
    1.6864
    """

    def __init__(
        self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False
    ) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(
        self, log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any
    ) -> Tensor:
        return F.ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )


class MultiMarginLoss(_FunctionalLoss, _WeightedLoss):
    """The multi-class hinge loss (``F.multi_margin_loss``).

    >>> ember.nn.MultiMarginLoss()(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([3]))
    tensor(0.3250)
    """

    _fn = staticmethod(F.multi_margin_loss)
    _options = ("p", "margin", "weight", "reduction")

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D "
                "instead"
            )
        self.p, self.margin = p, margin
