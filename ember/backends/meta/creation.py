"""Meta rules of the creation ops: the CPU kernels' shapes, dtypes and checks, no data.

Both come from the plans in ``ember/ops/native/creation.py`` (NOTE [creation plans]).
Factories reach these with ``device='meta'``; ``*_like``/``new_*`` ops with a meta ``self``.
Random rules draw nothing, so they leave the generator's state alone.
"""

from __future__ import annotations

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.creation import PLANS, Plan, kernel_of

Meta = DispatchKey.Meta


def _make(plan: Plan) -> Tensor:
    """A tensor with ``plan``'s shape, dtype and strides and no values."""
    return wrap_shape_only(ShapeOnlyArray(plan.shape, plan.dtype.np, plan.strides))


for _op, _plan in PLANS.items():
    impl(_op, Meta, kernel_of(_op, _plan, _make))
