"""DTensor: tensors laid out over a mesh of ranks, as ``torch.distributed.tensor``.

>>> from ember.distributed.tensor import init_device_mesh, distribute_tensor, Shard
>>> mesh = init_device_mesh("cpu", (1,))  # doctest: +SKIP
>>> d = distribute_tensor(ember.ones(4, 2), mesh, [Shard(0)])  # doctest: +SKIP
>>> d.to_local().shape  # on one rank of one  # doctest: +SKIP
ember.Size([4, 2])
"""

from ember.distributed.device_mesh import DeviceMesh, init_device_mesh
from ember.distributed.tensor import _ops  # noqa: F401  (registers the sharding rules)
from ember.distributed.tensor._api import DTensor, distribute_module, distribute_tensor
from ember.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

__all__ = [
    "DTensor",
    "DeviceMesh",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_module",
    "distribute_tensor",
    "init_device_mesh",
]
