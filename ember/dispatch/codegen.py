"""Functions generated from schemas: the one place that turns source lines into a function.

Every hot path ember specializes per op (dispatch, overload matching, autograd recording and
its backward, foreach loops) is straight-line Python written from the op's schema. The
source of each is registered with ``linecache`` under a name saying what it is for, so
tracebacks, ``inspect`` and profilers show the generated lines, not ``<string>``.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from types import CodeType
from typing import Any

#: compiled code by (source, file name): functions generated per argument layout share the
#: source (their scopes differ), so each layout is compiled once
_CODE: dict[tuple[str, str], CodeType] = {}


def define(lines: list[str], scope: dict[str, Any], name: str, where: str) -> Callable[..., Any]:
    """Define the function ``name`` from ``lines`` in ``scope``; ``where`` names it in
    tracebacks (``<generated where>``).

    >>> from ember.dispatch.codegen import define
    >>> define(["def twice(x):", "    return 2 * x"], {}, "twice", "example")(3)
    6
    """
    src = "\n".join(lines) + "\n"
    filename = f"<generated {where}>"
    code = _CODE.get((src, filename))
    if code is None:
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        code = _CODE[src, filename] = compile(src, filename, "exec")
    exec(code, scope)  # noqa: S102 - generated from parsed schemas
    return scope[name]  # type: ignore[no-any-return]
