"""Experimental DTensor helpers, as ``torch.distributed.tensor.experimental``."""

from ember.distributed.tensor._dispatch import implicit_replication

__all__ = ["implicit_replication"]
