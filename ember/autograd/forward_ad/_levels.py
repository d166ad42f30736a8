"""Dual levels and the tangents they give tensors.

# NOTE [tangents on tensors]
A tensor's tangents live in ``t.__dict__["_fw_grads"]``, a dict from dual level to tangent,
and the tensor carries the ForwardAD dispatch key while that dict is not empty, so ops on it
reach the forward-mode kernel and ops on other tensors never do. Each open level keeps weak
references to the tensors it gave a tangent, so exiting the level takes exactly those
tangents away again (PyTorch's ForwardADLevel does the same).
"""

from __future__ import annotations

import weakref
from typing import Any

from ember._tensor import Tensor
from ember.dispatch import marks
from ember.dispatch.keys import FORWARD_AD_BIT
from ember.dispatch.state import KeyGuard

#: the open levels, innermost last, each with weak references to the tensors it gave a tangent
_OPEN: list[tuple[int, list[weakref.ref[Tensor]]]] = []
#: the guard that keeps the ForwardAD key in the include set (``watch_views``)
_GUARD: list[KeyGuard] = []


def current_level() -> int:
    """The innermost open dual level, or -1 when none is open."""
    return _OPEN[-1][0] if _OPEN else -1


def enter() -> int:
    """Open a new dual level, nested in the current one, and return its index."""
    level = _OPEN[-1][0] + 1 if _OPEN else 0
    _OPEN.append((level, []))
    return level


def watch_views() -> None:
    """Send every op to the ForwardAD key until the outermost level exits: a tensor got its
    first tangent in place, so views of it taken before may be used (NOTE [views of a base
    with a tangent] in ``_kernel.py``)."""
    if _OPEN and not _GUARD:
        guard = KeyGuard(include=FORWARD_AD_BIT)
        guard.__enter__()
        _GUARD.append(guard)


def exit_(level: int | None) -> None:
    """Close the innermost level (``level``, if given, must be it): every tangent it gave a
    tensor is taken away."""
    if not _OPEN:
        raise RuntimeError("exit_dual_level: no dual level is open (use enter_dual_level first)")
    top, refs = _OPEN[-1]
    if level is not None and level != top:
        raise RuntimeError(
            f"exit_dual_level: trying to exit level {level}, but the innermost open level is "
            f"{top}; levels are exited innermost first"
        )
    _OPEN.pop()
    if not _OPEN and _GUARD:
        _GUARD.pop().__exit__()
    for ref in refs:
        t = ref()
        if t is not None:
            clear(t, top)


def is_open(level: int) -> bool:
    return any(lv == level for lv, _ in _OPEN)


def tangent(t: Any, level: int) -> Tensor | None:
    """The tangent of ``t`` at ``level``, or None."""
    d = t.__dict__.get("_fw_grads") if isinstance(t, Tensor) else None
    return d.get(level) if d else None


def set_tangent(t: Tensor, level: int, tan: Tensor) -> None:
    """Give ``t`` the tangent ``tan`` at ``level`` (NOTE [tangents on tensors])."""
    d = t.__dict__.get("_fw_grads")
    if d is None:
        d = t.__dict__["_fw_grads"] = {}
    if level not in d:
        for lv, refs in _OPEN:
            if lv == level:
                refs.append(weakref.ref(t))
                break
        else:
            raise RuntimeError(f"forward AD: dual level {level} is not open")
    d[level] = tan
    marks.mark_dual(t)


def clear(t: Tensor, level: int) -> None:
    """Take ``t``'s tangent at ``level`` away."""
    d = t.__dict__.get("_fw_grads")
    if d is None:
        return
    d.pop(level, None)
    if not d:
        del t.__dict__["_fw_grads"]
        marks.unmark_dual(t)


def top_level(x: Any, ceiling: int, found: int = -1) -> int:
    """The highest level below ``ceiling`` at which ``x`` (a tensor, or a list of them) has
    a tangent, or ``found`` if higher."""
    if isinstance(x, Tensor):
        d = x.__dict__.get("_fw_grads")
        if d:
            for lv in d:
                if found < lv < ceiling:
                    found = lv
    elif isinstance(x, (list, tuple)):
        for e in x:
            found = top_level(e, ceiling, found)
    return found


def copy_tangents(src: Tensor, dst: Tensor) -> None:
    """Give ``dst`` (an alias of ``src``: a saved output) ``src``'s tangents, as PyTorch's
    SavedVariable keeps a saved tensor's forward grad: backward formulas then run on duals
    (forward over reverse)."""
    d = src.__dict__.get("_fw_grads")
    if d:
        for level, tan in list(d.items()):
            set_tangent(dst, level, tan)
