"""``ember.version``, as ``torch.version``: the release, and no GPU toolkits (``cuda`` and
``hip`` are None, as in PyTorch's CPU build).

>>> ember.version.cuda is None, ember.version.__version__ == ember.__version__
(True, True)
"""

from __future__ import annotations

__version__ = "0.1.0"
cuda: str | None = None
hip: str | None = None
debug = False
git_version = "unknown"
