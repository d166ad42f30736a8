"""``ember.special``: PyTorch's ``torch.special``, each function the public binding of a
registry op (``special.erfcx`` is ``aten.special_erfcx``, a kernel; ``special.expit`` is
``aten.special_expit``, which decomposes into ``sigmoid``: ``ember/ops/native/special.py``).

>>> ember.special.erfinv(ember.tensor([0.0, 0.5]))
tensor([0.0000, 0.4769])
>>> ember.special.xlogy(ember.tensor([0.0, 2.0]), ember.tensor([0.0, 3.0]))
tensor([0.0000, 2.1972])
"""

from __future__ import annotations

from typing import Any

from ember._bind import make_public
from ember._tensor import Tensor
from ember.ops.registry import ops


def _public(op: str) -> Any:
    """The public function of ``aten.<op>`` (overloads resolved as ``ember.<name>``'s)."""
    return make_public(getattr(ops.aten, op), method=False)


# each is PyTorch's ``torch.special.<name>``, bound to the op of ``python_module: special``
digamma = _public("special_digamma")
entr = _public("special_entr")
erf = _public("special_erf")
erfc = _public("special_erfc")
erfcx = _public("special_erfcx")
erfinv = _public("special_erfinv")
exp2 = _public("special_exp2")
expit = _public("special_expit")
expm1 = _public("special_expm1")
gammaln = _public("special_gammaln")
i0 = _public("special_i0")
i0e = _public("special_i0e")
i1 = _public("special_i1")
i1e = _public("special_i1e")
bessel_j0 = _public("special_bessel_j0")
bessel_j1 = _public("special_bessel_j1")
bessel_y0 = _public("special_bessel_y0")
bessel_y1 = _public("special_bessel_y1")
modified_bessel_i0 = _public("special_modified_bessel_i0")
modified_bessel_i1 = _public("special_modified_bessel_i1")
modified_bessel_k0 = _public("special_modified_bessel_k0")
modified_bessel_k1 = _public("special_modified_bessel_k1")
scaled_modified_bessel_k0 = _public("special_scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _public("special_scaled_modified_bessel_k1")
airy_ai = _public("special_airy_ai")
spherical_bessel_j0 = _public("special_spherical_bessel_j0")
chebyshev_polynomial_t = _public("special_chebyshev_polynomial_t")
chebyshev_polynomial_u = _public("special_chebyshev_polynomial_u")
chebyshev_polynomial_v = _public("special_chebyshev_polynomial_v")
chebyshev_polynomial_w = _public("special_chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _public("special_shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _public("special_shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _public("special_shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _public("special_shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _public("special_hermite_polynomial_h")
hermite_polynomial_he = _public("special_hermite_polynomial_he")
laguerre_polynomial_l = _public("special_laguerre_polynomial_l")
legendre_polynomial_p = _public("special_legendre_polynomial_p")
log1p = _public("special_log1p")
log_ndtr = _public("special_log_ndtr")
log_softmax = _public("special_log_softmax")
logit = _public("special_logit")
logsumexp = _public("special_logsumexp")
multigammaln = _public("special_multigammaln")
ndtr = _public("special_ndtr")
ndtri = _public("special_ndtri")
polygamma = _public("special_polygamma")
psi = _public("special_psi")
round = _public("special_round")  # noqa: A001 - torch.special.round
sinc = _public("special_sinc")
softmax = _public("special_softmax")
xlog1py = _public("special_xlog1py")
zeta = _public("special_zeta")
xlogy = _public("special_xlogy")

_polygamma = make_public(ops.aten.polygamma, method=False)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``Tensor.polygamma(n)``: ``polygamma(n, self)``, as PyTorch's method (whose ``self``
    is the schema's second argument, so no generated binding fits).

    >>> ember.tensor([1.0]).polygamma(1)
    tensor([1.6449])
    """
    return _polygamma(n, self)  # type: ignore[no-any-return]


_polygamma_method.__name__ = _polygamma_method.__qualname__ = "polygamma"
Tensor.polygamma = _polygamma_method  # type: ignore[attr-defined]

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln",
    "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py",
    "xlogy", "zeta", "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
    "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]  # fmt: skip
