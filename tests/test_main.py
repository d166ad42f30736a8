"""``python -m ember``: the digits demo trains both models, reports them and traces one
training step; plus the benchmark smoke run, line counts and the docs' examples."""

from __future__ import annotations

import doctest
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ember
from ember.demo import cli, data, models, modes, options, trace, train

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def split() -> data.Split:
    return data.split_digits()


def test_quick_demo_reports_models_and_traced_ops() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ember", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "256 train / 360 test images" in out
    assert "mlp: Flatten > Linear(64, 128)" in out and "cnn: Conv2d(1, 8, 3x3)" in out
    assert "eager: 17,226 params, SGD(" in out and "lazy: 1,898 params, Adam(" in out
    assert "s/epoch" in out and "test acc" in out
    assert "\r" not in out  # not a terminal: one line per epoch, no redraws
    assert out.count("epoch 1/1 [############] 8/8") == 6  # 2 models x 3 modes
    wide = [line for line in out.splitlines() if len(line) > cli.WIDTH]
    assert not wide, f"lines wider than {cli.WIDTH} columns: {wide}"
    assert "Modes: eager, lazy, compiled." in out
    # the same seed and data give the same loss and accuracy eagerly, lazily and compiled
    for model in ("mlp", "cnn"):
        eager = re.search(rf"{model}  eager +epoch 1/1 \S+ 8/8 (loss \S+  acc +\S+)", out)
        lazy = re.search(rf"{model}  lazy +epoch 1/1 \S+ 8/8 (loss \S+  acc +\S+)", out)
        comp = re.search(rf"{model}  compiled +epoch 1/1 \S+ 8/8 (loss \S+  acc +\S+)", out)
        assert eager and lazy and comp and eager[1] == lazy[1] == comp[1], out
    assert re.search(r"Lazy device: [\d,]+ ops recorded, \d+ graphs run", out)
    for op in (
        "aten.addmm.default",
        "aten.mm.default",
        "aten.convolution.default",
        "aten.convolution_backward.default",
        "aten.max_pool2d_with_indices.default",
        "aten.nll_loss_backward.default",
        "aten.add_.Tensor",
        "aten.addcdiv_.default",
    ):
        assert re.search(rf"eager +{re.escape(op)} ", out), f"{op} missing from the trace:\n{out}"
        if op != "aten.add_.Tensor":  # (Adam's step counter is a cpu tensor, as PyTorch's)
            # lazily, an in-place op reaches the Python key as its functional op
            # (NOTE [functionalize])
            lazy_op = op.replace("_.", ".")
            assert re.search(rf"lazy +{re.escape(lazy_op)} .* Lazy\n", out), lazy_op
            if lazy_op != op:
                assert not re.search(rf"lazy +{re.escape(op)} ", out), op
    assert re.search(r"\n  1 Linear +t, addmm\n", out) and re.search(
        r"\n  0 Conv2d +convolution\n", out
    )


def test_mlp_reaches_95_percent_on_the_test_set(split: data.Split) -> None:
    """The default MLP recipe, trained in-process as ``python -m ember`` trains it."""
    recipe = models.RECIPES["mlp"]
    ember.manual_seed(0)
    model = recipe.build()
    result = train.train(
        "mlp",
        model,
        recipe.optimizer(model.parameters()),
        split,
        epochs=recipe.epochs,
        batch_size=recipe.batch_size,
        seed=0,
    )
    assert len(result.epoch_seconds) == recipe.epochs and result.params == 17226
    assert result.accuracy >= 0.95


def _tiny_mlp() -> tuple[ember.nn.Module, ember.optim.Optimizer]:
    ember.manual_seed(1)
    m = models.mlp()
    return m, ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)


def test_trace_counts_each_phase_and_changes_nothing(split: data.Split) -> None:
    x, y = split.train_x[:16], split.train_y[:16]
    traced, opt = _tiny_mlp()
    first = trace.trace_step(traced, opt, x, y)
    t = trace.trace_step(traced, opt, x, y)
    plain, plain_opt = _tiny_mlp()
    for _ in range(2):
        train.train_step(plain, ember.nn.CrossEntropyLoss(), plain_opt, x, y)
    for a, b in zip(traced.parameters(), plain.parameters(), strict=True):
        assert a.tolist() == b.tolist()  # the fallback only logs: the steps compute the same
    sgd = ("optimizer", "optimizer (SGD)")
    assert first.calls[(*sgd, "aten.clone.default", "CPU")] == 6  # momentum buffers start
    calls = {(phase, where, op): n for (phase, where, op, _), n in t.calls.items()}
    assert calls[("forward", "1 Linear", "aten.addmm.default")] == 1
    assert calls[("forward", "2 ReLU", "aten.relu.default")] == 1
    assert calls[("forward", "loss", "aten._log_softmax.default")] == 1
    # 3 layers x dW, and dx for the 2 upper layers: the input batch needs no gradient
    assert calls[("backward", "backward", "aten.mm.default")] == 5
    assert calls[(*sgd, "aten.mul_.Tensor")] == 6  # then each step scales them
    assert calls[(*sgd, "aten.add_.Tensor")] == 12  # adds the grad, updates the param
    assert {kernel for *_, kernel in t.calls} == {"CPU"}
    # 11 ops, and a detach of each saved output (relu twice, log_softmax), as PyTorch saves
    assert calls[("forward", "2 ReLU", "aten.detach.default")] == 1
    assert t.totals()["forward"] == 14
    # the fallback is gone afterwards: ops no longer reach the trace
    before = sum(t.calls.values())
    traced(x)
    assert sum(t.calls.values()) == before
    table = trace.op_table([t])
    assert table[0].split() == ["mode", "op", "fwd", "bwd", "opt", "kernel"]
    # 18 update ops, and Optimizer.step's profiler range (its two ops), as PyTorch's
    assert calls[(*sgd, "profiler._record_function_enter_new.default")] == 1
    assert table[-1].split() == ["eager", "total", "14", str(t.totals()["backward"]), "20"]


def test_progress_redraws_on_a_terminal_only() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, log = Tty(), io.StringIO()
    for out in (tty, log):
        bar = train.Progress("mlp", 2, 10, 4, out)
        for step in range(1, 5):
            bar.update(step, 0.5)
        bar.finish("acc 90%")
    assert tty.getvalue().count("\r") == 5 and tty.getvalue().endswith("4/4 acc 90%\n")
    assert log.getvalue() == "mlp  epoch  2/10 [############] 4/4 acc 90%\n"


def test_a_closed_pipe_ends_the_demo_quietly(tmp_path: Path) -> None:
    """``python -m ember | head``: no BrokenPipeError traceback; the pipeline's status is
    head's (the demo ends on SIGPIPE, as other command-line tools do)."""
    errors = tmp_path / "stderr.txt"
    proc = subprocess.run(
        ["bash", "-c", f"'{sys.executable}' -m ember --quick 2>'{errors}' | head -n 2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 2
    assert errors.read_text() == ""


def test_readme_shows_the_demo_table_as_printed() -> None:
    """The README's sample table has the demo's header, rule and row layout."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head, rule, *_ = cli.results_table([])
    assert f"\n{head}\n{rule}\n" in readme
    table = readme.split(f"\n{head}\n{rule}\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(table) == len(models.RECIPES) * len(modes.MODES), table
    for line in table:
        model, mode = line.split()[:2]
        assert model in models.RECIPES and mode in modes.MODES, line
        row = cli.results_table([train.Result(model, mode, 17226, 0.978, [0.03])])[2]
        assert len(line) == len(row), line
        assert re.sub(r"[\d.,%]+", "N", line).split() == re.sub(r"[\d.,%]+", "N", row).split()


@pytest.mark.parametrize("option", ["--plot", "--graph"])
def test_pictures_are_drawn(option: str, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    pytest.importorskip("networkx", reason="the plot extra (networkx) is not installed")
    path = tmp_path / "picture.png"
    assert cli.main(["--quick", "--model", "mlp", option, str(path)]) == 0
    data_ = path.read_bytes()
    assert data_.startswith(b"\x89PNG") and len(data_) > 10_000


def test_step_graph_files_every_op_under_a_phase(split: data.Split) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    from ember.demo import pictures
    from ember.lazy import debug

    model, opt = _tiny_mlp()
    tensors, phase = pictures._phases(model, opt, split.train_x[:8], split.train_y[:8])
    found = debug.lowered(tensors)
    assert found is not None
    gm, recorded = found
    kinds = [
        pictures._phase_of(n, recorded, phase) for n in gm.graph.nodes if n.op == "call_function"
    ]
    names = {
        pictures._label(n): pictures._phase_of(n, recorded, phase)
        for n in gm.graph.nodes
        if n.op == "call_function"
    }
    assert names["addmm"] == "forward" and names["threshold_backward"] == "backward"
    assert {"forward", "backward", "optimizer"} <= set(kinds)
    ember.lazy.mark_step()


def test_options_pick_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--quick", "--model", "mlp", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "mlp: Flatten" in out and "cnn:" not in out and "aten.convolution" not in out
    with pytest.raises(SystemExit):
        cli.parse(["--epochs", "0"])
    assert cli.main(["--quick", "--model", "mlp", "--mode", "compiled,eager"]) == 0
    out = capsys.readouterr().out
    assert "Modes: compiled, eager." in out and "lazy" not in out.split("Results")[1]
    rows = out.split("Results")[1].splitlines()[3:5]
    assert [r.split()[:2] for r in rows] == [["mlp", "compiled"], ["mlp", "eager"]]
    for bad in (["--mode", "eager,fast"], ["--mode", ""], ["--mode", "eager", "--graph", "g.png"]):
        with pytest.raises(SystemExit):
            cli.parse(bad)


def test_modes_are_eager_lazy_and_compiled() -> None:
    assert list(modes.MODES) == ["eager", "lazy", "compiled"] and modes.PLANNED == ()
    assert options.MODE_NAMES == tuple(modes.MODES)  # the --help text names them


def test_help_answers_before_the_library_loads() -> None:
    """NOTE [help before import]: the help is printed with none of ember's core, nor NumPy,
    imported (``-X importtime`` lists every module a run imports)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ember", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: python -m ember") and "--mode MODE" in proc.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    assert "ember.demo.options" in loaded
    assert not {"numpy", "ember.ops", "ember._tensor", "ember.demo.cli"} & loaded
    # -m ember without --help, and --help given to another module, load the library as usual
    other = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ember.utils.safetensors", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "ember._tensor" in {
        line.rsplit("|", 1)[-1].strip() for line in other.stderr.splitlines()
    }


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


@pytest.mark.parametrize(
    "doc",
    [
        "README.md",
        "docs/index.md",
        "docs/extending.md",
        "docs/lazy.md",
        "docs/aot.md",
        "docs/linalg.md",
        "docs/fidelity.md",
        "docs/interop.md",
        "docs/amp.md",
    ],
)
def test_doc_examples_run(doc: str) -> None:
    """The ``>>>`` examples of the README and the guide print what they say."""
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
