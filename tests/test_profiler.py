"""``ember.profiler`` and ``ember.autograd.profiler.record_function``: the events of a
profile, their grouping, self times and table, the step schedule against PyTorch's, and
the two ``profiler`` ops a range dispatches, as PyTorch's do."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from typing import Any

import pytest

import ember
from ember.profiler import ProfilerAction, profile, record_function, schedule
from tests.conftest import dispatched_ops, requires_torch, torch


@requires_torch
def test_ranges_dispatch_the_profiler_ops_as_torch() -> None:
    def body(lib: Any) -> None:
        with lib.autograd.profiler.record_function("block"):
            pass
        w = lib.nn.Parameter(lib.ones(2))
        w.grad = lib.ones(2)
        opt = lib.optim.SGD([w], lr=0.1)
        opt.zero_grad()
        w.grad = lib.ones(2)
        opt.step()

    ours = [op for op in dispatched_ops(ember, lambda: body(ember)) if "profiler" in op]
    theirs = [op for op in dispatched_ops(torch, lambda: body(torch)) if "profiler" in op]
    assert ours == theirs and len(ours) == 6


def test_events_names_counts_and_self_times() -> None:
    x = ember.ones(3)
    with profile() as prof:
        with record_function("outer"):
            y = (x * 2).sum()
            z = (y * 3) + 1
    names = Counter(e.name for e in prof.events())
    assert names == Counter({"outer": 1, "aten::mul": 2, "aten::sum": 1, "aten::add": 1})
    outer = next(e for e in prof.events() if e.name == "outer")
    children = [e for e in prof.events() if e.parent is outer]
    assert len(children) == 4
    inner = sum(e.cpu_time_total for e in children)
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - inner)
    assert all(e.self_cpu_time_total >= 0 for e in prof.events())
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::mul"].count == 2
    assert avg["aten::mul"].cpu_time == pytest.approx(avg["aten::mul"].cpu_time_total / 2)
    assert z.item() == 19.0  # the profiled ops still compute


def test_record_shapes_and_grouping_by_shape() -> None:
    with profile(record_shapes=True) as prof:
        ember.ones(2, 3).sum(0)
        ember.ones(4).sum(0)
    by_shape = prof.key_averages(group_by_input_shape=True)
    sums = sorted(str(e.input_shapes) for e in by_shape if e.key == "aten::sum")
    assert sums == ["[[2, 3], []]", "[[4], []]"]
    assert [e.count for e in prof.key_averages() if e.key == "aten::sum"] == [2]


def test_table_is_sorted_limited_and_fits_80_columns() -> None:
    x = ember.ones(8)
    with profile() as prof:
        for _ in range(3):
            x * 2
        x.exp()
    text = prof.key_averages().table(sort_by="count", row_limit=1)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [line for line in lines if line.startswith("aten::")]
    assert len(rows) == 1 and rows[0].startswith("aten::mul") and rows[0].endswith(" 3")
    assert lines[-1].startswith("Self CPU time total: ")
    with pytest.raises(ValueError, match="sort_by should be one of"):
        prof.key_averages().table(sort_by="cuda_time_total")


def test_a_training_step_profile_names_the_optimizer_range() -> None:
    model = ember.nn.Linear(4, 2)
    opt = ember.optim.Adam(model.parameters())
    with profile() as prof:
        model(ember.ones(3, 4)).sum().backward()
        opt.step()
    keys = {e.key for e in prof.key_averages()}
    assert "Optimizer.step#Adam.step" in keys
    assert {"aten::addmm", "aten::mm", "aten::addcdiv_"} <= keys
    step = next(e for e in prof.events() if e.name == "Optimizer.step#Adam.step")
    assert any(e.parent is step and e.name == "aten::addcdiv_" for e in prof.events())


@requires_torch
def test_schedule_matches_torch() -> None:
    for kw in (
        {"wait": 1, "warmup": 1, "active": 2},
        {"wait": 0, "warmup": 0, "active": 1, "repeat": 2},
        {"wait": 2, "warmup": 1, "active": 3, "repeat": 1, "skip_first": 3},
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ours = schedule(**kw)
            theirs = torch.profiler.schedule(**kw)
        assert len(caught) == (2 if kw["warmup"] == 0 else 0)  # both warn without warmup
        assert [ours(i).name for i in range(16)] == [theirs(i).name for i in range(16)], kw
    with pytest.raises(ValueError, match="active > 0"):
        schedule(wait=0, warmup=0, active=0)


def test_steps_record_only_the_active_ones_and_hand_them_on() -> None:
    ready: list[tuple[int, Counter[str]]] = []

    def on_ready(p: profile) -> None:
        ready.append((p.step_num, Counter(e.name for e in p.events() if e.name != "aten::ones")))

    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=sched, on_trace_ready=on_ready) as prof:
        for step in range(9):
            for _ in range(step + 1):  # step i runs i + 1 multiplications
                ember.ones(2) * 2
            prof.step()
    # cycles: steps 2-3 recorded (3 + 4 muls), then steps 6-7 (7 + 8)
    assert ready == [(4, Counter({"aten::mul": 7})), (8, Counter({"aten::mul": 15}))]
    assert sched(3) is ProfilerAction.RECORD_AND_SAVE


def test_decorator_and_chrome_trace(tmp_path: Any) -> None:
    @record_function("twice")
    def twice(t: Any) -> Any:
        return t * 2

    x = ember.ones(1)
    with profile() as prof:
        y = twice(x)
    assert y.item() == 2.0
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert [e["name"] for e in events] == ["twice", "aten::mul"]
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)


def test_refusals() -> None:
    with pytest.raises(ValueError, match="CPU activity only"):
        profile(activities=["cuda"])  # type: ignore[list-item]
    with profile():
        with pytest.raises(RuntimeError, match="another profile is running"):
            profile().start()
    with pytest.raises(TypeError, match="expected the handle"):
        ember.ops.profiler._record_function_exit._RecordFunction(3)


@requires_torch
@pytest.mark.parametrize("mode", ["real", "fake"])
def test_make_fx_threads_the_range_handle_through_the_graph(mode: str) -> None:
    """The exit op takes the enter op's node (as PyTorch's graph does), so the graph runs
    and, under a profiler, opens and closes the range."""
    from ember.fx.experimental.proxy_tensor import make_fx

    def body(lib: Any) -> Any:
        def f(x: Any) -> Any:
            with lib.autograd.profiler.record_function("blk"):
                return x * 2

        return f

    def exit_args(gm: Any) -> list[str]:
        return [
            str(n.args[0])
            for n in gm.graph.nodes
            if n.op == "call_function" and "record_function_exit" in str(n.target)
        ]

    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    gm = make_fx(body(ember), tracing_mode=mode)(ember.ones(2))
    tgm = torch_make_fx(body(torch), tracing_mode=mode)(torch.ones(2))
    assert exit_args(gm) == exit_args(tgm) == ["_record_function_enter_new"]
    with profile() as prof:
        out = gm(ember.ones(3))
    assert out.tolist() == [2.0, 2.0, 2.0]
    assert "blk" in [e.name for e in prof.events()]
