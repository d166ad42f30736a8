"""``torch._lazy.debug`` over ``ember.lazy.debug``: the graph behind lazy tensors, as text.

>>> import ember._lazy
>>> x = ember.ones(2).to("lazy")
>>> print(ember._lazy.debug.dump_ir([x.exp()], "text"))
%0 = data [2] float32
%1 = aten.exp.default(%0)
"""

from __future__ import annotations

from collections.abc import Iterable

from ember._tensor import Tensor
from ember.lazy.debug import dump_ir as _dump_ir

__all__ = ["dump_ir", "render_ir_graph"]

_FORMATS = {"text": "text", "backend": "code"}


def dump_ir(tensors: Iterable[Tensor], ir_format: str) -> str:
    """The graph behind ``tensors``: ``"text"`` (one line per recorded node) or
    ``"backend"`` (the source ember's compiler generates for it)."""
    fmt = _FORMATS.get(ir_format)
    if fmt is None:
        raise RuntimeError(
            f"dump_ir: unrecognized IR format {ir_format!r}; use 'text' or 'backend'"
        )
    return _dump_ir(tensors, fmt)


def render_ir_graph(tensors: Iterable[Tensor]) -> str:
    """The graph behind ``tensors`` in Graphviz's dot language.

    >>> import ember._lazy
    >>> ember._lazy.debug.render_ir_graph([ember.ones(1).to("lazy").exp()]).split()[0]
    'digraph'
    """
    return _dump_ir(tensors, "dot")
