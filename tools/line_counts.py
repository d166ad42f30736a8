"""Lines of Python per folder of ``ember/`` and ``tests/``: the line-count report.

    python tools/line_counts.py            # from the checkout's root (or anywhere)

Each folder's row counts the ``.py`` files directly in it ("own") and in its whole subtree
("total"); "code" leaves out blank lines and comment-only lines. Docstrings count as code.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOPS = ("ember", "tests")


def count(path: Path) -> tuple[int, int]:
    """(all lines, code lines) of one file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    code = sum(1 for line in lines if line.strip() and not line.lstrip().startswith("#"))
    return len(lines), code


def report(root: Path = ROOT) -> str:
    """The table as text: one row per folder, then a total per top-level folder."""
    own: dict[Path, list[int]] = defaultdict(lambda: [0, 0, 0])  # files, lines, code
    for top in TOPS:
        for f in sorted((root / top).rglob("*.py")):
            lines, code = count(f)
            row = own[f.parent.relative_to(root)]
            row[0] += 1
            row[1] += lines
            row[2] += code
    out = [f"{'folder':<36}{'files':>6}{'lines':>8}{'code':>8}{'total code':>12}"]
    for folder in sorted(own, key=lambda p: p.parts):
        subtree = sum(v[2] for k, v in own.items() if k == folder or folder in k.parents)
        files, lines, code = own[folder]
        out.append(f"{str(folder) + '/':<36}{files:>6}{lines:>8}{code:>8}{subtree:>12}")
    out.append("")
    for top in TOPS:
        rows = [v for k, v in own.items() if k.parts[:1] == (top,)]
        total = [sum(col) for col in zip(*rows, strict=True)] if rows else [0, 0, 0]
        out.append(f"{top + '/ total':<36}{total[0]:>6}{total[1]:>8}{total[2]:>8}")
    return "\n".join(out)


if __name__ == "__main__":
    print(report(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT))
