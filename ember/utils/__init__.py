"""Utilities that mirror ``torch.utils``: ``ember.utils.data`` (datasets and loaders)."""

from ember.utils import _mode_utils, _python_dispatch, _pytree, hooks, weak  # noqa: E402


def __getattr__(name: str) -> object:
    """``ember.utils.checkpoint``, loaded on first use (it needs autograd, which loads after
    this package)."""
    if name == "checkpoint":
        import importlib  # a function-local import: loaded on first use, as the docstring says

        return importlib.import_module("ember.utils.checkpoint")
    raise AttributeError(f"module 'ember.utils' has no attribute {name!r}")
