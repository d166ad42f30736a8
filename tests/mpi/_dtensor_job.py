"""What the DTensor MPI jobs (dtensor_*.py) share, set up on import: the MPI process group,
this rank and the world size, ember seeded, a NumPy stream (``RNG``, which ``randn`` draws
from), and ``close``, which counts the checks it makes in ``CHECKS``."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
import ember.distributed as dist

dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
ember.manual_seed(0)
RNG = np.random.default_rng(0)

CHECKS = [0]


def randn(*shape: Any) -> ember.Tensor:
    """Normal samples from NumPy (ember's PyTorch-exact stream costs a second to start)."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return ember.tensor(RNG.standard_normal(shape), dtype=ember.float32)


def close(a: ember.Tensor, b: ember.Tensor, what: str, tol: float = 1e-4) -> None:
    """``a`` and ``b`` have one shape and agree within ``tol`` (absolute and relative)."""
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {list(a.shape)} vs {list(b.shape)}"
    assert ember.allclose(a, b, atol=tol, rtol=tol), f"{what}:\n{a}\nvs\n{b}"
    CHECKS[0] += 1
