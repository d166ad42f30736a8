"""The op catalogue: every aten op ember has, declared once by its schema, by family."""

from ember.ops.native import pointwise  # noqa: F401
