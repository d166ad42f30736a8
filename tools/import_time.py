"""How long ``import ember`` takes against ``import torch``, each in fresh processes, in one run.

    python tools/import_time.py                    # this checkout, 5 rounds
    python tools/import_time.py --rounds 9 --also /tmp/old_checkout

Each round starts one new interpreter per library (ember first, then torch, then any
``--also`` checkouts), so a busy machine slows all of them alike; the table shows the
minimum and the median over the rounds of the wall-clock time, the minimum of the CPU time
the import itself used (steadier than wall time on a machine other jobs share), and each
one's ratio to torch's. Bytecode is cached
under a temporary ``PYTHONPYCACHEPREFIX`` (warmed before timing), as an installed package
has its ``.pyc`` files, even where the environment sets ``PYTHONDONTWRITEBYTECODE``.
The last line counts the generated source (``<generated ...>`` in ``linecache``) that
importing ember executes: the issue-19 budget is 5,000 lines.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_TIMED = (
    "import time; t, c = time.perf_counter(), time.process_time(); import {mod}; "
    "print(time.perf_counter() - t, time.process_time() - c)"
)
_GENERATED = (
    "import linecache, ember; gen = [v for k, v in linecache.cache.items() "
    "if k.startswith('<generated')]; print(len(gen), sum(len(v[2]) for v in gen))"
)


def _env(cache: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def run_once(code: str, cwd: Path, cache: str) -> str:
    """Run ``code`` in a new interpreter started in ``cwd``; its stdout, stripped."""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=_env(cache), capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(f"python -c {code!r} in {cwd} failed:\n{out.stderr}")
    return out.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    """Print the import-time table; returns 0."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--also", action="append", default=[], help="another checkout to time")
    args = p.parse_args(argv)
    targets = [("ember", "ember", ROOT), ("torch", "torch", ROOT)]
    targets += [(f"ember@{Path(c).name}", "ember", Path(c)) for c in args.also]
    times: dict[str, list[float]] = {name: [] for name, _, _ in targets}
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in targets}
    with tempfile.TemporaryDirectory(prefix="import_time_") as cache:
        for _, mod, cwd in targets:  # warm: write the bytecode caches
            run_once(f"import {mod}", cwd, cache)
        for _ in range(args.rounds):
            for name, mod, cwd in targets:
                wall, used = run_once(_TIMED.format(mod=mod), cwd, cache).split()
                times[name].append(float(wall))
                cpu[name].append(float(used))
        generated = {
            name: run_once(_GENERATED, cwd, cache).split()
            for name, mod, cwd in targets
            if mod == "ember"
        }
    torch_min, torch_cpu = min(times["torch"]), min(cpu["torch"])
    head = f"{'import':<18}{'min s':>8}{'median s':>10}{'min/torch':>11}"
    print(head + f"{'cpu s':>8}{'cpu/torch':>11}")
    for name, ts in times.items():
        c = min(cpu[name])
        print(
            f"{name:<18}{min(ts):>8.3f}{statistics.median(ts):>10.3f}"
            f"{min(ts) / torch_min:>10.2f}x{c:>8.3f}{c / torch_cpu:>10.2f}x"
        )
    for name, (fns, lines) in generated.items():
        print(f"{name}: {fns} generated functions, {lines} generated lines executed at import")
    return 0


if __name__ == "__main__":
    sys.exit(main())
