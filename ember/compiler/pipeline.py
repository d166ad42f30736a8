"""The compiler, as a table of contents: the passes, in order, then one code generator.

NOTE [compiler tiers]
``EMBER_LAZY_TIER`` picks how a graph runs (default ``numba``, or ``numpy`` when numba is
not installed):

- ``interpreter``: an ``ember.fx.Interpreter`` runs the nodes one by one on the cpu
  kernels, freeing values after their last use (``interpreter_tier.py``);
- ``numpy``: one generated Python function per graph, direct NumPy calls writing into
  reused buffers where they equal the kernels, kernel calls for the rest
  (``numpy_tier.py``);
- ``numba``: the same, with fusion groups as numba parallel loops (``numba_tier.py``).

>>> x = ember.ones(3, device="lazy")
>>> (x * 2 + 1).sum().item()
9.0
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ember.compiler.buffers import reuse_buffers
from ember.compiler.constant_folding import fold_constants
from ember.compiler.cse import eliminate_common_subexpressions
from ember.compiler.dce import eliminate_dead_code
from ember.compiler.fusion import group_fusions
from ember.compiler.inplace import (
    reuse_inputs_in_place,
    update_in_place,
    update_in_place_but_direct,
)
from ember.compiler.interpreter_tier import compile_interpreter
from ember.compiler.numba_tier import numba_available
from ember.compiler.numpy_tier import compile_numpy
from ember.compiler.pass_manager import run_pass
from ember.fx.graph_module import GraphModule

TIERS = ("interpreter", "numpy", "numba")


def tier() -> str:
    """The tier ``EMBER_LAZY_TIER`` asks for (NOTE [compiler tiers]); ``numba`` without
    numba is ``numpy``."""
    name = os.environ.get("EMBER_LAZY_TIER", "numba")
    if name not in TIERS:
        raise ValueError(f"EMBER_LAZY_TIER must be one of {', '.join(TIERS)}, got {name!r}")
    if name == "numba" and not numba_available():
        return "numpy"
    return name


def optimize(gm: GraphModule, tier_name: str) -> GraphModule:
    """Run the passes a tier wants over a lowered graph (edits it; returns it)."""
    graph = gm.graph
    graph = run_pass(graph, eliminate_dead_code)
    graph = run_pass(graph, eliminate_common_subexpressions)
    graph = run_pass(graph, fold_constants)
    if tier_name == "numba":
        graph = run_pass(graph, group_fusions)
    graph = run_pass(graph, reuse_inputs_in_place)
    if tier_name == "interpreter":
        graph = run_pass(graph, update_in_place)
    else:  # direct NumPy calls are written in place by buffer reuse
        graph = run_pass(graph, update_in_place_but_direct)
    if tier_name != "interpreter":
        graph = run_pass(graph, reuse_buffers)
    graph = run_pass(graph, eliminate_dead_code)
    gm.recompile()
    return gm


def compile_lowered(gm: GraphModule, tier_name: str) -> tuple[Callable[..., Any], str]:
    """The optimized graph's function (of its placeholders' values, returning the output)
    and its source (the fx code, for the interpreter tier)."""
    optimize(gm, tier_name)
    if tier_name == "interpreter":
        return compile_interpreter(gm), gm.code
    return compile_numpy(gm)
