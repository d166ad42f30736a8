"""Weight initialisation: fill a tensor in place from a distribution, under ``no_grad``.

Random values come from ember's generators (``generator=``, else the default one seeded by
``ember.manual_seed``): the same seed gives the same weights on every run, but not the values
PyTorch would draw (see ``ember/random.py``). Distributions and their bounds match PyTorch's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import ember
from ember._tensor import Tensor
from ember.random import Generator

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]

_LINEAR = frozenset(
    ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
     "conv_transpose3d", "sigmoid")
)  # fmt: skip


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended scale of the weights that feed ``nonlinearity``.

    >>> round(ember.nn.init.calculate_gain("relu"), 4)
    1.4142
    """
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight shaped ``(out, in, *kernel)``.

    >>> ember.nn.init._calculate_fan_in_and_fan_out(ember.empty(4, 3, 5))
    (15, 20)
    """
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill_random(tensor: Tensor, kind: str, first: float, second: float, gen: Any) -> Tensor:
    """``tensor.uniform_(first, second)`` (kind "rand") or ``tensor.normal_(first, second)``
    (kind "randn") without grad, as PyTorch's init does, so the values are PyTorch's."""
    if gen is not None and not isinstance(gen, Generator):
        raise TypeError(f"generator must be an ember.Generator or None, got {type(gen).__name__}")
    with ember.no_grad():
        if kind == "rand":
            tensor.uniform_(first, second, generator=gen)  # type: ignore[attr-defined]
        else:
            tensor.normal_(first, second, generator=gen)  # type: ignore[attr-defined]
    return tensor


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill ``tensor`` with values drawn uniformly from ``[a, b)``; returns it.

    >>> w = ember.nn.init.uniform_(ember.empty(3), -1, 1); bool((w.abs() <= 1).all())
    True
    """
    return _fill_random(tensor, "rand", a, b, generator)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill ``tensor`` with values from ``N(mean, std**2)``; returns it.

    >>> ember.nn.init.normal_(ember.empty(2, 2), std=0.02).shape
    ember.Size([2, 2])
    """
    return _fill_random(tensor, "randn", mean, std, generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``; returns it.

    >>> ember.nn.init.constant_(ember.empty(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    with ember.no_grad():
        return tensor.fill_(val)  # type: ignore[attr-defined]


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros; returns it.

    >>> ember.nn.init.zeros_(ember.empty(2))
    tensor([0., 0.])
    """
    with ember.no_grad():
        return tensor.zero_()  # type: ignore[attr-defined]


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones; returns it.

    >>> ember.nn.init.ones_(ember.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    >>> ember.nn.init.xavier_uniform_(ember.empty(3, 5)).shape
    ember.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Glorot normal: ``N(0, std**2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    >>> ember.nn.init.xavier_normal_(ember.empty(3, 5)).shape
    ember.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He uniform: ``U(-b, b)`` with ``b = gain * sqrt(3 / fan)`` (``nn.Linear``'s default
    init uses ``a=sqrt(5)``).

    >>> ember.nn.init.kaiming_uniform_(ember.empty(4, 3), a=5**0.5).shape
    ember.Size([4, 3])
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He normal: ``N(0, std**2)`` with ``std = gain / sqrt(fan)``.

    >>> ember.nn.init.kaiming_normal_(ember.empty(4, 3), nonlinearity="relu").shape
    ember.Size([4, 3])
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


# --------------------------------------------------------------------------- more initializers


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Tensor:
    """Fill ``tensor`` from ``N(mean, std**2)`` truncated to ``[a, b]``, by rejection
    sampling as PyTorch does (its draws); returns it.

    >>> w = ember.nn.init.trunc_normal_(ember.empty(1000), a=-0.5, b=0.5)
    >>> bool((w.abs() <= 0.5).all())
    True
    """

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
            "values may be incorrect.",
            stacklevel=2,
        )
    with ember.no_grad():
        _trunc_normal(
            tensor, mean, std, a, b, cdf((b - mean) / std) - cdf((a - mean) / std), generator
        )
    return tensor


def _trunc_normal(
    t: Any, mean: float, std: float, a: float, b: float, p: float, g: Generator | None
) -> None:
    """PyTorch's rejection sampling, draw for draw: with mass ``p > 0.3`` in ``[a, b]``,
    normals redrawn (a whole tensor each round) where out of bounds; else uniforms on
    ``[a, b]`` accepted where ``log(u) <= log pdf - log peak`` (``u`` a second uniform)."""
    if p > 0.3:
        lo = float(np.asarray(a, t.dtype.np))  # the bounds in the tensor's dtype
        hi = float(np.asarray(b, t.dtype.np))
        result = t.normal_(mean, std, generator=g)
        while True:
            mask = (result < lo) | (result > hi)
            if not bool(mask.any()):
                break
            result = ember.where(
                mask, ember.empty_like(result).normal_(mean, std, generator=g), result
            )
        if result is not t:
            t.copy_(result)
        return
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_pdf_minus_peak(x: Any) -> Any:
        return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

    candidates = ember.empty_like(t)
    accept = ember.empty_like(t)
    t.uniform_(a, b, generator=g)
    candidates.copy_(t)
    pending = accept.uniform_(generator=g).log_().gt(log_pdf_minus_peak(candidates))
    if not bool(pending.any()):
        return
    result = t
    while True:
        candidates.uniform_(a, b, generator=g)
        result = ember.where(pending, candidates, result)
        fresh = accept.uniform_(generator=g).log_().gt(log_pdf_minus_peak(candidates))
        pending = ember.where(pending, fresh, pending)
        if not bool(pending.any()):
            break
    t.copy_(result)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Generator | None = None) -> Tensor:
    """Fill ``tensor`` (2 or more dims, flattened past the first) with a (semi-)orthogonal
    matrix scaled by ``gain``: the Q of a QR of a normal sample, signs fixed so it is uniform
    (Mezzadri); returns it.

    >>> w = ember.nn.init.orthogonal_(ember.empty(3, 3))
    >>> bool(((w @ w.t() - ember.eye(3)).abs() < 1e-5).all())
    True
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    # PyTorch's draws: a (rows, cols) normal_ in the tensor's dtype (the QR is LAPACK's)
    sample: Any = ember.empty((rows, cols), dtype=tensor.dtype)
    flat = sample.normal_(0, 1, generator=generator).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with ember.no_grad():
        tensor.copy_(ember.from_numpy(np.ascontiguousarray(q * gain)).reshape(tensor.shape))  # type: ignore[attr-defined]
    return tensor


def _check_2d(tensor: Tensor) -> None:
    """``sparse_`` and ``eye_`` fill matrices only."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None
) -> Tensor:
    """Fill the 2-d ``tensor`` from ``N(0, std**2)``, then zero ``ceil(sparsity * rows)``
    random rows of each column; returns it.

    >>> w = ember.nn.init.sparse_(ember.empty(10, 3), 0.3)
    >>> [int((w[:, j] == 0).sum()) for j in range(3)]
    [3, 3, 3]
    """
    _check_2d(tensor)
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    with ember.no_grad():  # PyTorch's draws: normal_, then a randperm per column from the
        t: Any = tensor  # default generator (PyTorch's sparse_ passes it no generator)
        t.normal_(0, std, generator=generator)
        for col in range(cols):
            t[ember.randperm(rows)[:zeros], col] = 0
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill the 3-, 4- or 5-d ``tensor`` with the Dirac delta (a convolution that keeps its
    input's channels, per group); returns it.

    >>> ember.nn.init.dirac_(ember.empty(2, 2, 3))[:, :, 1]
    tensor([[1., 0.],
            [0., 1.]])
    """
    ndim = tensor.ndim
    if ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    n = min(per_group, sizes[1])
    values = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):  # the few groups, not elements
        d = np.arange(n)
        values[(g * per_group + d, d, *centre)] = 1.0
    with ember.no_grad():
        tensor.copy_(ember.from_numpy(values))  # type: ignore[attr-defined]
    return tensor


def eye_(tensor: Tensor) -> Tensor:
    """Fill the 2-d ``tensor`` with the identity matrix; returns it.

    >>> ember.nn.init.eye_(ember.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    _check_2d(tensor)
    with ember.no_grad():
        tensor.copy_(ember.eye(*tensor.shape, dtype=tensor.dtype))  # type: ignore[attr-defined]
    return tensor
