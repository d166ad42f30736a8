"""End-to-end scripts written as a PyTorch user writes them (``tests/scripts/``): each runs
with PyTorch, then with ember after its imports are changed (``import torch`` becomes
``import ember as torch``, ``from torch.x import y`` becomes ``from ember.x import y``),
and the numbers they print must agree."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import requires_torch

SCRIPTS = sorted((Path(__file__).parent / "scripts").glob("*.py"))
ROOT = Path(__file__).resolve().parent.parent
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def to_ember(source: str) -> str:
    """The script with its imports changed, as a user ports it; nothing else changes."""
    out = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if re.match(r"import torch(\s|$)", stripped):
            line = indent + stripped.replace("import torch", "import ember as torch", 1)
        elif re.match(r"import torch\.", stripped):
            line = indent + "import ember." + stripped[len("import torch.") :]
        elif re.match(r"from torch(\.|\s)", stripped):
            line = indent + "from ember" + stripped[len("from torch") :]
        out.append(line)
    return "\n".join(out) + "\n"


def run(source: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_imports_are_rewritten_as_a_user_would() -> None:
    src = (
        "import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader\n"
        "  import torch\n"
    )
    assert to_ember(src) == (
        "import ember as torch\nimport ember.nn as nn\nfrom ember.utils.data import DataLoader\n"
        "  import ember as torch\n"
    )


@requires_torch
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_prints_the_same_numbers(script: Path) -> None:
    source = script.read_text(encoding="utf-8")
    expected, actual = run(source), run(to_ember(source))
    e_lines, a_lines = expected.splitlines(), actual.splitlines()
    assert len(a_lines) == len(e_lines), f"ember printed:\n{actual}\nPyTorch printed:\n{expected}"
    for e, a in zip(e_lines, a_lines, strict=True):
        assert _NUMBER.sub("#", a) == _NUMBER.sub("#", e), f"{a!r} != {e!r}"
        for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(e), strict=True):
            assert float(x) == pytest.approx(float(y), rel=1e-3, abs=1e-4), f"{a!r} != {e!r}"
