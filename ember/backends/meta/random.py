"""Meta rules of the random fills and draws: the CPU kernels' checks, shapes and dtypes, and
no draw (the generator's state is left alone). In-place rules bump the version and return
``self``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import dtypes
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native import random as checks
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: tuple[int, ...], d: dtypes.dtype) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), d.np))


def _like(self: Tensor) -> Tensor:
    return _new(tuple(self.shape), self.dtype)


def _bounds(args: tuple[Any, ...], kw: dict[str, Any], default: tuple[Any, Any]) -> tuple[Any, Any]:
    low = args[0] if args else kw.get("from", default[0])
    high = args[1] if len(args) > 1 else kw.get("to", default[1])
    return low, high


def _checks() -> dict[str, Callable[..., None]]:
    """Each in-place fill's argument check, taking ``(self, *args, **kwargs)``."""

    def uniform(self: Tensor, *args: Any, **kw: Any) -> None:
        checks.check_uniform(self.dtype, *_bounds(args, kw, (0.0, 1.0)))

    def random_from(self: Tensor, *args: Any, **kw: Any) -> None:
        checks.random_bounds(self.dtype, *_bounds(args, kw, (None, None)))

    return {
        "uniform_.default": uniform,
        "normal_.default": lambda self, mean=0.0, std=1.0, **kw: checks.check_normal(
            self.dtype, std
        ),
        "random_.default": lambda self, **kw: checks.random_bounds(self.dtype, None, None),
        "random_.to": lambda self, to, **kw: checks.random_bounds(self.dtype, 0, to),
        "random_.from": random_from,
        "exponential_.default": lambda self, lambd=1.0, **kw: checks.check_exponential(
            self.dtype, lambd
        ),
        "geometric_.default": lambda self, p, **kw: checks.check_geometric(self.dtype, p),
        "log_normal_.default": lambda self, mean=1.0, std=2.0, **kw: checks.check_log_normal(
            self.dtype, std
        ),
        "cauchy_.default": lambda self, median=0.0, sigma=1.0, **kw: checks.check_cauchy(
            self.dtype, sigma
        ),
        "bernoulli_.float": lambda self, p=0.5, **kw: checks.check_bernoulli_float_(self.dtype, p),
        "bernoulli_.Tensor": lambda self, p, **kw: checks.check_bernoulli_tensor_p(p.dtype),
    }


def _inplace_rule(check: Callable[..., None]) -> Callable[..., Tensor]:
    def rule(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        check(self, *args, **kwargs)
        self._bump_version()
        return self

    return rule


def _functional_rule(check: Callable[..., None]) -> Callable[..., Tensor]:
    def rule(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        check(self, *args, **kwargs)
        return _like(self)

    return rule


for _name, _check in _checks().items():
    _packet, _, _ov = _name.partition(".")
    impl(getattr(getattr(aten, _packet), _ov), Meta, _inplace_rule(_check))
    if _packet.rstrip("_") in ("uniform", "random", "exponential", "geometric", "log_normal",
                               "cauchy"):  # fmt: skip
        impl(getattr(getattr(aten, _packet.rstrip("_")), _ov), Meta, _functional_rule(_check))


def _normal(mean: Any, std: Any, **kwargs: Any) -> Tensor:
    shape, d = checks.normal_shape(mean, std)
    return _new(shape, d)


impl(aten.normal.Tensor_float, Meta, lambda mean, std=1.0, **kw: _normal(mean, std))
impl(aten.normal.float_Tensor, Meta, _normal)
impl(aten.normal.Tensor_Tensor, Meta, _normal)


@impl(aten.bernoulli.default, Meta)
def bernoulli(self: Tensor, **kwargs: Any) -> Tensor:
    return _new(tuple(self.shape), checks.bernoulli_dtype(self))


@impl(aten.bernoulli.p, Meta)
def bernoulli_p(self: Tensor, p: float, **kwargs: Any) -> Tensor:
    checks.check_bernoulli_p(p)
    return _like(self)


@impl(aten.bernoulli.Tensor, Meta)
def bernoulli_tensor(self: Tensor, p: Tensor, **kwargs: Any) -> Tensor:
    checks.check_bernoulli_tensor_p(p.dtype)
    return _like(self)


@impl(aten.multinomial.default, Meta)
def multinomial(self: Tensor, num_samples: int, replacement: bool = False, **kw: Any) -> Tensor:
    return _new(checks.multinomial_shape(self, num_samples, replacement), dtypes.int64)


@impl(aten.poisson.default, Meta)
def poisson(self: Tensor, generator: Any = None) -> Tensor:
    checks.check_poisson(self)
    return _new(tuple(self.shape), self.dtype)
