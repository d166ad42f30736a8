"""``ember.distributions``: probability distributions with sampling, reparametrised
sampling, log densities, entropies and KL divergences (``torch.distributions``).

>>> d = ember.distributions.Normal(ember.zeros(2), ember.ones(2))
>>> d.log_prob(ember.zeros(2))
tensor([-0.9189, -0.9189])
"""

from ember.distributions import constraints, transforms
from ember.distributions.bernoulli import Bernoulli
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.kl import kl_divergence, register_kl
from ember.distributions.multivariate_normal import MultivariateNormal
from ember.distributions.normal import Normal
from ember.distributions.uniform import Uniform

# isort: split
# ---- the families added for issue 18 ----
from ember.distributions.dirichlet import Beta, Dirichlet
from ember.distributions.gamma import Exponential, Gamma
from ember.distributions.independent import Independent
from ember.distributions.laplace import Laplace
from ember.distributions.mixture_same_family import MixtureSameFamily
from ember.distributions.one_hot_categorical import (
    Multinomial,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from ember.distributions.poisson import Binomial, Poisson
from ember.distributions.studentT import StudentT
from ember.distributions.transformed_distribution import LogNormal, TransformedDistribution

# isort: split
# ---- the second group for issue 18 ----
from ember.distributions.cauchy import Cauchy
from ember.distributions.chi2 import Chi2
from ember.distributions.geometric import Geometric
from ember.distributions.gumbel import Gumbel
from ember.distributions.half_cauchy import HalfCauchy
from ember.distributions.half_normal import HalfNormal
from ember.distributions.inverse_gamma import InverseGamma
from ember.distributions.kumaraswamy import Kumaraswamy
from ember.distributions.logistic_normal import LogisticNormal
from ember.distributions.negative_binomial import NegativeBinomial
from ember.distributions.pareto import Pareto
from ember.distributions.relaxed_bernoulli import RelaxedBernoulli
from ember.distributions.relaxed_categorical import RelaxedOneHotCategorical
from ember.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from ember.distributions.weibull import Weibull

# isort: split
# ---- the third group for issue 18 ----
from ember.distributions.constraint_registry import biject_to, transform_to
from ember.distributions.continuous_bernoulli import ContinuousBernoulli
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.fishersnedecor import FisherSnedecor
from ember.distributions.generalized_pareto import GeneralizedPareto
from ember.distributions.lkj_cholesky import LKJCholesky
from ember.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from ember.distributions.transforms import (
    CatTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    StackTransform,
)
from ember.distributions.von_mises import VonMises
from ember.distributions.wishart import Wishart

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "Exponential",
    "Gamma", "Independent", "Laplace", "LogNormal", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "StudentT",
    "TransformedDistribution", "Uniform", "constraints", "transforms",
    "kl_divergence", "register_kl",
    "Cauchy", "Chi2", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Pareto", "Weibull",
    "InverseGamma", "Kumaraswamy", "LogisticNormal", "NegativeBinomial", "RelaxedBernoulli",
    "OneHotCategoricalStraightThrough", "RelaxedOneHotCategorical",
    "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform",
    "TanhTransform", "Transform", "identity_transform",
    "ContinuousBernoulli", "ExponentialFamily", "FisherSnedecor", "GeneralizedPareto",
    "LKJCholesky", "LowRankMultivariateNormal", "VonMises", "Wishart", "biject_to",
    "transform_to", "CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "ReshapeTransform", "StackTransform",
]  # fmt: skip
