"""Helpers shared by the distributions: broadcasting parameters, converting between
probabilities and logits, and lazily computed parameters."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, Generic, Self, TypeVar

import numpy as np

import ember
from ember._tensor import Size, Tensor
from ember.overrides import is_tensor_like

__all__ = [
    "broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
]  # fmt: skip

T = TypeVar("T")
EMPTY = Size()  #: the default sample and batch shape


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """``values`` as tensors of one broadcast shape: numbers become tensors of the first
    tensor's dtype (the default dtype if all are numbers).

    >>> from ember.distributions.utils import broadcast_all
    >>> [t.shape for t in broadcast_all(ember.zeros(2, 1), 1.0, ember.ones(3))]
    [ember.Size([2, 3]), ember.Size([2, 3]), ember.Size([2, 3])]
    """
    if not all(is_tensor_like(v) or isinstance(v, numbers.Number) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, ember.Tensor or objects "
            "implementing __torch_function__."
        )
    first = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = ember.get_default_dtype() if first is None else first.dtype
    tensors = [v if is_tensor_like(v) else ember.tensor(v, dtype=dtype) for v in values]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def check_probs_or_logits(probs: Any, logits: Any) -> None:
    """Exactly one of ``probs`` and ``logits`` is given (ValueError, as PyTorch's)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def one_matrix(
    covariance_matrix: Tensor | None, precision_matrix: Tensor | None, scale_tril: Tensor | None
) -> tuple[str, Tensor]:
    """The name and value of the one matrix given of the three that can define a Gaussian
    scale (``MultivariateNormal``, ``Wishart``); ValueError, as PyTorch's, unless exactly one
    is."""
    given = [
        (name, m)
        for name, m in (
            ("covariance_matrix", covariance_matrix),
            ("precision_matrix", precision_matrix),
            ("scale_tril", scale_tril),
        )
        if m is not None
    ]
    if len(given) != 1:
        raise ValueError(
            "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
        )
    return given[0]


def set_probs_or_logits(d: Any, probs: Any, logits: Any) -> Size:
    """Give distribution ``d`` exactly one of ``probs`` and ``logits`` (a tensor, broadcast as
    ``broadcast_all`` does) and its ``_param``; returns the batch shape (none for a number).

    >>> from ember.distributions.utils import set_probs_or_logits
    >>> class D: ...
    >>> set_probs_or_logits(D(), ember.tensor([0.2, 0.5]), None)
    ember.Size([2])
    """
    check_probs_or_logits(probs, logits)
    given = probs if probs is not None else logits
    (value,) = broadcast_all(given)
    if probs is not None:
        d.probs = value
    else:
        d.logits = value
    d._param = value
    return Size() if isinstance(given, numbers.Number) else value.size()


def _tiny_step(dtype: Any) -> float:
    return float(np.finfo(dtype.np).eps)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities pulled into ``[eps, 1 - eps]`` of their dtype, so logs stay finite.

    >>> from ember.distributions.utils import clamp_probs
    >>> clamp_probs(ember.tensor([0.0, 1.0]))
    tensor([1.1921e-07, 1.0000e+00])
    """
    eps = _tiny_step(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits of probabilities: ``log(p)`` for categories, ``log(p) - log(1 - p)`` for a
    binary event.

    >>> from ember.distributions.utils import probs_to_logits
    >>> probs_to_logits(ember.tensor([0.5]), is_binary=True)
    tensor([0.])
    """
    clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(clamped) - ember.log1p(-clamped)
    return ember.log(clamped)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities of logits: a sigmoid for a binary event, a softmax over the last
    dimension for categories.

    >>> from ember.distributions.utils import logits_to_probs
    >>> logits_to_probs(ember.tensor([0.0]), is_binary=True)
    tensor([0.5000])
    """
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, -1)


def softplus(x: Tensor) -> Tensor:
    """``log(1 + exp(x))``, stable for large ``|x|``, with gradient ``sigmoid(x)``.

    >>> from ember.distributions.utils import softplus
    >>> softplus(ember.tensor([0.0]))
    tensor([0.6931])
    """
    # binary cross-entropy with target 0 is exactly softplus, computed stably
    return ember.nn.functional.binary_cross_entropy_with_logits(
        x, ember.zeros_like(x), reduction="none"
    )


def standard_normal(shape: tuple[int, ...], dtype: Any, device: Any) -> Tensor:
    return ember.randn(shape, dtype=dtype, device=device)


class lazy_property(Generic[T]):
    """A parameter computed from another on first use (``probs`` from ``logits`` or back),
    then stored on the instance; computed with grad enabled, so it stays differentiable."""

    def __init__(self, wrapped: Callable[[Any], T]) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of ``mat``'s lower part (up to diagonal ``diag``) as a vector, row by row.

    >>> from ember.distributions.utils import tril_matrix_to_vec
    >>> tril_matrix_to_vec(ember.arange(9.0).reshape(3, 3), diag=-1)
    tensor([3., 6., 7.])
    """
    n = mat.shape[-1]
    if mat.shape[-2] != n:
        raise ValueError(
            f"tril_matrix_to_vec: expected square matrices but got shape {tuple(mat.shape)}"
        )
    rows, cols = np.tril_indices(n, diag)  # row by row
    flat = mat.reshape(*mat.shape[:-2], n * n)
    return flat[..., ember.tensor(rows * n + cols)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular matrix (zeros above diagonal ``diag``) whose lower part is
    ``vec`` row by row: ``tril_matrix_to_vec``'s inverse.

    >>> from ember.distributions.utils import vec_to_tril_matrix
    >>> vec_to_tril_matrix(ember.tensor([1.0, 2.0, 3.0]), diag=-1)
    tensor([[0., 0., 0.],
            [1., 0., 0.],
            [2., 3., 0.]])
    """
    m = vec.shape[-1]
    # m = n (n + 1) / 2 + diag n for the side n (diag <= 0): solve the quadratic
    b = 1 + 2 * diag
    n = round((-b + math.sqrt(b * b + 8 * m)) / 2)
    rows, cols = np.tril_indices(n, diag)  # row by row
    if len(rows) != m:
        raise ValueError(
            f"vec_to_tril_matrix: a vector of length {m} is not the lower part (diagonal "
            f"{diag}) of any square matrix"
        )
    # each entry of the n x n matrix takes vec's element at its position, or a padded zero
    where = np.zeros(n * n, dtype=np.int64)
    where[rows * n + cols] = np.arange(1, m + 1)
    padded = ember.cat([ember.zeros_like(vec[..., :1]), vec], -1)
    return padded[..., ember.tensor(where)].reshape(*vec.shape[:-1], n, n)


class BinaryOdds:
    """The ``probs``/``logits`` pair of a distribution given by the odds of one binary trial
    (``Bernoulli``, ``Geometric``, ``Binomial``, ...): whichever was not given is computed
    from the other when first asked for."""

    _param: Tensor  # the one given

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)


class CountedOdds(BinaryOdds):
    """``total_count`` trials with the odds of ``BinaryOdds`` (``Binomial``,
    ``NegativeBinomial``): the count and exactly one of ``probs`` and ``logits``, broadcast
    together (the count in the odds' dtype), and ``expand``, which expands both.

    >>> d = ember.distributions.NegativeBinomial(3, probs=ember.tensor([0.2, 0.5]))
    >>> d.batch_shape, d.total_count, d.expand((2, 2)).total_count.shape
    (ember.Size([2]), tensor([3., 3.]), ember.Size([2, 2]))
    """

    total_count: Tensor

    def __init__(
        self,
        total_count: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        check_probs_or_logits(probs, logits)
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        count, value = broadcast_all(total_count, given)
        self.total_count = count.type_as(value)
        setattr(self, name, value)
        self._param = value
        super().__init__(value.size(), validate_args=validate_args)  # type: ignore[call-arg]

    def expand(self, batch_shape: Any, _instance: Any = None) -> Self:
        # a subclass with its own __init__ is checked against the distribution it derives
        # from, the class that derives from CountedOdds (_get_checked_instance)
        family = next(c for c in type(self).__mro__ if CountedOdds in c.__bases__)
        new = self._expanded_probs_or_logits(family, batch_shape, _instance)  # type: ignore[attr-defined]
        new.total_count = self.total_count.expand(new.batch_shape)
        return new  # type: ignore[no-any-return]
