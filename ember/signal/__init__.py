"""``torch.signal``: window functions (``ember.signal.windows``).

>>> ember.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""

from __future__ import annotations

from ember.signal import windows

__all__ = ["windows"]
