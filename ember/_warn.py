"""Warnings attributed to the user's line, however deep in ember they are raised."""

from __future__ import annotations

import os
import sys
import warnings

#: ember's own files, and the code it generates (``ember/dispatch/codegen.py``)
_INSIDE = (os.path.dirname(os.path.abspath(__file__)) + os.sep, "<generated ")


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` at the first frame outside the ember package (PyTorch's C++
    warnings point at the Python line that called in; a dispatch stack has no fixed depth)."""
    level = 2  # warn_user's caller
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_INSIDE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, category, stacklevel=level)
