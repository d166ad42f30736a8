"""``ExponentialFamily``: the base of distributions whose density is
``exp(<t(x), theta> - F(theta) + k(x))`` (``torch.distributions.ExponentialFamily``).

# NOTE [Bregman entropy]
A family gives its natural parameters ``theta`` (``_natural_params``), its log normaliser
``F`` (``_log_normalizer``) and ``E[k(x)]`` (``_mean_carrier_measure``). Since
``E[t(x)] = grad F(theta)``, the entropy is ``F(theta) - <theta, grad F(theta)> - E[k(x)]``
and KL(p || q) between two members of one family is the Bregman divergence
``F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>``. Both take ``grad F`` by
ember's autograd, the entropy with ``create_graph`` so that it stays differentiable.
"""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The abstract base of exponential-family distributions: subclasses define
    ``_natural_params``, ``_log_normalizer`` and ``_mean_carrier_measure``; ``entropy`` (and
    the generic KL divergence) follow from them (NOTE [Bregman entropy]).

    >>> issubclass(ember.distributions.Normal, ember.distributions.ExponentialFamily)
    True
    """

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        """The natural parameters ``theta``, one tensor each."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        """The log normaliser ``F(theta)``, batched as the distribution."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        """``E[k(x)]``, the mean of the carrier measure's log."""
        raise NotImplementedError

    def _normalizer_and_grads(self, create_graph: bool) -> tuple[Tensor, list[Tensor], tuple]:
        """``F(theta)`` at detached copies of ``theta`` (returned too), and ``grad F``."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with ember.enable_grad():
            value = self._log_normalizer(*params)
            grads = ember.autograd.grad(value.sum(), params, create_graph=create_graph)
        return value, params, grads

    def entropy(self) -> Tensor:
        """``F(theta) - <theta, grad F(theta)> - E[k(x)]`` (NOTE [Bregman entropy])."""
        value, params, grads = self._normalizer_and_grads(create_graph=True)
        result = value - self._mean_carrier_measure
        for theta, g in zip(params, grads, strict=True):
            result = result - (theta * g).reshape(*self._batch_shape, -1).sum(-1)
        return result
