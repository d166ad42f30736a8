"""Utilities that mirror ``torch.utils``: ``ember.utils.data`` (datasets and loaders)."""

from ember.utils import _mode_utils, _python_dispatch, _pytree, weak  # noqa: E402
