"""DTensor (``ember.distributed.tensor``): the multi-process checks run as MPI jobs launched
from here (tests/mpi/dtensor_*.py, each grouping many checks to keep launches few); what
needs no process group runs in this process (which never imports mpi4py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ember
import ember.distributed as dist
from ember.distributed.run import find_mpiexec
from ember.distributed.tensor._collectives import chunk_size, piece_range
from ember.distributed.tensor._ops._views import view_groups
from ember.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel
from ember.distributed.tensor.placement_types import Partial, Replicate, Shard

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = Path(__file__).resolve().parent / "mpi"


needs_mpi = pytest.mark.skipif(
    not dist.is_available() or find_mpiexec() is None,
    reason="mpi4py or mpiexec is not installed (pip install mpi4py mpich)",
)


def launch(script: str, n: int) -> subprocess.CompletedProcess[str]:
    """``python -m ember.distributed.run -n N tests/mpi/<script>`` from the repository root
    (as tests/test_distributed.py launches its jobs)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="error::RuntimeWarning")
    cmd = [sys.executable, "-m", "ember.distributed.run", "-n", str(n), str(SCRIPTS / script)]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)


@needs_mpi
def test_redistribute_and_ops_on_every_placement_two_ranks() -> None:
    proc = launch("dtensor_ops.py", 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("dtensor ops OK") == 2, proc.stdout


@needs_mpi
def test_tensor_parallel_mlp_and_attention_train_as_dense() -> None:
    proc = launch("dtensor_tp.py", 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("dtensor tp OK") == 2, proc.stdout


@needs_mpi
def test_two_dimensional_meshes_four_ranks() -> None:
    proc = launch("dtensor_mesh2d.py", 4)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("dtensor 2-d mesh OK") == 4, proc.stdout


# ---------------------------------------------------------------- no process group needed


def test_pieces_are_torch_chunk_pieces() -> None:
    torch = pytest.importorskip("torch")
    for n in range(0, 9):
        for k in range(1, 5):
            chunks = torch.arange(n).chunk(k) if n else ()
            sizes = [len(c) for c in chunks] + [0] * (k - len(chunks))
            assert [piece_range(n, k, i)[1] for i in range(k)] == sizes, (n, k)
            starts = [piece_range(n, k, i)[0] for i in range(k)]
            assert starts == sorted(starts) and chunk_size(n, k) == max(sizes, default=0)


def test_placements_compare_and_print_as_pytorch() -> None:
    assert Shard(0) == Shard(0) and Shard(0) != Shard(1) and Replicate() == Replicate()
    assert repr(Shard(1)) == "Shard(dim=1)" and repr(Replicate()) == "Replicate()"
    assert Partial() == Partial("sum") and Partial().reduce_op == "sum"
    assert Shard(0).is_shard() and Shard(0).is_shard(0) and not Shard(0).is_shard(1)
    assert Partial("max").is_partial() and Replicate().is_replicate()
    with pytest.raises(ValueError, match="reduce_op must be one of"):
        Partial("median")


def test_view_groups() -> None:
    assert view_groups((2, 3, 4), (6, 4)) == [([0, 1], [0]), ([2], [1])]
    assert view_groups((6, 4), (2, 3, 4)) == [([0], [0, 1]), ([1], [2])]
    assert view_groups((4, 1, 3), (4, 3)) == [([0, 1], [0]), ([2], [1])]  # a 1 joins its run
    assert view_groups((2, 12), (2, 3, 4)) == [([0], [0]), ([1], [1, 2])]


def test_parallel_styles_default_layouts() -> None:
    assert repr(ColwiseParallel()) == "ColwiseParallel(input_layouts=R, output_layouts=S(-1))"
    assert repr(RowwiseParallel()) == "RowwiseParallel(input_layouts=S(-1), output_layouts=R)"
    c = ColwiseParallel(output_layouts=Replicate())
    assert c._layouts() == (Replicate(), Replicate())
    r = RowwiseParallel()  # one style object may serve an Embedding and a Linear
    assert r._layouts(ember.nn.Embedding(3, 2)) == (Replicate(), Replicate())
    assert r._layouts(ember.nn.Linear(3, 2)) == (Shard(-1), Replicate())
