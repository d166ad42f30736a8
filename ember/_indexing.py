"""``Tensor.__getitem__`` / ``__setitem__``: Python indices translated into aten ops."""

from __future__ import annotations
