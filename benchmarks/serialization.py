"""Saving and loading a 100 MB state_dict (25 float32 tensors of 1M elements, as a model's
weights), ember's PyTorch-format checkpoint against ``torch.save``/``torch.load`` on the
same values; goal: at most 1.5x PyTorch. Files go to a temporary folder (the OS's page cache
makes this a measure of the libraries, not of the disk).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, Thunk

try:
    import torch
except ImportError:
    torch = None


def _state(lib: Any, n: int, size: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {f"layer{i}.weight": lib.from_numpy(rng.standard_normal(size, np.float32))
            for i in range(n)}  # fmt: skip


def cases(quick: bool) -> list[Case]:
    """save and load of the state_dict, ember and torch each on its own file."""
    n, size = (5, 1_000_000) if quick else (25, 1_000_000)
    folder = tempfile.mkdtemp(prefix="ember-bench-")
    e_path, t_path = os.path.join(folder, "e.pt"), os.path.join(folder, "t.pt")
    e_state = _state(ember, n, size)
    ember.save(e_state, e_path)
    t_save: Thunk | None = None
    t_load: Thunk | None = None
    if torch is not None:
        t_state = _state(torch, n, size)
        torch.save(t_state, t_path)
        t_save = lambda: torch.save(t_state, t_path)  # noqa: E731
        t_load = lambda: torch.load(t_path, weights_only=True)  # noqa: E731
    mb = n * size * 4 / 1e6
    return [
        Case("serialize", f"save {mb:.0f} MB state_dict", lambda: ember.save(e_state, e_path),
             None, t_save, ("torch", 1.5)),
        Case("serialize", f"load {mb:.0f} MB state_dict", lambda: ember.load(e_path),
             None, t_load, ("torch", 1.5)),
    ]  # fmt: skip
