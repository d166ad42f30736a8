"""``torch._C._profiler``'s two traceback helpers that logging code imports
(``gather_traceback``, ``symbolize_tracebacks``; PyTorch's ``logging_tensor.py`` uses them
to record where each logged op was called). ember has no profiler; these record the Python
stack, which is what PyTorch's give for Python frames (there are no C++ frames).

>>> from ember._C._profiler import gather_traceback, symbolize_tracebacks
>>> frames = symbolize_tracebacks([gather_traceback(python=True, script=True, cpp=False)])[0]
>>> sorted(frames[-1])
['filename', 'line', 'name']
"""

from __future__ import annotations

import traceback
from typing import Any

__all__ = ["gather_traceback", "symbolize_tracebacks"]


class CapturedTraceback:
    """The Python frames of one stack, outermost first (PyTorch's opaque traceback)."""

    __slots__ = ("frames",)

    def __init__(self, frames: list[traceback.FrameSummary]) -> None:
        self.frames = frames


def gather_traceback(python: bool = True, script: bool = True, cpp: bool = False) -> Any:
    """The caller's stack (its Python frames when ``python``; ``script`` and ``cpp`` add
    nothing: ember has neither TorchScript nor C++ frames)."""
    frames = traceback.extract_stack()[:-1] if python else []
    return CapturedTraceback(list(frames))


def symbolize_tracebacks(to_symbolize: list[Any]) -> list[list[dict[str, Any]]]:
    """Each traceback as PyTorch symbolizes it: per frame ``{"filename", "line", "name"}``."""
    return [
        [{"filename": f.filename, "line": f.lineno, "name": f.name} for f in tb.frames]
        for tb in to_symbolize
    ]
