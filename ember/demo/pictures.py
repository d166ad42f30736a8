"""The demo's pictures: loss curves and times per epoch (``--plot``), and one training step's
lazy graph (``--graph``), drawn with matplotlib and networkx (the ``plot`` extra).

NOTE [step graph picture]
The step runs on the lazy device in three phases, and each recorded node is filed under the
first phase whose tensors reach it: the loss (forward), the parameters' gradients
(backward), then everything the optimizer's update adds. The picture is the ``ember.fx``
graph a sync of the step compiles (``ember.lazy.debug.lowered``), each op coloured by the
phase of the node it comes from, and a box around each fusion group the numba tier runs as
one loop (``ember.compiler.fusion.find_groups``); inputs and constants are left out. Ops
stand in columns as late as their consumers allow, so data flows left to right and a
group's members stand together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import ember
from ember import nn
from ember._tensor import Tensor
from ember.compiler.fusion import find_groups
from ember.demo.modes import MODES
from ember.demo.train import Result
from ember.lazy import debug
from ember.optim.optimizer import Optimizer

COLOURS = {
    "forward": "#4c72b0",
    "backward": "#dd8452",
    "optimizer": "#55a868",
}
MODE_STYLES = {"eager": "-", "lazy": "--", "compiled": ":"}
MODE_MARKERS = {"eager": "", "lazy": "o", "compiled": "s"}


def _pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend, or a clear error naming the fix."""
    try:  # optional dependency, loaded when a picture is drawn
        import matplotlib
    except ImportError:
        raise ModuleNotFoundError(
            "the demo's pictures need matplotlib (and networkx for --graph): "
            "pip install 'ember[plot]'"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after choosing the backend, as matplotlib asks

    return plt


def plot_training(results: Sequence[Result], path: str) -> None:
    """Draw each model's loss per epoch in every mode on shared axes, and the seconds per
    epoch as bars, into ``path`` (its suffix picks the format)."""
    plt = _pyplot()
    fig, (curves, bars) = plt.subplots(1, 2, figsize=(10, 4), width_ratios=(3, 2))
    models = list(dict.fromkeys(r.model for r in results))
    modes = list(dict.fromkeys(r.mode for r in results))
    colours = dict(zip(models, ("#4c72b0", "#c44e52", "#8172b3"), strict=False))
    for r in results:
        epochs = range(1, len(r.epoch_losses) + 1)
        curves.plot(
            epochs,
            r.epoch_losses,
            linestyle=MODE_STYLES.get(r.mode, "-."),
            color=colours[r.model],
            linewidth=2.5 if r.mode == "eager" else 1.2,
            marker=MODE_MARKERS.get(r.mode, "x"),
            markersize=4,
            markevery=max(len(r.epoch_losses) // 10, 1),
            label=f"{r.model} {r.mode}",
        )
    curves.set(
        xlabel="epoch",
        ylabel="mean training loss",
        title="Loss per epoch",
    )
    curves.xaxis.get_major_locator().set_params(integer=True)
    curves.set_yscale("log")
    curves.legend(frameon=False)
    width = 0.8 / max(len(modes), 1)
    for k, mode in enumerate(modes):
        xs, ys = [], []
        for i, model in enumerate(models):
            for r in results:
                if (r.model, r.mode) == (model, mode):
                    xs.append(i + (k - (len(modes) - 1) / 2) * width)
                    ys.append(r.seconds_per_epoch)
        bars.bar(xs, ys, width, label=mode, color=f"C{k}")
    bars.set_xticks(range(len(models)), models)
    bars.set(ylabel="seconds per epoch", title="Time per epoch (training steps)")
    bars.legend(frameon=False, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _phases(model: nn.Module, opt: Optimizer, x: Tensor, y: Tensor) -> tuple[list[Tensor], dict]:
    """Run one lazy training step in its three phases (nothing computes); returns the
    tensors its sync computes and each recorded node's phase (NOTE [step graph picture])."""
    how = MODES["lazy"]
    run = how(model)
    ember.lazy.mark_step()  # what earlier steps left pending is not this step's
    params = [p for p in model.parameters() if p.requires_grad]
    loss = nn.CrossEntropyLoss()(run(x), how.move(y))
    phase: dict[int, str] = {}

    def file(tensors: list[Tensor], name: str) -> None:
        for node in debug._graph(tensors):
            phase.setdefault(id(node), "input" if node.kind == "data" else name)

    file([loss], "forward")
    opt.zero_grad()
    loss.backward()
    file([p.grad for p in params if p.grad is not None], "backward")
    opt.step()
    state = [v for s in opt.state.values() for v in s.values() if isinstance(v, Tensor)]
    updated = [*params, *(t for t in state if t.device.type == "lazy")]
    file(updated, "optimizer")
    return updated, phase


def draw_step_graph(model: nn.Module, opt: Optimizer, x: Tensor, y: Tensor, path: str) -> str:
    """Run one training step of ``model`` on the lazy device and draw the graph its sync
    compiles into ``path`` (NOTE [step graph picture]); returns a one-line summary. The
    step is a real one: the model and optimizer are updated."""
    plt = _pyplot()
    try:  # optional dependency, loaded when a picture is drawn
        import networkx as nx
    except ImportError:
        raise ModuleNotFoundError(
            "--graph needs networkx (and matplotlib): pip install 'ember[plot]'"
        ) from None
    from matplotlib.patches import Rectangle  # optional dependency, as above

    tensors, phase = _phases(model, opt, x, y)
    found = debug.lowered(tensors)
    if found is None:
        raise RuntimeError("draw_step_graph: the step recorded nothing to compute")
    gm, recorded = found
    nodes = [n for n in gm.graph.nodes if n.op != "output"]
    groups = find_groups(list(gm.graph.nodes))
    drawn = [n for n in nodes if n.op not in ("placeholder", "get_attr")]  # ops only
    g = nx.DiGraph()
    for n in drawn:
        g.add_node(n, kind=_phase_of(n, recorded, phase))
    for n in drawn:
        g.add_edges_from((a, n) for a in n.all_input_nodes if a in g)
    pos = _layout(g, groups, nx)
    rows = max(-y for _, y in pos.values()) + 1
    columns = max(x for x, _ in pos.values()) + 1
    fig, ax = plt.subplots(figsize=(min(3 + columns * 0.75, 40), min(2.5 + rows * 0.45, 30)))
    nx.draw_networkx_edges(g, pos, ax=ax, alpha=0.3, arrowsize=6, width=0.6, node_size=80)
    for kind, colour in COLOURS.items():
        members = [n for n in g if g.nodes[n]["kind"] == kind]
        if members:
            nx.draw_networkx_nodes(
                g, pos, nodelist=members, node_color=colour, node_size=80, ax=ax, label=kind
            )
    for n, (px, py) in pos.items():
        ax.annotate(
            _label(n), (px, py), xytext=(0, 5), textcoords="offset points", fontsize=6,
            ha="center", va="bottom", rotation=20,
        )  # fmt: skip
    for group in groups:
        xs = [pos[n][0] for n in group]
        ys = [pos[n][1] for n in group]
        pad = 0.35
        ax.add_patch(
            Rectangle(
                (min(xs) - pad, min(ys) - pad),
                max(xs) - min(xs) + 2 * pad,
                max(ys) - min(ys) + 2 * pad,
                fill=False,
                edgecolor="#8172b3",
                linewidth=1.2,
                linestyle="--",
            )
        )
    counts = {k: sum(1 for n in g if g.nodes[n]["kind"] == k) for k in COLOURS}
    summary = (
        f"{len(g):,} ops ({counts['forward']:,} forward, {counts['backward']:,} backward, "
        f"{counts['optimizer']:,} optimizer), {len(groups):,} fused groups"
    )
    ax.set_title(
        f"One lazy training step, as compiled: {summary}\n(dashed boxes: fused groups; "
        "inputs and constants not drawn; data flows left to right)"
    )
    ax.legend(loc="upper left", frameon=False, markerscale=1.5)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    ember.lazy.mark_step()  # the step's values: the model trains on as if undrawn
    return summary


def _layout(g: Any, groups: list[list[Any]], nx: Any) -> dict[Any, tuple[float, float]]:
    """Positions: a column per op, as late as its consumers allow (a node just before its
    first consumer, so a fused group's members stand together); rows from the top, a band
    of rows per fused group first, then the other ops of each column."""
    height: dict[Any, int] = {}
    for n in reversed(list(nx.topological_sort(g))):
        height[n] = max((height[s] + 1 for s in g.successors(n)), default=0)
    top = max(height.values(), default=0)
    column = {n: top - h for n, h in height.items()}
    row: dict[Any, int] = {}
    band = 0
    for group in groups:
        taken: Counter[int] = Counter()
        for n in group:
            row[n] = band + taken[column[n]]
            taken[column[n]] += 1
        band += max(taken.values())
    free: Counter[int] = Counter()
    for n in g:
        if n not in row:
            row[n] = band + free[column[n]]
            free[column[n]] += 1
    return {n: (float(column[n]), -float(row[n])) for n in g}


def _phase_of(n: Any, recorded: dict[Any, int], phase: dict[int, str]) -> str:
    """The phase of the recorded node an op comes from; a multi-output op (whose values
    are its ``getitem`` nodes) takes its first value's."""
    for m in (n, *n.users):
        if m in recorded:
            return phase.get(recorded[m], "optimizer")
    return "optimizer"


def _label(n: Any) -> str:
    """``addmm``, ``threshold_backward``, ``fused`` : a node's op, short."""
    name = getattr(n.target, "__name__", str(n.target))
    return name.split(".")[0]
