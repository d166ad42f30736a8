"""Helpers of fx passes (``matcher_utils``: subgraph matching), as ``torch.fx.passes.utils``."""
