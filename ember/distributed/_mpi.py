"""mpi4py, imported on first use: ``import ember`` and ``import ember.distributed`` never load
it (it costs ~60 ms and initializes MPI)."""

from __future__ import annotations

import importlib.util
from typing import Any

_MPI: list[Any] = []


def mpi() -> Any:
    """The ``mpi4py.MPI`` module (imported, and MPI initialized, on the first call)."""
    if not _MPI:
        try:  # deferred: MPI starts at the first call that needs it
            from mpi4py import MPI
        except ImportError as e:
            raise RuntimeError(
                "ember.distributed moves data through MPI with mpi4py, which is not installed; "
                "pip install mpi4py mpich (or ember's test extra)"
            ) from e
        _MPI.append(MPI)
    return _MPI[0]


def available() -> bool:
    """Whether mpi4py can be imported (without importing it when it was not yet)."""
    if _MPI:
        return True

    return importlib.util.find_spec("mpi4py") is not None
