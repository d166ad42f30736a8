"""``torch._lazy``'s names over ``ember.lazy``, so lazy-tensor scripts port by changing the
import: ``mark_step``, ``wait_device_ops``, ``sync_multi``, ``to_cpu``, ``get_tensor_id``,
and the ``metrics`` and ``debug`` modules.

>>> import ember._lazy
>>> x = ember.ones(3, device="lazy") * 2
>>> ember._lazy.mark_step()
>>> ember._lazy.metrics.counter_value("graphs_executed") > 0
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ember import lazy as _lazy
from ember._lazy import debug, metrics
from ember._tensor import Tensor
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = [
    "mark_step",
    "wait_device_ops",
    "sync_multi",
    "get_tensor_id",
    "to_cpu",
    "metrics",
    "debug",
]


def mark_step(device: str = "", wait: bool = False) -> None:
    """Compute every live lazy tensor with pending work in one graph (``device`` and
    ``wait`` are accepted as PyTorch's: ember has one lazy device and runs synchronously).

    >>> import ember._lazy
    >>> y = ember.ones(2, device="lazy") + 1
    >>> ember._lazy.mark_step(); y.tolist()
    [2.0, 2.0]
    """
    _lazy.mark_step()


def wait_device_ops(devices: Iterable[str] | None = None) -> None:
    """Nothing to wait for: a sync runs to completion before it returns.

    >>> import ember._lazy
    >>> ember._lazy.wait_device_ops()
    """
    _lazy.wait_device_ops(devices)


def sync_multi(tensors: Iterable[Tensor], devices: Iterable[str] = ()) -> None:
    """Compute ``tensors`` (and nothing else) in one graph, as ``torch._lazy.sync_multi``.

    >>> import ember._lazy
    >>> a = ember.ones(2, device="lazy") * 3
    >>> ember._lazy.sync_multi([a], ["lazy"]); a.tolist()
    [3.0, 3.0]
    """
    _lazy.sync(list(tensors))


def get_tensor_id(tensor: Tensor) -> int:
    """A number that identifies ``tensor``'s lazy value while it lives.

    >>> import ember._lazy
    >>> a = ember.ones(2, device="lazy")
    >>> ember._lazy.get_tensor_id(a) == ember._lazy.get_tensor_id(a)
    True
    """
    if tensor.device.type != "lazy":
        raise RuntimeError(
            f"get_tensor_id: expected a lazy tensor, got one on {tensor.device.type}; "
            "move it with .to('lazy') first"
        )
    return id(tensor._edata)


def to_cpu(tensors: Any, devices: Iterable[str] | None = None) -> Any:
    """The lazy tensors of a pytree, computed in one graph and moved to the cpu.

    >>> import ember._lazy
    >>> ember._lazy.to_cpu({"a": ember.ones(1, device="lazy") * 5})
    {'a': tensor([5.])}
    """
    flat, spec = tree_flatten(tensors)
    sync_multi([t for t in flat if isinstance(t, Tensor)])
    return tree_unflatten([t.to("cpu") if isinstance(t, Tensor) else t for t in flat], spec)
