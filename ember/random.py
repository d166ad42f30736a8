"""Random number generation: ``Generator``, ``manual_seed``, the default generator."""

from __future__ import annotations

__all__: list[str] = []
