"""``distributions.transforms``: invertible maps with log-Jacobians, for
``TransformedDistribution`` (``torch.distributions.transforms``).

A transform has ``domain`` and ``codomain`` constraints (their ``event_dim`` says how many
rightmost dims one Jacobian spans), ``__call__`` (forward), ``inv`` (the inverse transform),
``log_abs_det_jacobian(x, y)`` and ``sign`` where it is monotone.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.independent import sum_rightmost
from ember.distributions.utils import softplus

__all__ = [
    "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform",
    "TanhTransform", "Transform", "identity_transform",
]  # fmt: skip


class Transform:
    """The base class: subclasses define ``_call``, ``_inverse`` and
    ``log_abs_det_jacobian`` (and ``domain``, ``codomain``, ``bijective``, ``sign``)."""

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached: tuple[Any, Any] | None = None
        self._inv: Transform | None = None

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (``inv(t)(t(x)) == x``)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self) -> int | Tensor:
        raise NotImplementedError

    def __call__(self, x: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._call(x)
        if self._cached is not None and self._cached[0] is x:
            return self._cached[1]
        y = self._call(x)
        self._cached = (x, y)
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        if self._cached is not None and self._cached[1] is y:
            return self._cached[0]
        x = self._inverse(y)
        self._cached = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement _call")

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement _inverse")

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement log_abs_det_jacobian")

    def forward_shape(self, shape: Any) -> Any:
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        return shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _InverseTransform(Transform):
    def __init__(self, transform: Transform) -> None:
        super().__init__(transform._cache_size)
        self._inv = transform

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self._inv.codomain  # type: ignore[union-attr]

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return self._inv.domain  # type: ignore[union-attr]

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective  # type: ignore[union-attr]

    @property
    def sign(self) -> Any:
        return self._inv.sign  # type: ignore[union-attr]

    @property
    def inv(self) -> Transform:
        return self._inv  # type: ignore[return-value]

    def __call__(self, x: Tensor) -> Tensor:
        return self._inv._inv_call(x)  # type: ignore[union-attr]

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)  # type: ignore[union-attr]

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)  # type: ignore[union-attr]

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)  # type: ignore[union-attr]

    def __repr__(self) -> str:
        return f"_InverseTransform({self._inv!r})"


class ComposeTransform(Transform):
    """``parts`` applied in order (``parts[0]`` first).

    >>> T = ember.distributions.transforms
    >>> T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)])(ember.tensor(0.0))
    tensor(3.)
    """

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.parts = list(parts)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> Any:
        sign: Any = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    def _call(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y: Tensor) -> Tensor:
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return ember.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:], strict=True):
            terms.append(
                sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim)
            )  # noqa: E501
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """``y = exp(x)``.

    >>> ember.distributions.transforms.ExpTransform().inv(ember.tensor(1.0))
    tensor(0.)
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class AbsTransform(Transform):
    """``y = |x|`` (not bijective: no inverse beyond ``y`` itself, no log-Jacobian).

    >>> ember.distributions.transforms.AbsTransform()(ember.tensor(-2.0))
    tensor(2.)
    """

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``, inverted by ``x = y + log(-expm1(-y))``.

    >>> ember.distributions.transforms.SoftplusTransform()(ember.tensor(0.0))
    tensor(0.6931)
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return y + ember.log(-ember.expm1(-y))

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x)


class PowerTransform(Transform):
    """``y = x ** exponent`` on positive numbers.

    >>> ember.distributions.transforms.PowerTransform(2.0)(ember.tensor(3.0))
    tensor(9.)
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.exponent = exponent if isinstance(exponent, Tensor) else ember.tensor(float(exponent))

    @property
    def sign(self) -> Any:
        return self.exponent.sign()

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``.

    >>> ember.distributions.transforms.SigmoidTransform()(ember.tensor(0.0))
    tensor(0.5000)
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def _call(self, x: Tensor) -> Tensor:
        eps = float(ember.finfo(x.dtype).eps)
        return ember.sigmoid(x).clamp(min=float(ember.finfo(x.dtype).tiny), max=1.0 - eps)

    def _inverse(self, y: Tensor) -> Tensor:
        eps = float(ember.finfo(y.dtype).eps)
        y = y.clamp(min=float(ember.finfo(y.dtype).tiny), max=1.0 - eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)``.

    >>> ember.distributions.transforms.TanhTransform()(ember.tensor(0.0))
    tensor(0.)
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return ember.atanh(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AffineTransform(Transform):
    """``y = loc + scale * x`` (over ``event_dim`` rightmost dims at once).

    >>> ember.distributions.transforms.AffineTransform(1.0, 2.0)(ember.tensor(3.0))
    tensor(7.)
    """

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self._event_dim

    @property
    def domain(self) -> Any:  # type: ignore[override]
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return self.domain

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        shape = x.shape
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = ember.full_like(x, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        if self._event_dim:
            result_size = tuple(result.shape[: result.dim() - self._event_dim]) + (-1,)
            result = result.reshape(result_size).sum(-1)
            shape = shape[: len(shape) - self._event_dim]
        return result.expand(shape)


class SoftmaxTransform(Transform):
    """``y = softmax(x)`` over the last dim (not bijective: no log-Jacobian).

    >>> ember.distributions.transforms.SoftmaxTransform()(ember.zeros(2))
    tensor([0.5000, 0.5000])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x: Tensor) -> Tensor:
        logprobs = x
        probs = (logprobs - logprobs.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()


class StickBreakingTransform(Transform):
    """Unconstrained ``K - 1`` vectors to the ``K``-simplex by stick breaking: each
    coordinate takes ``sigmoid(x_i - log(K - 1 - i))`` of the stick that is left.

    >>> ember.distributions.transforms.StickBreakingTransform()(ember.zeros(2))
    tensor([0.3333, 0.3333, 0.3333])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        offset = x.shape[-1] + 1 - ember.ones(x.shape[-1], dtype=x.dtype).cumsum(-1)
        z = ember.sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        pad = ember.nn.functional.pad
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_crop = y[..., :-1]
        offset = y.shape[-1] - ember.ones(y_crop.shape[-1], dtype=y.dtype).cumsum(-1)
        sf = 1 - y_crop.cumsum(-1)
        tiny = float(ember.finfo(y.dtype).tiny)
        sf = ember.clamp(sf, min=tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        offset = x.shape[-1] + 1 - ember.ones(x.shape[-1], dtype=x.dtype).cumsum(-1)
        x = x - offset.log()
        return (-x + ember.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return (*shape[:-1], shape[-1] + 1)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return (*shape[:-1], shape[-1] - 1)
