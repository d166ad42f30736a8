"""What each process of ``python -m ember.distributed.run`` runs: set torchrun's environment
variables from the MPI launcher's, then run the script or module as ``__main__``."""

from __future__ import annotations

import os
import runpy
import sys


def main(argv: list[str]) -> None:
    env = os.environ
    rank = env.get("PMI_RANK") or env.get("OMPI_COMM_WORLD_RANK") or "0"
    size = env.get("PMI_SIZE") or env.get("OMPI_COMM_WORLD_SIZE") or "1"
    local = env.get("MPI_LOCALRANKID") or env.get("OMPI_COMM_WORLD_LOCAL_RANK") or rank
    nlocal = env.get("MPI_LOCALNRANKS") or env.get("OMPI_COMM_WORLD_LOCAL_SIZE") or size
    env.update(RANK=rank, WORLD_SIZE=size, LOCAL_RANK=local, LOCAL_WORLD_SIZE=nlocal)
    if argv and argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = argv[0]
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
