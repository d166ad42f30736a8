"""Out-of-range indices of the ``index_*`` ops raise where PyTorch raises.

PyTorch refuses negative indices in ``index_add_``, ``index_copy_``, ``index_reduce_`` and
``index_select`` ("index out of range in self"), and wraps them in ``index_fill_``. ember
wrapped them in ``index_reduce_`` (a silent write to the wrong row).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import ember

from .conftest import requires_torch, torch


def _call(lib: Any, op: str, index: list[int]) -> Any:
    z = lib.arange(12.0).reshape(4, 3)
    i = lib.tensor(index)
    src = lib.full((len(index), 3), 2.0)
    calls: dict[str, Callable[[], Any]] = {
        "index_add_": lambda: z.index_add_(0, i, src),
        "index_copy_": lambda: z.index_copy_(0, i, src),
        "index_fill_": lambda: z.index_fill_(0, i, -1.0),
        "index_reduce_": lambda: z.index_reduce_(0, i, src, "prod"),
        "index_select": lambda: lib.index_select(z, 0, i),
    }
    return calls[op]()


OPS = ["index_add_", "index_copy_", "index_fill_", "index_reduce_", "index_select"]
INDICES = [[-1], [0, -4], [4], [1, 3]]


@requires_torch
@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("index", INDICES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_index_ops_refuse_what_torch_refuses(op: str, index: list[int]) -> None:
    try:
        ref = _call(torch, op, index).tolist()
    except (IndexError, RuntimeError) as e:
        with pytest.raises(type(e), match="out of"):  # the same class as PyTorch's
            _call(ember, op, index)
        return
    assert _call(ember, op, index).tolist() == ref


def test_index_reduce_names_the_index_and_the_range() -> None:
    z = ember.ones(3)
    with pytest.raises(IndexError, match=r"index_reduce.*index -1.*size 3.*\[0, 3\)"):
        z.index_reduce_(0, ember.tensor([-1]), ember.ones(1), "prod")
    assert z.tolist() == [1.0, 1.0, 1.0]  # nothing was written
