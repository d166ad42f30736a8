"""Higher-order operators (ops that take functions), as PyTorch's ``torch._higher_order_ops``:
``cond`` (``cond.py``) and ``while_loop`` (``while_loop.py``), run eagerly, on the
``HigherOrderOperator`` class (``base.py``)."""

from ember._higher_order_ops.base import HigherOrderOperator
from ember._higher_order_ops.cond import cond
from ember._higher_order_ops.while_loop import while_loop

__all__ = ["HigherOrderOperator", "cond", "while_loop"]
