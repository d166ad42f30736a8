"""Text layout shared by the demo's report."""

from __future__ import annotations

from collections.abc import Sequence


def join_wrapped(parts: Sequence[str], sep: str, width: int) -> list[str]:
    """Join ``parts`` with ``sep`` (which ends in a space) into lines of at most ``width``
    characters, breaking only at those spaces (a longer part gets a line of its own).

    >>> from ember.demo.text import join_wrapped
    >>> join_wrapped(["mm x6", "t x9", "where.self x2"], ", ", 12)
    ['mm x6, t x9,', 'where.self x2']
    """
    pieces = [p + sep.rstrip() for p in parts[:-1]] + list(parts[-1:])
    lines: list[str] = []
    for piece in pieces:
        if lines and len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return lines
