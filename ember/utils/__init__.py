"""Utilities that mirror ``torch.utils``: ``ember.utils.data`` (datasets and loaders)."""
