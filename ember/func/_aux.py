"""``has_aux``: what ``grad``, ``vjp`` and ``jvp`` do with the ``(output, aux)`` pair a
function returns when asked for one."""

from __future__ import annotations

from typing import Any


def split_aux(output: Any, api: str) -> tuple[Any, Any]:
    """``output`` as the pair ``(output, aux)``; RuntimeError, naming ``api``, as PyTorch's,
    when the function returned anything else.

    >>> from ember.func._aux import split_aux
    >>> split_aux((1, "aux"), "vjp(f, *primals)")
    (1, 'aux')
    """
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return output
