"""Higher-order operators (ops that take functions), as PyTorch's ``torch._higher_order_ops``:
so far ``cond`` (``cond.py``), run eagerly."""

from ember._higher_order_ops.cond import cond

__all__ = ["cond"]
