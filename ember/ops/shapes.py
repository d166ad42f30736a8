"""Shape arithmetic every backend shares: broadcasting, dim wrapping, with PyTorch's errors."""

from __future__ import annotations

from collections.abc import Sequence


def broadcast_shapes(*shapes: Sequence[int], op: str = "") -> tuple[int, ...]:
    """The broadcast of ``shapes``; RuntimeError naming the op and the clashing sizes.

    >>> from ember.ops.shapes import broadcast_shapes
    >>> broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for i, s in enumerate(shapes):
        for j, n in enumerate(s):
            k = ndim - len(s) + j
            if n == out[k] or n == 1:
                continue
            if out[k] == 1:
                out[k] = n
                continue
            first = next(sh for sh in shapes[:i] if len(sh) >= ndim - k and sh[k - ndim] != 1)
            prefix = f"{op}: " if op else ""
            raise RuntimeError(
                f"{prefix}The size of tensor a ({first[k - ndim]}) must match the size of tensor "
                f"b ({n}) at non-singleton dimension {k}; shapes {[list(x) for x in shapes]} "
                "cannot broadcast"
            )
    return tuple(out)


def wrap_dim(dim: int, ndim: int, op: str = "") -> int:
    """``dim`` in ``[0, ndim)``, counting negative dims from the end (0-dim counts as 1-dim)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        prefix = f"{op}: " if op else ""
        raise IndexError(
            f"{prefix}Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {dim})"
        )
    return dim % n
