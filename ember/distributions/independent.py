"""``Independent(base, n)``: the last ``n`` batch dims of ``base`` read as event dims."""

from __future__ import annotations

from typing import Any

from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import EMPTY

__all__ = ["Independent", "sum_rightmost"]


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its last ``dim`` dims (unchanged for ``dim`` 0).

    >>> from ember.distributions.independent import sum_rightmost
    >>> sum_rightmost(ember.ones(2, 3), 1)
    tensor([3., 3.])
    """
    if dim == 0:
        return value
    return value.reshape(*value.shape[: value.dim() - dim], -1).sum(-1)


class Independent(Distribution):
    """Reinterprets the last ``reinterpreted_batch_ndims`` batch dims of ``base_distribution``
    as event dims: ``log_prob`` sums over them (a diagonal Normal as one multivariate event).

    >>> d = ember.distributions.Independent(ember.distributions.Normal(ember.zeros(3), 1.0), 1)
    >>> d.batch_shape, d.event_shape, d.log_prob(ember.zeros(3)).shape
    (ember.Size([]), ember.Size([3]), ember.Size([]))
    """

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(
        self,
        base_distribution: Distribution,
        reinterpreted_batch_ndims: int,
        validate_args: bool | None = None,
    ) -> None:
        n = reinterpreted_batch_ndims
        if n > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {n} vs {len(base_distribution.batch_shape)}"
            )
        shape = Size(base_distribution.batch_shape + base_distribution.event_shape)
        event_dim = n + len(base_distribution.event_shape)
        batch_shape = shape[: len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim :]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Independent:
        """The base expanded to ``batch_shape`` plus the reinterpreted dims."""
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = Size(batch_shape)
        kept = self.event_shape[: self.reinterpreted_batch_ndims]
        new.base_dist = self.base_dist.expand(Size((*batch_shape, *kept)))
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        return self._finish_expand(new, batch_shape, self.event_shape)

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @property
    def support(self) -> Any:
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"
