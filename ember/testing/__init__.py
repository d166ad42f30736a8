"""Testing utilities (mirrors ``torch.testing``)."""
