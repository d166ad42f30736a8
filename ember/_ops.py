"""``torch._ops``'s commonly imported names: the operator classes and the ``ops`` root.

>>> from ember._ops import HigherOrderOperator, OpOverload, ops
>>> isinstance(ops.aten.add.Tensor, OpOverload), isinstance(ops.higher_order.cond,
...     HigherOrderOperator)
(True, True)
"""

from __future__ import annotations

from ember._higher_order_ops.base import HigherOrderOperator
from ember.ops.registry import OpOverload, OpOverloadPacket, ops

__all__ = ["HigherOrderOperator", "OpOverload", "OpOverloadPacket", "ops"]
