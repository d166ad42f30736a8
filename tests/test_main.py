"""``python -m ember`` runs its tour and names every op it dispatched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_tour_runs_and_logs_its_ops() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ember"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for op in ("aten::add.Tensor", "aten::mul.Tensor", "aten::div.Tensor", "aten::view",
               "aten::add_.Tensor", "aten::sum", "aten::mm", "aten::exp"):  # fmt: skip
        assert op in out, f"{op} missing from the tour's dispatch log:\n{out}"
    assert " CPU   DispatchKeySet(CPU)" in out and " Meta  DispatchKeySet(Meta)" in out
    assert "a is now [[101.0, 102.0], [103.0, 104.0]]" in out  # the view shares storage


def test_benchmarks_quick_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    """The benchmark table prints every tiny case (no timing is asserted)."""
    from benchmarks.run import main

    assert main(["--quick", "--filter", "tiny"]) == 0
    out = capsys.readouterr().out
    for case in ("a + b", "add(a, b)", "a * 2", "a.sum()", "a.view(2, 2)", "a[0]", "4x4 a @ b"):
        assert case in out
    assert "e/torch" in out and "goal" in out


def test_line_counts_report_lists_folders() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import line_counts
    finally:
        sys.path.pop(0)
    text = line_counts.report(ROOT)
    assert "ember/dispatch/" in text and "tests/ total" in text


@pytest.mark.parametrize("doc", ["README.md", "docs/index.md"])
def test_doc_examples_run(doc: str) -> None:
    """The ``>>>`` examples of the README and the guide print what they say."""
    import doctest

    import ember

    text = (ROOT / doc).read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {"ember": ember}, doc, doc, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    try:
        result = runner.run(test, clear_globs=False)
    finally:
        lib = test.globs.get("lib")
        if lib is not None:
            lib._destroy()  # the examples define demo::twice
    assert result.failed == 0, f"{result.failed} example(s) in {doc} failed (output above)"
