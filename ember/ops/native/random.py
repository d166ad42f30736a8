"""The random ops that fill or draw like a tensor: ``uniform_``, ``normal_``, ``bernoulli``,
``random_``, ``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``, their functional
forms, and ``normal`` with tensor means or standard deviations (the factories ``rand``,
``randn``, ``randint``, ``randperm`` and ``normal(mean, std, size)`` are creation ops):
schemas, and the checks the CPU kernels and Meta rules share.

Values come from ``ember.random`` generators, so they follow PyTorch's distributions but not
its streams (``ember/random.py``); ``tests/test_tensor_api.py`` checks the distributions, the
dtypes, the reproducibility under ``manual_seed`` and the in-place semantics.

# NOTE [random gradients]
PyTorch differentiates these ops to zero (``uniform_``'s gradient is ``zeros_like(grad)``):
a tensor filled at random no longer depends on what it held, and a ``normal`` draw's
gradient with respect to its mean or std is zero too (PyTorch does not reparametrize). The
derivative table gives the same zeros.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember.dtypes import dtype
from ember.ops.native._define import define
from ember.ops.native.creation import check_draw_bounds, int_range
from ember.ops.registry import define_op
from ember.ops.shapes import broadcast_shapes

if TYPE_CHECKING:
    from ember._tensor import Tensor

_G = "*, Generator? generator=None"
_SEEDED = ("nondeterministic_seeded",)
_F = ("function",)
_M = ("method",)

# fmt: off
define(f"uniform(Tensor self, float from=0., float to=1., {_G}) -> Tensor", variants=(),
       inplace=True, out=True, tags=_SEEDED)
define_op(f"normal_(Tensor(a!) self, float mean=0., float std=1., {_G}) -> Tensor(a!)", "aten",
          _SEEDED, _M)
define(f"normal.Tensor_float(Tensor mean, float std=1., {_G}) -> Tensor", variants=_F,
       out=True, out_overload="Tensor_float_out", tags=_SEEDED)
define(f"normal.float_Tensor(float mean, Tensor std, {_G}) -> Tensor", variants=_F,
       out=True, out_overload="float_Tensor_out", tags=_SEEDED)
define(f"normal.Tensor_Tensor(Tensor mean, Tensor std, {_G}) -> Tensor", variants=_F,
       out=True, out_overload="Tensor_Tensor_out", tags=_SEEDED)
define(f"bernoulli(Tensor self, {_G}) -> Tensor", out=True, tags=_SEEDED)
define("bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor", tags=_SEEDED)
define(f"bernoulli.Tensor(Tensor self, Tensor p, {_G}) -> Tensor", variants=_F, inplace=True,
       out=True, out_overload="Tensor_out", tags=_SEEDED)
define_op(f"bernoulli_.float(Tensor(a!) self, float p=0.5, {_G}) -> Tensor(a!)", "aten",
          _SEEDED, _M)
define(f"random.from(Tensor self, int from, int? to, {_G}) -> Tensor", variants=(),
       inplace=True, out=True, out_overload="from_out", tags=_SEEDED)
define(f"random.to(Tensor self, int to, {_G}) -> Tensor", variants=(), inplace=True, out=True,
       out_overload="to_out", tags=_SEEDED)
define(f"random(Tensor self, {_G}) -> Tensor", variants=(), inplace=True, out=True, tags=_SEEDED)
define(f"exponential(Tensor self, float lambd=1., {_G}) -> Tensor", variants=(), inplace=True,
       out=True, tags=_SEEDED)
define(f"geometric(Tensor self, float p, {_G}) -> Tensor", variants=(), inplace=True, out=True,
       tags=_SEEDED)
define(f"log_normal(Tensor self, float mean=1., float std=2., {_G}) -> Tensor", variants=(),
       inplace=True, out=True, tags=_SEEDED)
define(f"cauchy(Tensor self, float median=0., float sigma=1., {_G}) -> Tensor", variants=(),
       inplace=True, out=True, tags=_SEEDED)
define(f"multinomial(Tensor self, SymInt num_samples, bool replacement=False, {_G}) -> Tensor",
       out=True, tags=_SEEDED)
define("poisson(Tensor self, Generator? generator=None) -> Tensor", variants=_F, out=True,
       tags=_SEEDED)
# fmt: on


# --------------------------------------------------------------------------- shared rules


def floating_only(d: dtype, kernel: str) -> None:
    """Draws of real numbers need a floating dtype (complex too where PyTorch allows it)."""
    if d.category != dtypes.FLOATING:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{d._short}'")


def check_uniform(d: dtype, low: float, high: float) -> None:
    if d.category not in (dtypes.FLOATING, dtypes.COMPLEX):
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{d._short}'")
    if low > high:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}"
        )


def check_normal(d: dtype, std: float) -> None:
    if d.category not in (dtypes.FLOATING, dtypes.COMPLEX):
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{d._short}'")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def check_bernoulli_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")


def check_bernoulli_float_(self_dtype: dtype, p: float) -> None:
    """``bernoulli_.float``'s checks: ``p`` in ``[0, 1]``, a self that is not complex."""
    check_bernoulli_p(p)
    if self_dtype.category == dtypes.COMPLEX:
        raise NotImplementedError(
            f"\"bernoulli_scalar_cpu_\" not implemented for '{self_dtype._short}'"
        )


def check_bernoulli_tensor_p(p_dtype: dtype) -> None:
    """``bernoulli.Tensor``/``bernoulli_.Tensor``: the probabilities must be floating."""
    if p_dtype.category != dtypes.FLOATING:
        raise NotImplementedError(
            f"\"bernoulli_tensor_cpu_p_\" not implemented for '{p_dtype._short}'"
        )


def random_bounds(
    d: dtype, low: int | None, high: int | None, op: str = "random_"
) -> tuple[int, int]:
    """``[low, high)`` of ``random_``: the defaults are ``[0, 2^mantissa]`` for floating
    dtypes and ``[0, max]`` for integers; explicit bounds must lie in the dtype's range."""
    if d.category == dtypes.COMPLEX:
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{d._short}'")
    if d is dtypes.bool_:
        lo_d, hi_d = 0, 1
    elif d.category == dtypes.INTEGRAL:
        lo_d, hi_d = int_range(d)
    else:
        digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[d.name]
        lo_d, hi_d = -(2**digits), 2**digits
    if low is None:  # random_(): [0, max] for integers, [0, 2^digits] for floats
        return 0, hi_d + 1
    if high is None:  # random_(from, None): [from, max]
        high = hi_d + 1
    if low >= high:
        raise RuntimeError(
            f"{op} expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if d.category != dtypes.FLOATING:
        check_draw_bounds(low, high, lo_d, hi_d, d, op)
    return low, high


def continuous_only(d: dtype, name: str) -> None:
    """Exponential and Cauchy draws refuse other dtypes with a RuntimeError (PyTorch's)."""
    if d.category != dtypes.FLOATING:
        raise RuntimeError(
            f"{name} distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {d._short}"
        )


def check_exponential(d: dtype, lambd: float) -> None:
    continuous_only(d, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")


def check_geometric(d: dtype, p: float) -> None:
    if d is dtypes.bool_ or d.category == dtypes.COMPLEX:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for '{d._short}'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")


def check_log_normal(d: dtype, std: float) -> None:
    floating_only(d, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")


def check_cauchy(d: dtype, sigma: float) -> None:
    continuous_only(d, "Cauchy")
    if not sigma > 0 or math.isnan(sigma):
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")


def normal_shape(mean: Any, std: Any) -> tuple[tuple[int, ...], dtype]:
    """(shape, dtype) of ``normal`` with a tensor mean and/or std: the broadcast shape, in the
    mean's dtype (the std's when the mean is a number)."""
    shapes = [tuple(x.shape) for x in (mean, std) if hasattr(x, "shape")]
    d = mean.dtype if hasattr(mean, "dtype") else std.dtype
    check_normal(d, std if isinstance(std, (int, float)) else 0.0)
    return broadcast_shapes(*shapes, op="normal"), d


def multinomial_shape(self: Tensor, num_samples: int, replacement: bool) -> tuple[int, ...]:
    """The checks of ``multinomial`` that need no values; returns the result's shape (int64
    indices: one row of ``num_samples`` per distribution)."""
    if self.ndim not in (1, 2):
        raise RuntimeError(
            f"prob_dist must be 1 or 2 dim (multinomial got a {self.ndim}-D input of shape "
            f"{list(self.shape)}: pass one distribution or a batch of rows)"
        )
    if self.dtype.category != dtypes.FLOATING:
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {self.dtype._short}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > self.shape[-1]:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement (multinomial "
            f"asked for {num_samples} of {self.shape[-1]} categories: pass replacement=True)"
        )
    return (*self.shape[:-1], num_samples)


def bernoulli_dtype(self: Tensor) -> dtype:
    floating_only(self.dtype, "bernoulli_tensor_cpu_p_")
    return self.dtype


def check_poisson(self: Tensor) -> None:
    """``poisson``'s dtype check (the rates' signs are checked on their values)."""
    if self.dtype.category != dtypes.FLOATING:
        raise NotImplementedError(
            f"\"poisson_cpu\" not implemented for '{self.dtype._short}' (the rates must be a "
            "floating tensor; convert with .float())"
        )
