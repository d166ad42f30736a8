"""``torch.utils.hooks``: the handle every ``register_*_hook`` returns.

>>> h = ember.nn.Module().register_forward_hook(lambda m, i, o: None)
>>> isinstance(h, ember.utils.hooks.RemovableHandle)
True
"""

from __future__ import annotations

import itertools
from typing import Any

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` unregisters the hook.

    >>> h = ember.nn.Module().register_forward_hook(lambda m, i, o: None); h.remove()
    """

    _next_id = itertools.count()

    def __init__(self, *hook_dicts: dict[int, Any]) -> None:
        self.id = next(RemovableHandle._next_id)
        self._dicts = hook_dicts

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()
