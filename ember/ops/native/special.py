"""The special functions behind ``ember.special`` and their top-level twins (``ember.erfinv``,
``ember.lgamma``, ``Tensor.digamma``, ...): pointwise ops with kernels where PyTorch has them,
and the ``special_*`` aliases PyTorch decomposes (``special.expit`` is ``sigmoid``,
``special.gammaln`` is ``lgamma``, ``special.ndtr`` is ``(1 + erf(x / sqrt 2)) / 2``), so
``__torch_dispatch__`` handlers see the same ops as on PyTorch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember.dispatch.keys import DispatchKey
from ember.dtypes import bool_, float16
from ember.ops.native._define import define
from ember.ops.native.pointwise import COMPLEX, I2F, pointwise
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_SPECIAL = ()  # bound by ember/special.py as ember.special.<name>
_FN = ("function",)


def _check_order(n: int) -> None:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def _check_p(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    self = args[0]
    if getattr(self, "dtype", None) is bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    p = args[1] if len(args) > 1 else kwargs["p"]
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1, got {p}")


# fmt: off
# --------------------------------------------------------------------------- ops with kernels
pointwise("erfc(Tensor self) -> Tensor", I2F, unsupported=COMPLEX)
pointwise("erfinv(Tensor self) -> Tensor", I2F, unsupported=COMPLEX)
pointwise("exp2(Tensor self) -> Tensor", I2F)
pointwise("lgamma(Tensor self) -> Tensor", I2F, unsupported=COMPLEX)
pointwise("digamma(Tensor self) -> Tensor", I2F, unsupported=COMPLEX)
pointwise("polygamma(int n, Tensor self) -> Tensor", I2F, unsupported=COMPLEX, inplace=False,
          variants=_FN, check=lambda name, cdt, args, kwargs: _check_order(args[0]))
pointwise("mvlgamma(Tensor self, int p) -> Tensor", I2F, unsupported=COMPLEX,
          check=lambda name, cdt, args, kwargs: _check_p(args, kwargs))
pointwise("logit(Tensor self, float? eps=None) -> Tensor", I2F, unsupported=COMPLEX)
pointwise("xlogy.Tensor(Tensor self, Tensor other) -> Tensor", I2F, unsupported=COMPLEX,
          out="OutTensor")
pointwise("xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor", I2F, unsupported=COMPLEX,
          inplace=False, out="OutScalar_Self", variants=_FN)
pointwise("xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor", I2F, unsupported=COMPLEX,
          inplace="Scalar_Other", out="OutScalar_Other")
pointwise("sinc(Tensor self) -> Tensor", I2F)
pointwise("i0(Tensor self) -> Tensor", I2F, unsupported=COMPLEX)
for _name in ("entr", "ndtri", "log_ndtr", "erfcx", "i0e", "i1", "i1e"):
    _no_half = _name in ("ndtri", "log_ndtr", "erfcx")  # PyTorch has no float16 kernel
    pointwise(f"special_{_name}(Tensor self) -> Tensor", I2F,
              unsupported=COMPLEX | {float16} if _no_half else COMPLEX, inplace=False,
              variants=_SPECIAL)
pointwise("special_xlog1py(Tensor self, Tensor other) -> Tensor", I2F, unsupported=COMPLEX,
          inplace=False, variants=_SPECIAL)
pointwise("special_xlog1py.self_scalar(Scalar self, Tensor other) -> Tensor", I2F,
          unsupported=COMPLEX, inplace=False, out="self_scalar_out", variants=_SPECIAL)
pointwise("special_xlog1py.other_scalar(Tensor self, Scalar other) -> Tensor", I2F,
          unsupported=COMPLEX, inplace=False, out="other_scalar_out", variants=_SPECIAL)
# the Bessel family: PyTorch's outputs never require grad (no derivatives), no 16-bit kernels
BESSEL = ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
          "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai",
          "spherical_bessel_j0")
_ARG_X = ("scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai",
          "spherical_bessel_j0")  # PyTorch names these ones' argument x
# bfloat16 exists only with the ml_dtypes extra
_SIXTEEN_BIT = {d for d in (float16, getattr(dtypes, "bfloat16", None)) if d is not None}
for _name in BESSEL:
    pointwise(f"special_{_name}(Tensor {'x' if _name in _ARG_X else 'self'}) -> Tensor", I2F,
              unsupported=COMPLEX | _SIXTEEN_BIT, inplace=False, variants=_SPECIAL)
# the orthogonal polynomials P_n(x): n a tensor or a number, truncated to an integer; outputs
# that never require grad (PyTorch has no derivatives), no 16-bit kernels
POLYNOMIALS = tuple(
    [f"{s}chebyshev_polynomial_{k}" for s in ("", "shifted_") for k in "tuvw"]
    + ["hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
       "legendre_polynomial_p"]
)
for _name in POLYNOMIALS:
    pointwise(f"special_{_name}(Tensor x, Tensor n) -> Tensor", I2F,
              unsupported=COMPLEX | _SIXTEEN_BIT, inplace=False, variants=_SPECIAL)
    pointwise(f"special_{_name}.x_scalar(Scalar x, Tensor n) -> Tensor", I2F,
              unsupported=COMPLEX | _SIXTEEN_BIT, inplace=False, out="x_scalar_out",
              variants=_SPECIAL)
    pointwise(f"special_{_name}.n_scalar(Tensor x, Scalar n) -> Tensor", I2F,
              unsupported=COMPLEX | _SIXTEEN_BIT, inplace=False, out="n_scalar_out",
              variants=_SPECIAL)
# the Hurwitz zeta function, sum over k >= 0 of (k + other)^-self (PyTorch has no 16-bit kernel)
pointwise("special_zeta(Tensor self, Tensor other) -> Tensor", I2F,
          unsupported=COMPLEX | {float16}, inplace=False, variants=_SPECIAL)
pointwise("special_zeta.self_scalar(Scalar self, Tensor other) -> Tensor", I2F,
          unsupported=COMPLEX | {float16}, inplace=False, out="self_scalar_out",
          variants=_SPECIAL)
pointwise("special_zeta.other_scalar(Tensor self, Scalar other) -> Tensor", I2F,
          unsupported=COMPLEX | {float16}, inplace=False, out="other_scalar_out",
          variants=_SPECIAL)

# --------------------------------------------------------------------------- aliases (decompose)
for _name in ("expm1", "exp2", "psi", "digamma", "gammaln", "erf", "erfc", "erfinv", "ndtr",
              "i0", "expit", "sinc", "log1p"):
    define(f"special_{_name}(Tensor self) -> Tensor", variants=_SPECIAL)
define("special_xlogy(Tensor self, Tensor other) -> Tensor", variants=_SPECIAL, out=True)
define("special_xlogy.self_scalar(Scalar self, Tensor other) -> Tensor",
       variants=_SPECIAL, out=True, out_overload="self_scalar_out")
define("special_xlogy.other_scalar(Tensor self, Scalar other) -> Tensor",
       variants=_SPECIAL, out=True, out_overload="other_scalar_out")
define("special_logit(Tensor self, float? eps=None) -> Tensor", variants=_SPECIAL)
define("special_polygamma(int n, Tensor self) -> Tensor", variants=_SPECIAL, out=True)
define("special_multigammaln(Tensor self, int p) -> Tensor", variants=_SPECIAL)
define("special_logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
       variants=_SPECIAL, out=True)
define("special_round(Tensor self, *, int decimals=0) -> Tensor", variants=_SPECIAL)
define("special_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
       variants=_SPECIAL)
define("special_log_softmax(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
       variants=_SPECIAL)
# fmt: on

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd

#: special_<name> -> the op it is (the same arguments)
_ALIASES = {
    "special_expm1": aten.expm1.default, "special_exp2": aten.exp2.default,
    "special_psi": aten.digamma.default, "special_digamma": aten.digamma.default,
    "special_gammaln": aten.lgamma.default, "special_erf": aten.erf.default,
    "special_erfc": aten.erfc.default, "special_erfinv": aten.erfinv.default,
    "special_i0": aten.i0.default, "special_expit": aten.sigmoid.default,
    "special_sinc": aten.sinc.default, "special_log1p": aten.log1p.default,
    "special_logit": aten.logit.default, "special_polygamma": aten.polygamma.default,
    "special_multigammaln": aten.mvlgamma.default, "special_logsumexp": aten.logsumexp.default,
    "special_softmax": aten.softmax.int, "special_log_softmax": aten.log_softmax.int,
}  # fmt: skip


def _alias(target: Any) -> Any:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        return target(*args, **kwargs)

    return kernel


for _name, _target in _ALIASES.items():
    impl(getattr(aten, _name).default, _CIA, _alias(_target))
impl(aten.special_xlogy.default, _CIA, _alias(aten.xlogy.Tensor))
impl(aten.special_xlogy.self_scalar, _CIA, _alias(aten.xlogy.Scalar_Self))
impl(aten.special_xlogy.other_scalar, _CIA, _alias(aten.xlogy.Scalar_Other))

_SQRT1_2 = math.sqrt(0.5)


@impl(aten.special_ndtr.default, _CIA)
def special_ndtr(self: Tensor) -> Tensor:
    """The standard normal CDF, ``(1 + erf(x / sqrt 2)) / 2``."""
    e = aten.erf.default(aten.mul.Scalar(self, _SQRT1_2))
    return aten.mul.Scalar(aten.add.Scalar(e, 1), 0.5)  # type: ignore[no-any-return]


@impl(aten.special_round.default, _CIA)
def special_round(self: Tensor, *, decimals: int = 0) -> Tensor:
    return aten.round.decimals(self, decimals=decimals)  # type: ignore[no-any-return]
