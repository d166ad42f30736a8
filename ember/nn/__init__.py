"""Neural-network building blocks: ``Module``, ``Parameter``, containers, layers, ``init``.

>>> net = ember.nn.Sequential(ember.nn.Linear(4, 2))
>>> [name for name, _ in net.named_parameters()]
['0.weight', '0.bias']
"""

from __future__ import annotations

from ember.nn import functional, init
from ember.nn.modules import *  # noqa: F403  (Module, the containers and every layer)
from ember.nn.parameter import Parameter, UninitializedParameter

# isort: split
from ember.nn import attention, parallel, utils  # (parallel: DistributedDataParallel)
