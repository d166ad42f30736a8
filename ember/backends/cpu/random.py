"""CPU kernels of the random fills and draws: PyTorch's CPU values (NOTE [torch random
streams], NOTE [torch draws]) from an ``ember.random.Generator`` (the default one when
``generator`` is None). Checks are shared with the Meta rules (``ember/ops/native/random.py``).
In-place forms write into ``self``, bump its version and return it; the functional forms are
derived from them or written here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember import dtypes
from ember.backends.cpu import torch_draws, torch_stream
from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.backends.cpu.creation import normal_array, uniform_array
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.random import (
    bernoulli_dtype,
    check_bernoulli_float_,
    check_bernoulli_p,
    check_bernoulli_tensor_p,
    check_cauchy,
    check_exponential,
    check_geometric,
    check_log_normal,
    check_normal,
    check_poisson,
    check_uniform,
    multinomial_shape,
    normal_shape,
    random_bounds,
)
from ember.ops.registry import ops
from ember.random import _source

aten = ops.aten
CPU = DispatchKey.CPU


def _fill(self: Tensor, values: Any, drawn: bool = False) -> Tensor:
    """Write ``values`` into ``self`` (converted to its dtype), bump the version, return it.
    ``drawn``: the values are one draw per element in draw order, which PyTorch's serial
    kernels give a non-contiguous tensor in its memory order (innermost the smallest
    stride), as its ``TensorIterator`` walks it."""
    a = self._edata
    if isinstance(values, np.ndarray) and values.size == a.size and a.ndim > 1:
        if drawn and not a.flags.c_contiguous:
            order = sorted(range(a.ndim), key=lambda i: -abs(a.strides[i]))
            walked = values.reshape([a.shape[i] for i in order])
            values = walked.transpose(np.argsort(order))
        elif values.ndim == 1:
            values = values.reshape(a.shape)
    with quiet_block():
        self._edata[...] = values
    self._bump_version()
    return self


def _shape(self: Tensor) -> tuple[int, ...]:
    return tuple(self._edata.shape)


def _n(self: Tensor) -> int:
    return int(self._edata.size)


def _bounds(args: tuple[Any, ...], kw: dict[str, Any], default: tuple[Any, Any]) -> tuple[Any, Any]:
    """Two leading float parameters (``from``, ``to``: ``from`` is a Python keyword, so they
    come positionally or through ``**kwargs``)."""
    low = args[0] if args else kw.get("from", default[0])
    high = args[1] if len(args) > 1 else kw.get("to", default[1])
    return low, high


@impl(aten.uniform_.default, CPU)
def uniform_(self: Tensor, *args: Any, generator: Any = None, **kw: Any) -> Tensor:
    low, high = _bounds(args, kw, (0.0, 1.0))
    check_uniform(self.dtype, low, high)
    return _fill(self, uniform_array(_shape(self), self.dtype, generator, low, high), True)


@impl(aten.normal_.default, CPU)
def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    check_normal(self.dtype, std)
    a = self._edata
    if a.flags.c_contiguous or self.dtype.category == dtypes.COMPLEX:
        return _fill(self, normal_array(_shape(self), self.dtype, generator, mean, std))
    # PyTorch's Box-Muller blocks need a contiguous tensor; others take the scalar path
    draws = torch_stream.normal_scalar(_source(generator), a.size, mean, std)
    return _fill(self, draws.astype(a.dtype), True)


def _normal(mean: Any, std: Any, generator: Any) -> Tensor:
    """PyTorch's ``normal`` with a tensor mean or std: standard normals (``N(0, std)`` for a
    float std), then ``* std`` and ``+ mean`` as separate ops in the result's dtype."""
    shape, d = normal_shape(mean, std)
    m = mean._edata if isinstance(mean, Tensor) else mean
    s = std._edata if isinstance(std, Tensor) else std
    if isinstance(std, Tensor) and s.size and (s < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    with quiet_block():
        if isinstance(std, Tensor):
            z = normal_array(shape, d, generator)
            return wrap(np.asarray(np.asarray(z * s.astype(d.np), d.np) + np.asarray(m, d.np)))
        z = normal_array(shape, d, generator, 0.0, std)
        return wrap(np.asarray(z + m.astype(d.np), d.np))


@impl(aten.normal.Tensor_float, CPU)
def normal_tensor_float(mean: Tensor, std: float = 1.0, *, generator: Any = None) -> Tensor:
    return _normal(mean, std, generator)


@impl(aten.normal.float_Tensor, CPU)
def normal_float_tensor(mean: float, std: Tensor, *, generator: Any = None) -> Tensor:
    return _normal(mean, std, generator)


@impl(aten.normal.Tensor_Tensor, CPU)
def normal_tensor_tensor(mean: Tensor, std: Tensor, *, generator: Any = None) -> Tensor:
    return _normal(mean, std, generator)


def _bernoulli_draw(p: Any, shape: tuple[int, ...], generator: Any) -> np.ndarray:
    """1 where a uniform draw falls below ``p`` (a float, or an array of ``shape``), else 0,
    as PyTorch's CPU kernels draw them (NOTE [torch draws])."""
    gen = _source(generator)
    if isinstance(p, np.ndarray):
        return torch_draws.bernoulli_tensor(gen, np.ascontiguousarray(p).reshape(p.shape))
    n = int(np.prod(shape, dtype=np.int64))
    return torch_draws.bernoulli_scalar(gen, n, float(p)).reshape(shape)


def _check_probabilities(p: np.ndarray) -> None:
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError(
            "bernoulli: Expected p_in >= 0 && p_in <= 1 to be true, but got false (every "
            "probability must lie in [0, 1])"
        )


@impl(aten.bernoulli.default, CPU)
def bernoulli(self: Tensor, *, generator: Any = None) -> Tensor:
    """1 with the probability each element of ``self`` gives, in ``self``'s dtype."""
    d = bernoulli_dtype(self)
    _check_probabilities(self._edata)
    return wrap(_bernoulli_draw(self._edata.astype(d.np), _shape(self), generator).astype(d.np))


@impl(aten.bernoulli.p, CPU)
def bernoulli_p(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    check_bernoulli_p(p)
    return wrap(_bernoulli_draw(p, _shape(self), generator).astype(self._edata.dtype))


def _tensor_p(self: Tensor, p: Tensor) -> np.ndarray:
    check_bernoulli_tensor_p(p.dtype)
    probs = p._edata
    if probs.shape != self._edata.shape:
        try:
            probs = np.broadcast_to(probs, self._edata.shape)
        except ValueError:
            raise RuntimeError(
                f"bernoulli_: p of shape {list(p.shape)} must broadcast to self's shape "
                f"{list(self.shape)}"
            ) from None
    _check_probabilities(probs)
    return probs


@impl(aten.bernoulli.Tensor, CPU)
def bernoulli_tensor(self: Tensor, p: Tensor, *, generator: Any = None) -> Tensor:
    probs = _tensor_p(self, p)
    return wrap(_bernoulli_draw(probs, _shape(self), generator).astype(self._edata.dtype))


@impl(aten.bernoulli_.Tensor, CPU)
def bernoulli_tensor_(self: Tensor, p: Tensor, *, generator: Any = None) -> Tensor:
    return _fill(self, _bernoulli_draw(_tensor_p(self, p), _shape(self), generator))


@impl(aten.bernoulli_.float, CPU)
def bernoulli_float_(self: Tensor, p: float = 0.5, *, generator: Any = None) -> Tensor:
    check_bernoulli_float_(self.dtype, p)
    return _fill(self, _bernoulli_draw(p, _shape(self), generator), True)


def _random(self: Tensor, low: int | None, high: int | None, generator: Any) -> Tensor:
    lo, hi = random_bounds(self.dtype, low, high)
    shape = _shape(self)
    wide = 2**32 if low is None else 2**28  # random_() and random_(from, to) differ here
    values = torch_stream.random_int(_source(generator), math.prod(shape), lo, hi, wide)
    return _fill(self, values, True)


@impl(aten.random_.default, CPU)
def random_(self: Tensor, *, generator: Any = None) -> Tensor:
    return _random(self, None, None, generator)


@impl(aten.random_.to, CPU)
def random_to(self: Tensor, to: int, *, generator: Any = None) -> Tensor:
    return _random(self, 0, to, generator)


def random_from(self: Tensor, *args: Any, generator: Any = None, **kw: Any) -> Tensor:
    low, high = _bounds(args, kw, (None, None))
    return _random(self, low, high, generator)


impl(getattr(aten.random_, "from"), CPU, random_from)


@impl(aten.exponential_.default, CPU)
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    check_exponential(self.dtype, lambd)
    return _fill(self, torch_draws.exponential(_source(generator), _n(self), lambd), True)


@impl(aten.geometric_.default, CPU)
def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    check_geometric(self.dtype, p)
    return _fill(self, torch_draws.geometric(_source(generator), _n(self), p), True)


@impl(aten.log_normal_.default, CPU)
def log_normal_(
    self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None
) -> Tensor:
    check_log_normal(self.dtype, std)
    return _fill(self, torch_draws.log_normal(_source(generator), _n(self), mean, std), True)


@impl(aten.cauchy_.default, CPU)
def cauchy_(
    self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None
) -> Tensor:
    check_cauchy(self.dtype, sigma)
    draws = torch_draws.cauchy(_source(generator), _n(self), median, sigma)
    return _fill(self, draws, True)


def _functional(inplace: Any) -> Any:
    """The out-of-place form of an in-place fill: a fresh tensor like ``self``, filled."""

    def kernel(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace(wrap(np.empty_like(self._edata, order="C")), *args, **kwargs)

    kernel.__name__ = inplace.__name__.rstrip("_")
    return kernel


for _name, _overloads in (
    ("uniform", ("default",)),
    ("random", ("default", "to", "from")),
    ("exponential", ("default",)),
    ("geometric", ("default",)),
    ("log_normal", ("default",)),
    ("cauchy", ("default",)),
):
    for _ov in _overloads:
        _ip = getattr(getattr(aten, _name + "_"), _ov)
        impl(getattr(getattr(aten, _name), _ov), CPU, _functional(_ip.registered(CPU)[0]))


@impl(aten.multinomial.default, CPU)
def multinomial(
    self: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Tensor:
    """``num_samples`` category indices per row, drawn with the row's (unnormalised) weights
    as PyTorch's CPU kernel draws them (NOTE [torch draws])."""
    shape = multinomial_shape(self, num_samples, replacement)
    p = self._edata.reshape(-1, self._edata.shape[-1])
    if p.size and not (np.isfinite(p).all() and (p >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = p.astype(np.float64).sum(axis=1, keepdims=True)
    if p.shape[0] and (total <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    draws = torch_draws.multinomial(_source(generator), p, num_samples, replacement)
    return wrap(draws.reshape(shape))


@impl(aten.poisson.default, CPU)
def poisson(self: Tensor, generator: Any = None) -> Tensor:
    """A Poisson draw for each rate, in ``self``'s dtype: PyTorch's values for the same seed
    (NOTE [poisson stream] in ``torch_stream.py``)."""
    check_poisson(self)
    rates = np.asarray(self._edata, np.float64).ravel()
    if not (rates >= 0).all():  # (NaN too)
        raise RuntimeError(
            "invalid Poisson rate, expected rate to be non-negative (got a negative or NaN rate)"
        )
    draws = torch_stream.poisson(_source(generator), rates)
    with quiet_block():
        return wrap(draws.astype(self._edata.dtype).reshape(self._edata.shape))
