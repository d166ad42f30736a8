"""``ember.distributions``: probability distributions with sampling, reparametrised
sampling, log densities, entropies and KL divergences (``torch.distributions``).

>>> d = ember.distributions.Normal(ember.zeros(2), ember.ones(2))
>>> d.log_prob(ember.zeros(2))
tensor([-0.9189, -0.9189])
"""

from ember.distributions import constraints
from ember.distributions.bernoulli import Bernoulli
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.kl import kl_divergence, register_kl
from ember.distributions.multivariate_normal import MultivariateNormal
from ember.distributions.normal import Normal
from ember.distributions.uniform import Uniform

__all__ = [
    "Bernoulli", "Categorical", "Distribution", "MultivariateNormal", "Normal", "Uniform",
    "constraints",
    "kl_divergence", "register_kl",
]  # fmt: skip
