"""DTensor's sharding rules, one file per op family; importing this package registers them."""

from ember.distributed.tensor._ops import _math, _nn, _pointwise, _reductions, _views

__all__ = ["_math", "_nn", "_pointwise", "_reductions", "_views"]
