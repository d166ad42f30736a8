"""``MixtureSameFamily(mixture, components)``: a mixture whose components are the last batch
dim of one distribution."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.utils import EMPTY

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """Pick a component by ``mixture_distribution`` (a ``Categorical`` over the last batch
    dim of ``component_distribution``), then draw from it.

    >>> D = ember.distributions
    >>> gmm = D.MixtureSameFamily(D.Categorical(probs=ember.ones(2)),
    ...                           D.Normal(ember.tensor([-1.0, 1.0]), 1.0))
    >>> gmm.mean
    tensor(0.)
    """

    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(
        self,
        mixture_distribution: Categorical,
        component_distribution: Distribution,
        validate_args: bool | None = None,
    ) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                "The Mixture distribution needs to be an instance of torch.distributions."
                "Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution need to be an instance of "
                "torch.distributions.Distribution"
            )
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs), strict=False):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                    f"`component_distribution.batch_shape`({cdbs})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({kc})"
            )
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MixtureSameFamily:
        """The mixture expanded to ``batch_shape`` and the components to
        ``batch_shape + (K,)``."""
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        batch_shape = Size(batch_shape)
        components = Size((*batch_shape, self._num_component))
        new._component_distribution = self._component_distribution.expand(components)
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        event_shape = new._component_distribution.event_shape
        return self._finish_expand(new, batch_shape, event_shape)  # type: ignore[no-any-return]

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    @property
    def support(self) -> Any:
        return self._component_distribution.support

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _mixture_probs(self) -> Tensor:
        probs = self._mixture_distribution.probs
        return probs.reshape(*probs.shape, *([1] * self._event_ndims))

    @property
    def mean(self) -> Tensor:
        p = self._mixture_probs()
        return (p * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        p = self._mixture_probs()
        dim = -1 - self._event_ndims
        mean_cond_var = (p * self._component_distribution.variance).sum(dim)
        var_cond_mean = (p * (self._component_distribution.mean - self._pad(self.mean)).pow(2)).sum(
            dim
        )  # noqa: E501
        return mean_cond_var + var_cond_mean

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix_prob = ember.log_softmax(self._mixture_distribution.logits, -1)
        return ember.logsumexp(log_prob_x + log_mix_prob, -1)

    def cdf(self, x: Tensor) -> Tensor:
        x = self._pad(x)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        with ember.no_grad():
            sample_shape = ember.Size(sample_shape)
            n_batch = len(self.batch_shape)
            mix = self._mixture_distribution.sample(sample_shape)  # sample + batch
            comp = self._component_distribution.sample(sample_shape)  # sample + batch + K + ev
            index = mix.reshape(*mix.shape, 1, *([1] * self._event_ndims))
            index = index.expand(*mix.shape, 1, *self.event_shape)
            del n_batch
            return comp.gather(len(mix.shape), index).squeeze(len(mix.shape))
