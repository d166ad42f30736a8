"""``ember.nn.utils``: gradient clipping, parameters as one vector, variable-length sequences
(``rnn``), weight normalization and parametrizations, as PyTorch's ``torch.nn.utils``."""

from __future__ import annotations

from ember.nn.utils import rnn
from ember.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from ember.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from ember.nn.utils.weight_norm import remove_weight_norm, weight_norm

# isort: split
from ember.nn.utils import parametrizations, parametrize, prune, stateless

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "prune",
    "stateless",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "spectral_norm",
    "vector_to_parameters",
    "weight_norm",
]
