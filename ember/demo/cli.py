"""``python -m ember``: the options, the order of the run and the report."""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence

import ember
from ember import nn
from ember.demo import data, models, pictures, trace
from ember.demo.modes import MODES, PLANNED
from ember.demo.options import QUICK_TRAIN, parser
from ember.demo.parallel import start
from ember.demo.text import join_wrapped
from ember.demo.train import Result, train
from ember.optim.optimizer import Optimizer

WIDTH = 80  # every line of the report fits a terminal of this many columns


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line (``python -m ember --help`` lists it)."""
    p = parser()
    args = p.parse_args(argv)
    if args.epochs is not None and args.epochs < 1:
        p.error(f"--epochs must be at least 1, got {args.epochs}")
    args.modes = [m.strip() for m in args.mode.split(",") if m.strip()]
    unknown = [m for m in args.modes if m not in MODES]
    if unknown or not args.modes:
        p.error(f"--mode takes modes among {', '.join(MODES)}, got {args.mode!r}")
    if args.graph and "lazy" not in args.modes:
        p.error("--graph draws a lazy training step: include lazy in --mode")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo and print its report; returns the exit status."""
    args = parse(argv)
    job = start()  # a job of several processes: DistributedDataParallel, rank 0 prints
    out = sys.stdout
    split = data.split_digits(QUICK_TRAIN if args.quick else None)
    names = ["mlp", "cnn"] if args.model == "both" else [args.model]
    n_train, n_test = len(split.train_y), len(split.test_y)
    print(
        _fill(
            f"ember {ember.__version__}: PyTorch's API and dispatcher on NumPy, training on the "
            f"UCI hand-written digits ({n_train:,} train / {n_test:,} test images, 8x8, "
            "scaled to [0, 1]).",
            WIDTH,
        )
    )
    planned = f" (the {' and '.join(PLANNED)} mode is not built yet)" if PLANNED else ""
    print(f"Modes: {', '.join(args.modes)}{planned}.")
    if job is not None:
        text = (
            f"Data parallel: {job.world} processes (MPI), each model wrapped in "
            "DistributedDataParallel, each process training on its share of every batch."
        )
        print(_fill(text, WIDTH))

    results: list[Result] = []
    trained: dict[tuple[str, str], tuple[nn.Module, Optimizer, int]] = {}
    for name in names:
        recipe = models.RECIPES[name]
        epochs = args.epochs or (1 if args.quick else recipe.epochs)
        for mode in args.modes:
            ember.manual_seed(args.seed)
            model = recipe.build()
            opt = recipe.optimizer(model.parameters())
            layers = join_wrapped(models.describe(model), " > ", WIDTH - 5)
            print(f"\n{name}: " + "\n     ".join(layers))
            print(
                f"{mode}: {models.count_params(model):,} params, {_optimizer(opt)}, "
                f"batch {recipe.batch_size}, {epochs} epoch{'s' * (epochs > 1)}"
            )
            result = train(
                name,
                model,
                opt,
                split,
                epochs=epochs,
                batch_size=recipe.batch_size,
                seed=args.seed,
                mode=mode,
                out=out,
                parallel=job,
            )
            results.append(result)
            trained[(name, mode)] = (model, opt, recipe.batch_size)

    print(f"\nResults (accuracy on the {n_test:,} test images; time of the training steps)")
    print("\n".join(results_table(results)))
    if "lazy" in args.modes:
        print("\n" + _lazy_summary())
    if args.plot:
        pictures.plot_training(results, args.plot)
        print(f"\nLoss curves and times per epoch: {args.plot}")

    for name in names:
        traces = []
        for mode in args.modes:
            model, opt, batch_size = trained[(name, mode)]
            x, y = split.train_x[:batch_size], split.train_y[:batch_size]
            traces.append(trace.trace_step(model, opt, x, y, mode))
        _print_traces(name, batch_size, traces)
    if args.graph:
        name = names[0]
        model, opt, batch_size = trained[(name, "lazy")]
        x, y = split.train_x[:batch_size], split.train_y[:batch_size]
        drawn = pictures.draw_step_graph(model, opt, x, y, args.graph)
        print(f"\nOne lazy training step of {name}: {args.graph}\n{drawn}")
    print("\nNext: docs/index.md (the guide) and docs/adding-ops.md (adding an op).")
    return 0


def results_table(results: Sequence[Result]) -> list[str]:
    """The report's table: one row per model and mode.

    >>> from ember.demo.cli import results_table
    >>> from ember.demo.train import Result
    >>> print("\\n".join(results_table([Result("mlp", "eager", 17226, 0.978, [0.03])])))
    model  mode      params  epochs  s/epoch  test acc
    --------------------------------------------------
    mlp    eager     17,226       1    0.030     97.8%
    """
    head = f"{'model':<6} {'mode':<8} {'params':>7} {'epochs':>7} {'s/epoch':>8} {'test acc':>9}"
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append(
            f"{r.model:<6} {r.mode:<8} {r.params:>7,} {len(r.epoch_seconds):>7,} "
            f"{r.seconds_per_epoch:>8.3f} {r.accuracy:>9.1%}"
        )
    return lines


def _print_traces(name: str, batch_size: int, traces: list[trace.Trace]) -> None:
    """What each layer did in the first mode's step, then the op counts of every mode."""
    text = (
        f"One more training step of {name} (a batch of {batch_size}), traced: each aten op "
        "that reached a boxed fallback on the Python key (ember.library), which logs it and "
        f"redispatches below. What each layer did ({traces[0].mode}), then the ops counted:"
    )
    print("\n" + _fill(text, WIDTH))
    print("\n".join("  " + line for line in trace.layer_table(traces[0])))
    print()
    print("\n".join("  " + line for line in trace.op_table(traces)))


def _fill(text: str, width: int) -> str:
    """``text`` wrapped to ``width`` columns, breaking only at spaces."""
    return textwrap.fill(text, width, break_on_hyphens=False)


def _lazy_summary() -> str:
    """What the lazy device did over the whole run (``ember.lazy.metrics``)."""
    m = ember.lazy.metrics
    count = m.counter_value
    fallbacks = sum(count(n) for n in m.counter_names() if n.startswith("cpu_fallback::"))
    hits, misses = count("compile_cache_hit"), count("compile_cache_miss")
    text = (
        f"Lazy device: {count('ops_recorded'):,} ops recorded, {count('graphs_executed'):,} "
        f"graphs run ({misses:,} compiled, {hits:,} from the cache), "
        f"{count('tier::numba'):,} fused numba kernels run, {fallbacks:,} ops run on the cpu "
        "instead. On models this small lazy is slower than eager: recording an op costs more "
        "than running it."
    )
    return _fill(text, WIDTH)


def _optimizer(opt: Optimizer) -> str:
    """``SGD(lr=0.05, momentum=0.9)``: the optimizer and its settings that differ from zero."""
    group = opt.param_groups[0]
    keys = [k for k in ("lr", "momentum", "betas") if group.get(k)]
    return f"{type(opt).__name__}({', '.join(f'{k}={group[k]}' for k in keys)})"
