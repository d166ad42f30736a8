"""``python -m ember.distributed.run -n 4 script.py args...``: start a job of 4 processes
through ``mpiexec``, as ``torchrun`` does for PyTorch (``-m module`` runs a module instead).

Each process gets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE`` and ``LOCAL_WORLD_SIZE`` in its
environment, as under torchrun, and (with more than one process) ``OMP_NUM_THREADS=1``
unless set, as torchrun sets it, so the processes do not each start a BLAS thread per core.
In the script, ``ember.distributed.init_process_group()`` joins the job. ``mpiexec -n 4
python script.py`` works as well (without those variables). When a process exits with an
error the others are stopped and the launcher names the rank.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

__all__ = ["find_mpiexec", "main"]


def find_mpiexec() -> str | None:
    """The ``mpiexec`` beside this Python (the ``mpich`` wheel's), else the one on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    return shutil.which("mpiexec")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Run a script (or -m module) as a job of N processes through mpiexec.",
    )
    p.add_argument(
        "-n",
        "--nproc-per-node",
        "--nproc_per_node",
        dest="n",
        type=int,
        default=1,
        help="number of processes (default 1)",
    )
    p.add_argument("--standalone", action="store_true", help="accepted, as torchrun's (no-op)")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: beside python)")
    p.add_argument("-m", "--module", action="store_true", help="run the target as a module")
    p.add_argument("target", help="the script (or, with -m, the module)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


_EXIT_CODES = re.compile(r"Exit codes: (.*)")


def _relay(stream: IO[str], out: IO[str], codes: list[int]) -> None:
    """Copy mpiexec's output through, keeping hydra's exit-code report for our message."""
    for line in stream:
        found = _EXIT_CODES.search(line)
        if found:
            for group in re.findall(r"\[[^\]]*\]\s*([\d,]+)", found.group(1)):
                codes.extend(int(c) for c in group.split(","))
            continue
        out.write(line)
        out.flush()


def main(argv: list[str] | None = None) -> int:
    """Launch the job; returns its exit code."""
    ns = _parser().parse_args(argv)
    if ns.n < 1:
        _parser().error(f"-n must be at least 1, got {ns.n}")
    mpiexec = ns.mpiexec or find_mpiexec()
    if mpiexec is None:
        sys.stderr.write(
            "ember.distributed.run: no mpiexec found beside python or on PATH; "
            "pip install mpich mpi4py\n"
        )
        return 2
    hydra = "hydra" in Path(os.path.realpath(mpiexec)).name or _is_hydra(mpiexec)
    cmd = [mpiexec, "-n", str(ns.n)]
    if hydra:
        cmd.append("-print-all-exitcodes")
    cmd += [sys.executable, "-m", "ember.distributed._rank"]
    cmd += ["-m", ns.target] if ns.module else [ns.target]
    cmd += ns.args
    env = dict(os.environ)
    if ns.n > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = "1"  # as torchrun: N processes, not N x cores BLAS threads
    pipe = subprocess.PIPE
    proc = subprocess.Popen(cmd, stdout=pipe, stderr=pipe, text=True, bufsize=1, env=env)
    codes: list[int] = []
    assert proc.stdout is not None and proc.stderr is not None
    relays = [
        threading.Thread(target=_relay, args=(proc.stdout, sys.stdout, codes), daemon=True),
        threading.Thread(target=_relay, args=(proc.stderr, sys.stderr, codes), daemon=True),
    ]
    for relay in relays:
        relay.start()
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        rc = proc.wait()
    for relay in relays:
        relay.join(timeout=5)
    what = describe_failure(codes)
    if rc and what:
        sys.stderr.write(f"ember.distributed.run: the job failed: {what}\n")
    return rc


def describe_failure(codes: list[int]) -> str:
    """The ranks that failed, from hydra's wait() statuses ("" if none did). Hydra kills
    (SIGKILL) the ranks still running once one fails; those are named apart, after the ranks
    that failed by themselves, since which of them are still running then is a race.

    >>> from ember.distributed.run import describe_failure
    >>> describe_failure([9, 3 << 8])
    'rank 1 (exit code 3); mpiexec then stopped rank 0'
    """
    failed = [(r, c) for r, c in enumerate(codes) if c]
    own = [(r, c) for r, c in failed if c & 0x7F != 9]
    stopped = [r for r, c in failed if c & 0x7F == 9] if own else []
    what = ", ".join(f"rank {r} ({_status(c)})" for r, c in (own or failed))
    if stopped:
        what += "; mpiexec then stopped " + ", ".join(f"rank {r}" for r in stopped)
    return what


def _status(code: int) -> str:
    """Hydra reports a wait() status: an exit code in the high byte, or a signal."""
    if code & 0x7F:
        return f"killed by signal {code & 0x7F}"
    return f"exit code {code >> 8}"


def _is_hydra(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "HYDRA" in out.stdout.upper()


if __name__ == "__main__":
    sys.exit(main())
