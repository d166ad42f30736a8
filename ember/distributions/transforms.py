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
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.independent import sum_rightmost
from ember.distributions.utils import softplus, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
    "Transform", "identity_transform",
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

    # Equality, as PyTorch's transforms compare: ``None`` (the default) means a transform
    # equals only itself; a tuple of attribute names means it equals any transform of the same
    # type whose attributes are equal (tensors elementwise), ``()`` any of the same type.
    _equal_by: tuple[str, ...] | None = None

    def __eq__(self, other: object) -> bool:
        if self._equal_by is None or type(other) is not type(self):
            return self is other
        return all(_values_equal(getattr(self, a), getattr(other, a)) for a in self._equal_by)

    def __hash__(self) -> int:
        # equal transforms share a type, so hashing the type keeps hash and == consistent
        return object.__hash__(self) if self._equal_by is None else hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _values_equal(a: Any, b: Any) -> bool:
    """Whether two transform parameters are equal: tensors elementwise (broadcast), other
    values (numbers, lists of transforms, transforms) by ``==``."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return bool((a == b).all().item())
    return bool(a == b)


class _InverseTransform(Transform):
    _equal_by = ("_inv",)

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

    _equal_by = ("parts",)

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
    _equal_by = ()

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
    _equal_by = ()

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
    _equal_by = ()

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
    _equal_by = ("exponent",)

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
    _equal_by = ()

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
    _equal_by = ()

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
    _equal_by = ("loc", "scale")

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
    _equal_by = ()

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
    _equal_by = ()

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


# ---- the transforms added with the constraint registries (issue 18) ----


class IndependentTransform(Transform):
    """``base_transform`` with its last ``reinterpreted_batch_ndims`` batch dims read as event
    dims: the same map, its log-Jacobian summed over them.

    >>> T = ember.distributions.transforms
    >>> t = T.IndependentTransform(T.ExpTransform(), 1)
    >>> t.log_abs_det_jacobian(ember.ones(2, 3), t(ember.ones(2, 3)))
    tensor([3., 3.])
    """

    def __init__(
        self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0
    ) -> None:
        super().__init__(cache_size)
        self.base_transform = base_transform
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        base = self.base_transform.codomain
        return constraints.independent(base, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError(
                f"IndependentTransform: too few dimensions on input: {x.dim()} < "
                f"{self.domain.event_dim}"
            )
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError(
                f"IndependentTransform: too few dimensions on input: {y.dim()} < "
                f"{self.codomain.event_dim}"
            )
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return sum_rightmost(result, self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dims to ``out_shape`` (a unit Jacobian).

    >>> T = ember.distributions.transforms
    >>> T.ReshapeTransform((4,), (2, 2))(ember.arange(8.0).reshape(2, 4)).shape
    ember.Size([2, 2, 2])
    """

    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError(
                f"ReshapeTransform: in_shape {tuple(self.in_shape)} and out_shape "
                f"{tuple(self.out_shape)} have different numbers of elements"
            )
        super().__init__(cache_size)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x: Tensor) -> Tensor:
        batch = x.shape[: x.dim() - len(self.in_shape)]
        return x.reshape(*batch, *self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        batch = y.shape[: y.dim() - len(self.out_shape)]
        return y.reshape(*batch, *self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        batch = x.shape[: x.dim() - len(self.in_shape)]
        return x.new_zeros(tuple(batch))

    @staticmethod
    def _swap(shape: Any, old: Size, new: Size) -> Any:
        if len(shape) < len(old):
            raise ValueError(
                f"ReshapeTransform: too few dimensions on input: shape {tuple(shape)}, "
                f"expected at least {len(old)}"
            )
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(
                f"ReshapeTransform: shape mismatch: expected {tuple(shape[cut:])} but got "
                f"{tuple(old)}"
            )
        return Size((*shape[:cut], *new))

    def forward_shape(self, shape: Any) -> Any:
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._swap(shape, self.out_shape, self.in_shape)


class _PiecewiseTransform(Transform):
    """One transform per piece of the input along ``dim``: ``_pieces`` splits, ``_join``
    puts the transformed pieces back (``CatTransform``, ``StackTransform``)."""

    def __init__(self, tseq: Any, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError(f"{type(self).__name__}: every element of tseq must be a Transform")
        super().__init__(cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    def _pieces(self, x: Tensor) -> list[Tensor]:
        raise NotImplementedError

    def _join(self, parts: list[Tensor], dim: int) -> Tensor:
        raise NotImplementedError

    def _check_dim(self, x: Tensor) -> None:
        if not -x.dim() <= self.dim < x.dim():
            raise ValueError(
                f"{type(self).__name__}: dim {self.dim} is out of range for an input of "
                f"shape {tuple(x.shape)}"
            )

    def _call(self, x: Tensor) -> Tensor:
        self._check_dim(x)
        pieces = self._pieces(x)
        return self._join([t(p) for t, p in zip(self.transforms, pieces, strict=True)], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        self._check_dim(y)
        pieces = self._pieces(y)
        parts = [t.inv(p) for t, p in zip(self.transforms, pieces, strict=True)]
        return self._join(parts, self.dim)

    def _piece_jacobians(self, x: Tensor, y: Tensor) -> list[Tensor]:
        pairs = zip(self.transforms, self._pieces(x), self._pieces(y), strict=True)
        return [t.log_abs_det_jacobian(a, b) for t, a, b in pairs]


class CatTransform(_PiecewiseTransform):
    """``tseq[i]`` on the ``lengths[i]`` slice along ``dim``, as ``cat`` joins them.

    >>> T = ember.distributions.transforms
    >>> t = T.CatTransform([T.ExpTransform(), T.identity_transform], dim=0, lengths=[1, 1])
    >>> t(ember.tensor([0.0, 5.0]))
    tensor([1., 5.])
    """

    def __init__(self, tseq: Any, dim: int = 0, lengths: Any = None, cache_size: int = 0) -> None:
        super().__init__(tseq, dim, cache_size)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(
                f"CatTransform: got {len(self.transforms)} transforms but "
                f"{len(self.lengths)} lengths"
            )

    @property
    def length(self) -> int:
        return sum(self.lengths)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(t.event_dim for t in self.transforms)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def _pieces(self, x: Tensor) -> list[Tensor]:
        if x.shape[self.dim] != self.length:
            raise ValueError(
                f"CatTransform: the input has size {x.shape[self.dim]} along dim {self.dim} "
                f"but the lengths {self.lengths} add up to {self.length}"
            )
        return list(x.split(self.lengths, self.dim))

    def _join(self, parts: list[Tensor], dim: int) -> Tensor:
        return ember.cat(parts, dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        self._check_dim(x)
        event_dim = self.event_dim
        terms = [
            sum_rightmost(j, event_dim - t.event_dim)
            for t, j in zip(self.transforms, self._piece_jacobians(x, y), strict=True)
        ]
        # dim inside the event: the pieces' sums add up; in the batch, they are joined
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + event_dim
        if dim < 0:
            return ember.cat(terms, dim)
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total


class StackTransform(_PiecewiseTransform):
    """``tseq[i]`` on index ``i`` along ``dim``, as ``stack`` joins them.

    >>> T = ember.distributions.transforms
    >>> t = T.StackTransform([T.ExpTransform(), T.identity_transform], dim=0)
    >>> t(ember.tensor([0.0, 5.0]))
    tensor([1., 5.])
    """

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def _pieces(self, x: Tensor) -> list[Tensor]:
        if x.shape[self.dim] != len(self.transforms):
            raise ValueError(
                f"StackTransform: the input has size {x.shape[self.dim]} along dim "
                f"{self.dim} but there are {len(self.transforms)} transforms"
            )
        return list(x.unbind(self.dim))

    def _join(self, parts: list[Tensor], dim: int) -> Tensor:
        return ember.stack(parts, dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        self._check_dim(x)
        return ember.stack(self._piece_jacobians(x, y), self.dim)


class LowerCholeskyTransform(Transform):
    """Unconstrained matrices to lower-triangular ones with a positive diagonal: the strict
    lower part kept, the diagonal exponentiated (not bijective: the upper part is dropped).

    >>> ember.distributions.transforms.LowerCholeskyTransform()(ember.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky
    _equal_by = ()

    def _call(self, x: Tensor) -> Tensor:
        return x.tril(-1) + x.diagonal(0, -2, -1).exp().diag_embed()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.tril(-1) + y.diagonal(0, -2, -1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Unconstrained matrices to positive-definite ones: ``L @ L.mT`` for ``L`` the
    ``LowerCholeskyTransform`` of the input.

    >>> ember.distributions.transforms.PositiveDefiniteTransform()(ember.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite
    _equal_by = ()

    def _call(self, x: Tensor) -> Tensor:
        L = LowerCholeskyTransform()(x)
        return L @ L.mT

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(ember.linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length ``D (D - 1) / 2`` to Cholesky factors of ``D x D``
    correlation matrices: ``tanh`` gives partial correlations in (-1, 1), which fill the
    strict lower triangle row by row; each row is then scaled by stick breaking so that it has
    unit norm (the diagonal takes what is left).

    >>> ember.distributions.transforms.CorrCholeskyTransform()(ember.zeros(1))
    tensor([[1., 0.],
            [0., 1.]])
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True
    _equal_by = ()

    def _call(self, x: Tensor) -> Tensor:
        eps = float(ember.finfo(x.dtype).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # entry (i, j) is r_ij times the stick left after the row's first j entries
        left = (1 - r.pow(2)).sqrt().cumprod(-1)
        stick = ember.nn.functional.pad(left[..., :-1], [1, 0], value=1)
        eye = ember.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye) * stick

    def _inverse(self, y: Tensor) -> Tensor:
        left = 1 - (y * y).cumsum(-1)  # the squared stick left after each entry
        before = ember.nn.functional.pad(left[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(before, diag=-1).sqrt()
        return ember.atanh(t)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        # stick breaking: 1/2 log of the squared stick left before each off-diagonal entry
        # past the first column; tanh: log(1 - tanh(x)^2), written stably
        left = 1 - (y * y).cumsum(-1)
        stick = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick + tanh

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("CorrCholeskyTransform: too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError(
                f"CorrCholeskyTransform: an input of size {n} is not a flattened strict "
                "lower triangle (sizes are D (D - 1) / 2)"
            )
        return (*shape[:-1], d, d)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("CorrCholeskyTransform: too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError(f"CorrCholeskyTransform: input shape {tuple(shape)} is not square")
        d = shape[-1]
        return (*shape[:-2], d * (d - 1) // 2)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``, to the unit interval, with ``log_prob`` as log-Jacobian.

    >>> D = ember.distributions
    >>> D.transforms.CumulativeDistributionTransform(D.Normal(0.0, 1.0))(ember.tensor(0.0))
    tensor(0.5000)
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)
