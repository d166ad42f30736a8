"""Derivatives of the three fft ops with kernels (PyTorch's derivatives.yaml): every transform
is linear, so each gradient is the adjoint transform of the output gradient.

# NOTE [fft derivatives]
- ``_fft_c2c``: the transform in the other direction with the same ``normalization``.
- ``_fft_r2c``: a one-sided result is the full transform with half of it dropped, so its
  gradient is zero-filled back to the full length, transformed back (``_fft_c2c``, inverse)
  and its real part kept.
- ``_fft_c2r``: the half spectrum stands for the full one by conjugate symmetry, so the
  gradient is the one-sided forward transform of ``G``, with the entries whose mirror images
  were left out (indices ``1 .. n - len``) counted twice.
"""

from __future__ import annotations

from typing import Any

from ember._factory import tensor
from ember.autograd.derivatives import real
from ember.autograd.function_table import defvjp
from ember.ops.registry import ops

aten = ops.aten


def _r2c_grad(g: Any, self: Any, dim: list[int], normalization: int, onesided: bool) -> Any:
    if onesided:
        d = dim[-1] % self.ndim
        missing = self.shape[d] - g.shape[d]
        if missing > 0:
            pad = [0] * (2 * (g.ndim - d))
            pad[-1] = missing
            g = aten.constant_pad_nd.default(g, pad)
    return real(aten._fft_c2c.default(g, dim, normalization, False))


def _c2r_grad(g: Any, self: Any, dim: list[int], normalization: int) -> Any:
    gi = aten._fft_r2c.default(g, dim, normalization, True)
    d = dim[-1] % g.ndim
    twice = g.shape[d] - gi.shape[d]
    if twice > 0:
        weights = [1.0] * gi.shape[d]
        for i in range(1, twice + 1):
            weights[i] = 2.0
        w = tensor(weights, dtype=g.dtype, device=g.device)
        w = w.view([-1] + [1] * (gi.ndim - d - 1))
        gi = gi * w
    return gi


defvjp(aten._fft_c2c.default, lambda g, self, dim, normalization, forward: (
    aten._fft_c2c.default(g, dim, normalization, not forward),))  # fmt: skip
defvjp(aten._fft_r2c.default, lambda g, self, dim, normalization, onesided: (
    _r2c_grad(g, self, dim, normalization, onesided),))  # fmt: skip
defvjp(aten._fft_c2r.default, lambda g, self, dim, normalization, last_dim_size: (
    _c2r_grad(g, self, dim, normalization),))  # fmt: skip
