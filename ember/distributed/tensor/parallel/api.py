"""``parallelize_module``: apply tensor-parallel styles to a module's submodules by name, as
``torch.distributed.tensor.parallel.parallelize_module``."""

from __future__ import annotations

import fnmatch
from typing import Any

import ember.distributed as dist
from ember.distributed.device_mesh import init_device_mesh
from ember.distributed.tensor.parallel.style import ParallelStyle

__all__ = ["parallelize_module"]


def parallelize_module(
    module: Any, device_mesh: Any = None, parallelize_plan: Any = None, **kwargs: Any
) -> Any:
    """``module`` with ``parallelize_plan`` applied: a ``ParallelStyle`` for the module itself,
    or a dict from submodule names (``fnmatch`` wildcards per dotted part, ``"layers.*.fc1"``)
    to styles.

    >>> # parallelize_module(mlp, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
    """
    if device_mesh is None:
        device_mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    if parallelize_plan is None:
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(
            "parallelize_module: parallelize_plan must be a ParallelStyle or a dict of module "
            f"names to styles, not {type(parallelize_plan).__name__}"
        )
    names = dict(module.named_modules())
    for key, style in parallelize_plan.items():
        parts = key.split(".")
        hits = [
            n
            for n in names
            if n
            and len(n.split(".")) == len(parts)
            and all(fnmatch.fnmatchcase(a, b) for a, b in zip(n.split("."), parts, strict=True))
        ]
        if not hits:
            raise ValueError(f"parallelize_module: no submodule matches {key!r}")
        for n in hits:
            parallelize_module(names[n], device_mesh, style)
    return module
