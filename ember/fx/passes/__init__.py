"""Passes over fx graphs that PyTorch users know from ``torch.fx.passes``."""

from ember.fx.passes.shape_prop import ShapeProp, TensorMetadata

__all__ = ["ShapeProp", "TensorMetadata"]
