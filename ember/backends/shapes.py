"""Moved to ``ember/ops/shapes.py`` (shape checks belong to the op catalogue); this name
stays for code written against the old path."""

from ember.ops.shapes import broadcast_shapes, wrap_dim

__all__ = ["broadcast_shapes", "wrap_dim"]
