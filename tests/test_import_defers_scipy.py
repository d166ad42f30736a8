"""``import ember`` loads neither ``scipy.special`` nor ``scipy.linalg`` (together about as
much as the rest of ember's import): the special functions' and LDL kernels look SciPy up
when first called. Each case runs in a new interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_import_ember_does_not_load_scipy_special_or_linalg() -> None:
    got = _run(
        "import sys, ember\n"
        "print('scipy.special' in sys.modules, 'scipy.linalg' in sys.modules)\n"
        "x = ember.special.bessel_j0(ember.tensor([0.0]))\n"
        "print('scipy.special' in sys.modules, x.item())\n"
    )
    assert got == ["False", "False", "True", "1.0"]
