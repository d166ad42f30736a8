"""ember.distributed: the multi-process checks run as MPI jobs of two ranks, launched with
``python -m ember.distributed.run`` (so the launcher is tested too); each job groups many
checks (tests/mpi/*.py) to keep launches few. In this process only what needs no MPI runs:
mpi4py is never imported here (a forked DataLoader worker must not inherit an MPI runtime).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ember
import ember.distributed as dist
from ember.distributed.run import find_mpiexec

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = Path(__file__).resolve().parent / "mpi"
MPI_MISSING = not dist.is_available() or find_mpiexec() is None
needs_mpi = pytest.mark.skipif(
    MPI_MISSING, reason="mpi4py or mpiexec is not installed (pip install mpi4py mpich)"
)


def launch(
    *args: str, n: int = 2, timeout: float = 180, direct: bool = False
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``python -m ember.distributed.run -n N args...`` from the repository root (with
    ``direct``: ``mpiexec -n N python args...``)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="error::RuntimeWarning")
    if direct:
        cmd = [str(find_mpiexec()), "-n", str(n), sys.executable, *args]
    else:
        cmd = [sys.executable, "-m", "ember.distributed.run", "-n", str(n), *args]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    return proc, time.perf_counter() - start


@needs_mpi
def test_collectives_every_dtype_against_numpy() -> None:
    """(Run as a module, ``-m tests.mpi.collectives``: the launcher's ``-m`` and torchrun's
    environment variables are checked too.)"""
    proc, _ = launch("-m", "tests.mpi.collectives", "--launched-as-module")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "collectives OK" in proc.stdout


@needs_mpi
def test_mismatched_calls_raise_on_every_rank() -> None:
    proc, _ = launch(str(SCRIPTS / "errors.py"), direct=True)  # mpiexec -n 2 python script
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "errors OK: 11 errors raised on every rank" in proc.stdout


@needs_mpi
@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("timeout", "rank 0 of 2 failed (DistBackendError: ember.distributed.all_reduce"),
        ("raise", "rank 1 of 2 failed (RuntimeError: rank 1 broke down)"),
        ("exit", "the job failed: rank 1 (exit code 3)"),
    ],
)
def test_a_failing_rank_ends_the_job_naming_it(case: str, message: str) -> None:
    proc, seconds = launch(str(SCRIPTS / "failures.py"), case)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr
    assert "went unnoticed" not in proc.stdout
    assert seconds < 25  # the sleeping rank (30 s) was stopped, not waited for


def test_a_rank_mpiexec_killed_is_not_named_as_the_failure() -> None:
    from ember.distributed.run import describe_failure

    assert describe_failure([0, 3 << 8]) == "rank 1 (exit code 3)"
    assert describe_failure([9, 3 << 8]) == "rank 1 (exit code 3); mpiexec then stopped rank 0"
    assert describe_failure([9, 9]) == "rank 0 (killed by signal 9), rank 1 (killed by signal 9)"
    assert describe_failure([0, 0]) == ""


def test_import_does_not_load_mpi4py_and_a_script_alone_is_a_world_of_one() -> None:
    code = (
        "import sys, ember, ember.distributed as dist\n"
        "print('mpi4py' in sys.modules)\n"
        "if dist.is_available():\n"
        "    dist.init_process_group()\n"
        "    t = ember.ones(2)\n"
        "    dist.all_reduce(t, dist.ReduceOp.AVG)\n"
        "    print(dist.get_rank(), dist.get_world_size(), t.tolist())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "False", out.stderr
    if not MPI_MISSING:
        assert lines[1] == "0 1 [1.0, 1.0]", out.stderr


def test_calls_before_init_process_group_name_the_fix() -> None:
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(ValueError, match="init_process_group"):
        dist.all_reduce(ember.ones(2))
    with pytest.raises(ValueError, match="MPI only"):
        dist.init_process_group("nccl")
    assert dist.group.WORLD is None
    assert dist.ReduceOp.SUM is dist.ReduceOp.RedOpType.SUM
    assert {op.name for op in dist.ReduceOp} >= {"SUM", "AVG", "PRODUCT", "MIN", "MAX"}


@needs_mpi
def test_ddp_training_equals_one_process_on_the_whole_batch() -> None:
    proc, _ = launch(str(SCRIPTS / "ddp.py"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ddp OK" in proc.stdout


def test_distributed_sampler_gives_pytorchs_indices() -> None:
    torch_data = pytest.importorskip("torch.utils.data.distributed")
    from ember.utils.data.distributed import DistributedSampler

    for n, replicas, shuffle, drop_last, seed, epoch in [
        (10, 3, True, False, 0, 0),
        (10, 3, True, True, 5, 2),
        (7, 4, False, False, 0, 0),
        (7, 4, False, True, 0, 0),
        (3, 4, True, False, 1, 1),  # padding longer than the dataset
        (33, 2, True, False, 7, 3),
    ]:
        for rank in range(replicas):
            ours = DistributedSampler(range(n), replicas, rank, shuffle, seed, drop_last)
            theirs = torch_data.DistributedSampler(
                range(n), replicas, rank, shuffle, seed, drop_last
            )
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)
    with pytest.raises(ValueError, match="Invalid rank 3"):
        DistributedSampler(range(4), num_replicas=3, rank=3)


def test_ddp_needs_a_process_group() -> None:
    from ember.nn.parallel import DistributedDataParallel

    with pytest.raises(ValueError, match="init_process_group"):
        DistributedDataParallel(ember.nn.Linear(2, 2))


@needs_mpi
def test_demo_trains_data_parallel_as_one_process() -> None:
    """``python -m ember.distributed.run -n 2 -m ember``: DDP in every mode, rank 0 prints,
    the same losses and accuracies as one process (here, in-process) on the same batches."""
    import contextlib
    import io
    import re

    from ember.demo import cli

    args = ["--quick", "--epochs", "2", "--model", "mlp"]
    proc, _ = launch("-m", "ember", *args, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Data parallel: 2 processes (MPI)" in out
    assert out.count("Results (accuracy") == 1  # rank 1 printed nothing
    assert not [line for line in out.splitlines() if len(line) > cli.WIDTH]
    alone = io.StringIO()
    with contextlib.redirect_stdout(alone):
        assert cli.main([*args, "--mode", "eager"]) == 0
    pattern = r"mlp  (\w+) +epoch (\d)/2 \S+ 8/8 (loss \S+  acc +\S+)"
    want = {(e, s) for _, e, s in re.findall(pattern, alone.getvalue())}
    got = re.findall(pattern, out)
    assert {m for m, _, _ in got} == {"eager", "lazy", "compiled"}
    assert {(e, s) for _, e, s in got} == want and len(want) == 2, (got, want)
