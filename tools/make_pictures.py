"""Regenerate the README's pictures from a real run of the demo.

    python tools/make_pictures.py        # writes docs/images/training.png, step-graph.png

It runs ``python -m ember --plot ... --graph ...`` (the full demo: both models, every mode)
from the checkout's root and passes its report through, so the README's sample table can be
copied from the same run. Needs the plot extra (``pip install ".[plot]"``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"


def main() -> int:
    """Run the demo with both picture options; returns its exit status."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "ember",
        "--plot",
        str(IMAGES / "training.png"),
        "--graph",
        str(IMAGES / "step-graph.png"),
    ]
    return subprocess.run(command, cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
