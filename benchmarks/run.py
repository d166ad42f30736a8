"""ember side by side with NumPy and PyTorch, in one process, one table.

    python -m benchmarks            # full run (about a minute)
    python -m benchmarks --quick    # smoke run: fewer repeats, smaller large inputs
    python -m benchmarks --cpu      # CPU time instead of wall time (a busy machine)
    python benchmarks/run.py --filter tiny

Tiny cases (4 floats) measure the per-call overhead of the public API and the dispatcher;
their goal is at most 1.5x PyTorch. Large cases measure kernels; their goal is at most 1.1x
NumPy. Train cases time one eager training step (forward, cross-entropy, backward, SGD step
with zero_grad) of an MLP, with the same initial weights in both libraries, and one tiny
backward; their goals are relative to PyTorch. Lazy cases run on the lazy device (warm: the
graph compiled and cached): the fused chain against a hand-written numba loop, the cost of
recording one op, and the MLP steps ending with ``mark_step``; then a report of the chain's
first compile, its disk-cache start-up in a new process, and its peak memory.
Each time is the minimum over repeats of ``timeit`` loops, per call.
PyTorch, NumPy and ember each run on one thread, so the ratios compare per-op work, not
how many cores each library grabs on a shared machine.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ember

try:  # holds NumPy's BLAS to the one thread the docstring promises (it defaults to all cores)
    from threadpoolctl import threadpool_limits
except ImportError:
    threadpool_limits = None

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the bench/test extras install it; without it only NumPy is compared
    torch = None

Thunk = Callable[[], Any]
#: benchmark groups kept in their own modules (``benchmarks/<name>.py``, ``cases(quick)``)
GROUP_MODULES = (
    "compiled",
    "data",
    "optim",
    "namespaces",
    "tensorops",
    "linalg",
    "spatial",
    "compiler",
    "nn_models",
    "serialization",
    "random_streams",
    "func",
    "forward_ad",
    "sparse",
)


@dataclass
class Case:
    group: str  # "tiny", "override", "dispatch", "large", "train", "lazy" or "nn"
    name: str
    ember: Thunk
    numpy: Thunk | None
    torch: Thunk | None
    goal: tuple[str, float]  # ("torch", 1.5): ember time <= 1.5x torch's; ("us", 3): <= 3 us
    ref: Thunk | None = None  # what a goal other than torch/numpy/us is measured against


def tiny_cases() -> list[Case]:
    vals = [1.0, 2.0, 3.0, 4.0]
    ea, eb = ember.tensor(vals), ember.tensor(vals[::-1])
    na, nb = np.array(vals, np.float32), np.array(vals[::-1], np.float32)
    e4, n4 = ember.tensor(np.eye(4, dtype=np.float32) + 1), np.eye(4, dtype=np.float32) + 1
    t = torch
    if t is not None:
        ta, tb, t4 = t.tensor(vals), t.tensor(vals[::-1]), t.from_numpy(n4.copy())
    goal = ("torch", 1.5)

    def case(name: str, e: Thunk, n: Thunk, tt: Callable[[], Thunk]) -> Case:
        return Case("tiny", name, e, n, tt() if t is not None else None, goal)

    return [
        case("a + b", lambda: ea + eb, lambda: na + nb, lambda: lambda: ta + tb),
        case("add(a, b)", lambda: ember.add(ea, eb), lambda: np.add(na, nb),
             lambda: lambda: t.add(ta, tb)),
        case("a * 2", lambda: ea * 2, lambda: na * 2, lambda: lambda: ta * 2),
        case("a.sum()", lambda: ea.sum(), lambda: na.sum(), lambda: lambda: ta.sum()),
        case("a.view(2, 2)", lambda: ea.view(2, 2), lambda: na.reshape(2, 2),
             lambda: lambda: ta.view(2, 2)),
        case("a[0]", lambda: ea[0], lambda: na[0], lambda: lambda: ta[0]),
        case("4x4 a @ b", lambda: e4 @ e4, lambda: n4 @ n4, lambda: lambda: t4 @ t4),
    ]  # fmt: skip


def _override_thunks(lib: Any) -> dict[str, Thunk]:
    """The four calls of issue 8's table, built the same way for either library (in the
    style of PyTorch's benchmarks/overrides_benchmark/bench.py)."""
    overrides = __import__(f"{lib.__name__}.overrides", fromlist=["TorchFunctionMode"])
    vals = [1.0, 2.0, 3.0, 4.0]
    a, b = lib.tensor(vals), lib.tensor(vals[::-1])

    class SubTensor(lib.Tensor):  # passes every call through to the default handler
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return super().__torch_function__(func, types, args, kwargs)

    class Constant:  # a duck type whose handler answers at once
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return -1

    class Forward(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            return func(*args, **(kwargs or {}))

    sa, sb, duck, mode = a.as_subclass(SubTensor), b.as_subclass(SubTensor), Constant(), Forward()

    def in_mode() -> Any:
        with mode:
            return lib.add(a, b)

    return {
        "plain add": lambda: lib.add(a, b),
        "subclass add": lambda: lib.add(sa, sb),
        "duck add": lambda: lib.add(duck, b),
        "mode add": in_mode,
    }


def override_cases() -> list[Case]:
    """``__torch_function__`` overhead: ember's protocol against PyTorch's C++ one."""
    e = _override_thunks(ember)
    t = _override_thunks(torch) if torch is not None else {}
    goals = {"plain add": 1.5, "subclass add": 0.5, "duck add": 1.0, "mode add": 1.0}
    return [Case("override", k, e[k], None, t.get(k), ("torch", g)) for k, g in goals.items()]


def _python_key_thunks(lib: Any) -> dict[str, Thunk]:
    """Issue 9's calls: a wrapper subclass that unwraps with tree_map, runs the op and
    rewraps; a pass-through TorchDispatchMode."""
    pd = __import__(f"{lib.__name__}.utils._python_dispatch", fromlist=["TorchDispatchMode"])
    pytree = __import__(f"{lib.__name__}.utils._pytree", fromlist=["tree_map"])
    a, b = lib.tensor([1.0, 2.0, 3.0, 4.0]), lib.tensor([4.0, 3.0, 2.0, 1.0])

    class Wrapper(lib.Tensor):
        @staticmethod
        def __new__(cls, elem):  # noqa: ANN001, ANN205
            r = lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            def unwrap(x):  # noqa: ANN001, ANN202
                return x.elem if isinstance(x, Wrapper) else x

            def wrap(x):  # noqa: ANN001, ANN202
                return Wrapper(x) if isinstance(x, lib.Tensor) else x

            out = func(*pytree.tree_map(unwrap, args), **pytree.tree_map(unwrap, kwargs or {}))
            return pytree.tree_map(wrap, out)

    class Forward(pd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            return func(*args, **(kwargs or {}))

    wa, wb, mode = Wrapper(a), Wrapper(b), Forward()

    def in_mode() -> Any:
        with mode:
            return lib.add(a, b)

    fake_mode = __import__(
        f"{lib.__name__}._subclasses.fake_tensor", fromlist=["FakeTensorMode"]
    ).FakeTensorMode()
    fa, fb = fake_mode.from_tensor(a), fake_mode.from_tensor(b)

    def in_fake_mode() -> Any:
        with fake_mode:
            return lib.add(fa, fb)

    return {
        "wrapper add": lambda: lib.add(wa, wb),
        "dispatch mode add": in_mode,
        "fake add": in_fake_mode,
    }


def python_key_cases() -> list[Case]:
    """``__torch_dispatch__`` overhead: ember's Python key against PyTorch's."""
    e = _python_key_thunks(ember)
    t = _python_key_thunks(torch) if torch is not None else {}
    goals = {"wrapper add": 0.25, "dispatch mode add": 0.5, "fake add": 0.5}
    return [Case("dispatch", k, e[k], None, t.get(k), ("torch", g)) for k, g in goals.items()]


def large_cases(quick: bool) -> list[Case]:
    rng = np.random.default_rng(0)
    sizes = (10**5, 10**6) if quick else (10**6, 10**7)
    out: list[Case] = []
    goal = ("numpy", 1.1)
    for n in sizes:
        x = rng.standard_normal(n, dtype=np.float32)
        y = rng.standard_normal(n, dtype=np.float32)
        ex, ey = ember.from_numpy(x), ember.from_numpy(y)
        tx, ty = (torch.from_numpy(x), torch.from_numpy(y)) if torch is not None else (x, y)
        tag = f"1e{len(str(n)) - 1}"
        out += [
            Case("large", f"add {tag}", lambda ex=ex, ey=ey: ex + ey,
                 lambda x=x, y=y: x + y, (lambda tx=tx, ty=ty: tx + ty) if torch else None, goal),
            Case("large", f"mul {tag}", lambda ex=ex, ey=ey: ex * ey,
                 lambda x=x, y=y: x * y, (lambda tx=tx, ty=ty: tx * ty) if torch else None, goal),
            Case("large", f"exp {tag}", lambda ex=ex: ex.exp(),
                 lambda x=x: np.exp(x), (lambda tx=tx: tx.exp()) if torch else None, goal),
        ]  # fmt: skip
    n = sizes[-1]
    x = rng.standard_normal(n, dtype=np.float32)
    ex, tx = ember.from_numpy(x), torch.from_numpy(x) if torch is not None else None
    tag = f"1e{len(str(n)) - 1}"
    out.append(Case("large", f"gelu (erf) {tag}", lambda: ember.nn.functional.gelu(ex),
                    None, (lambda: torch.nn.functional.gelu(tx)) if torch else None,
                    ("torch", 1.5)))  # fmt: skip
    out.append(Case("large", f"sum 1e{len(str(n)) - 1}", lambda: ex.sum(), lambda: x.sum(),
                    (lambda: tx.sum()) if torch else None, goal))  # fmt: skip
    m = 256 if quick else 512
    a = rng.standard_normal((m, m), dtype=np.float32)
    ea, ta = ember.from_numpy(a), torch.from_numpy(a) if torch is not None else None
    # mixed layouts: the result is laid out like a.T, as PyTorch's (NOTE [pointwise result
    # layout]); NumPy picks row-major
    b = rng.standard_normal((m, m), dtype=np.float32)
    eb, tb = ember.from_numpy(b), torch.from_numpy(b) if torch is not None else None
    out.append(Case("large", f"a.T + b {m}x{m}", lambda: ea.t() + eb, lambda: a.T + b,
                    (lambda: ta.t() + tb) if torch else None, goal))  # fmt: skip
    out.append(Case("large", f"{m}x{m} matmul", lambda: ea @ ea, lambda: a @ a,
                    (lambda: ta @ ta) if torch else None, goal))  # fmt: skip
    return out


def mlp_weights(
    sizes: tuple[int, ...], rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weight, bias) pairs of an MLP with layer ``sizes``, drawn from ``rng`` as
    ``nn.Linear``'s default init (uniform in +-1/sqrt(fan_in)), float32."""
    out = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1 / np.sqrt(fan_in)
        w = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        b = rng.uniform(-bound, bound, fan_out).astype(np.float32)
        out.append((w, b))
    return out


def mlp(lib: Any, weights: list[tuple[np.ndarray, np.ndarray]]) -> Any:
    """``lib.nn.Sequential`` of Linear layers holding copies of ``weights``, ReLU between."""
    layers: list[Any] = []
    for i, (w, b) in enumerate(weights):
        lin = lib.nn.Linear(w.shape[1], w.shape[0])
        with lib.no_grad():
            lin.weight.copy_(lib.from_numpy(w.copy()))
            lin.bias.copy_(lib.from_numpy(b.copy()))
        layers += [lin] if i == len(weights) - 1 else [lin, lib.nn.ReLU()]
    return lib.nn.Sequential(*layers)


def _mlp_step_pair(
    sizes: tuple[int, ...], batch: int, device: str = "cpu"
) -> tuple[Thunk, Thunk | None]:
    """One SGD training step of an MLP (Linear/ReLU, cross-entropy) in ember and in PyTorch,
    both starting from the same weights and data."""
    rng = np.random.default_rng(0)
    weights = mlp_weights(sizes, rng)
    x = rng.standard_normal((batch, sizes[0]), dtype=np.float32)
    y = rng.integers(0, sizes[-1], batch)

    def build(lib: Any) -> Thunk:
        model = mlp(lib, weights)
        loss_fn = lib.nn.CrossEntropyLoss()
        xs, ys = lib.from_numpy(x.copy()), lib.from_numpy(y.copy())
        lazy = device == "lazy" and lib is ember
        if lazy:  # ember only: the step ends with a sync, as a training loop's
            model.to("lazy")
            xs, ys = xs.to("lazy"), ys.to("lazy")
        opt = lib.optim.SGD(model.parameters(), lr=0.01)

        def step() -> None:
            opt.zero_grad()
            loss_fn(model(xs), ys).backward()
            opt.step()
            if lazy:
                lib.lazy.mark_step()

        return step

    return build(ember), build(torch) if torch is not None and device == "cpu" else None


def train_cases() -> list[Case]:
    out: list[Case] = []
    for name, sizes, batch, limit in (
        ("mlp 512 b64 step", (784, 512, 512, 10), 64, 1.2),
        ("mlp 64 b8 step", (784, 64, 64, 10), 8, 1.0),
    ):
        e, t = _mlp_step_pair(sizes, batch)
        out.append(Case("train", name, e, None, t, ("torch", limit)))
    vals = [1.0, 2.0, 3.0, 4.0]
    ea = ember.tensor(vals, requires_grad=True)
    eb = ember.tensor(vals[::-1], requires_grad=True)
    tt: Thunk | None = None
    if torch is not None:
        ta = torch.tensor(vals, requires_grad=True)
        tb = torch.tensor(vals[::-1], requires_grad=True)

        def tt() -> None:
            (ta * tb).sum().backward()

    def et() -> None:
        (ea * eb).sum().backward()

    out.append(Case("train", "(a*b).sum() bwd", et, None, tt, ("torch", 1.5)))
    return out


def _chain(lib: Any) -> Callable[[Any, Any], Any]:
    if lib is np:
        return lambda x, w: (np.maximum(x * w + 1, 0) * 0.5 + x).sum()
    return lambda x, w: ((x * w + 1).relu() * 0.5 + x).sum()


def _numba_chain() -> Thunk | None:
    """The chain as a hand-written numba parallel loop: the bandwidth floor to compare with."""
    try:
        from numba import njit, prange
    except ImportError:
        return None

    @njit(parallel=True, cache=True)
    def chain(x: Any, w: Any) -> Any:
        acc = 0.0
        for i in prange(x.size):
            t = x[i] * w[i] + np.float32(1)
            t = np.float32(0) if t <= 0 else t
            acc += t * np.float32(0.5) + x[i]
        return acc

    return chain


def lazy_cases(quick: bool) -> list[Case]:
    rng = np.random.default_rng(0)
    n = 10**6 if quick else 10**7
    tag = f"1e{len(str(n)) - 1}"
    x, w = (rng.standard_normal(n, dtype=np.float32) for _ in range(2))
    ex, ew = ember.from_numpy(x), ember.from_numpy(w)
    lx, lw = ex.to("lazy"), ew.to("lazy")
    ember.lazy.mark_step()
    tx, tw = (torch.from_numpy(x), torch.from_numpy(w)) if torch is not None else (None, None)
    hand = _numba_chain()
    ref = (lambda: hand(x, w)) if hand is not None else None
    eager, lazy = _chain(ember), _chain(ember)
    out = [
        Case("lazy", f"chain {tag} eager", lambda: eager(ex, ew), lambda: _chain(np)(x, w),
             (lambda: _chain(torch)(tx, tw)) if torch else None, ("numpy", 1.1)),
        Case("lazy", f"chain {tag} lazy", lambda: lazy(lx, lw).item(), lambda: _chain(np)(x, w),
             (lambda: _chain(torch)(tx, tw)) if torch else None, ("numba", 1.2), ref),
    ]  # fmt: skip
    one = ember.ones(4).to("lazy")
    ember.lazy.mark_step()
    out.append(Case("lazy", "record 1 op", lambda: one + 1, None, None, ("us", 3.0)))
    for name, sizes, batch, limit in (
        ("mlp 512 b64 lazy", (784, 512, 512, 10), 64, 0.8),
        ("mlp 64 b8 lazy", (784, 64, 64, 10), 8, 1.0),
    ):
        eager_step, torch_step = _mlp_step_pair(sizes, batch)
        lazy_step, _ = _mlp_step_pair(sizes, batch, device="lazy")
        if limit < 1:
            out.append(Case("lazy", name, lazy_step, None, torch_step, ("eager", limit),
                            eager_step))  # fmt: skip
        else:
            out.append(Case("lazy", name, lazy_step, None, torch_step, ("torch", limit)))
    return out


def lazy_report(quick: bool) -> list[str]:
    """First-compile and disk-cache latency, and peak memory, of the fused chain."""
    import os
    import subprocess
    import tempfile
    import time
    import tracemalloc

    n = 10**6 if quick else 10**7
    script = (
        "import time, numpy as np; import ember\n"
        f"x = ember.from_numpy(np.ones({n}, np.float32)).to('lazy'); ember.lazy.mark_step()\n"
        "for _ in range(3):\n"
        "    t = time.perf_counter()\n"
        "    ((x * x + 1).relu() * 0.5 + x).sum().item()\n"
        "    print(time.perf_counter() - t)\n"
    )
    lines = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "EMBER_CACHE_DIR": cache}
        first, again = (
            [float(t) for t in subprocess.run([sys.executable, "-c", script], env=env,
                                              capture_output=True, text=True,
                                              check=True).stdout.split()]
            for _ in range(2)
        )  # fmt: skip
    # NOTE [warm-up runs]: the first run is NumPy's; numba builds the loop on the second
    lines.append(f"chain, a new process: first result {first[0]:.3f} s (goal <= 1 s)")
    lines.append(
        f"  numba builds its loop on run 2: {first[1]:.2f} s; run 3: {first[2] * 1e3:.1f} ms"
    )
    lines.append(f"chain, the disk cache: first result {again[0]:.3f} s (goal <= 0.1 s)")
    lines.append(f"  numba loads its loop on run 2: {again[1]:.2f} s")
    x = ember.from_numpy(np.ones(n, np.float32)).to("lazy")
    ember.lazy.mark_step()
    for _ in range(2):  # compiled, then numba's (NOTE [warm-up runs])
        ((x * x + 1).relu() * 0.5 + x).sum().item()
    tracemalloc.start()
    start = time.perf_counter()
    ((x * x + 1).relu() * 0.5 + x).sum().item()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    took = time.perf_counter() - start
    lines.append(
        f"chain, peak memory allocated: {peak / (4 * n):.3f}x its input "
        f"({peak / 1e6:.2f} MB), {took * 1e3:.1f} ms traced"
    )
    return lines


#: the clock ``measure`` reads: wall time, or with ``--cpu`` this process's CPU time (steadier
#: on a machine other jobs share: time spent waiting for a core is not counted)
TIMER: list[Callable[[], float]] = [timeit.default_timer]


def measure(fn: Thunk | None, repeats: int, budget: float) -> float | None | BaseException:
    """Seconds per call: the minimum over ``repeats`` loops of about ``budget`` seconds each.
    None if there is no such case, the exception if the call raised."""
    if fn is None:
        return None
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - reported in the table, not hidden
        return exc
    timer = timeit.Timer(fn, timer=TIMER[0])
    number, took = 1, timer.timeit(1)
    while took < budget / 10:  # calibrate: loops long enough for the clock to resolve
        number *= 10
        took = timer.timeit(number)
    number = max(1, int(number * budget / took))
    return min(timer.repeat(repeat=repeats, number=number)) / number


def fmt_time(t: float | None | BaseException) -> str:
    if t is None:
        return "-"
    if isinstance(t, BaseException):
        return "error"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x"


def ratio(a: Any, b: Any) -> float | None:
    return a / b if isinstance(a, float) and isinstance(b, float) else None


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks and print the table; returns 0 (misses are reported, not fatal)."""
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fast smoke run")
    p.add_argument("--filter", default="", help="only cases whose group or name contains this")
    p.add_argument("--cpu", action="store_true", help="time CPU used, not wall time")
    args = p.parse_args(argv)
    if args.cpu:
        TIMER[0] = time.process_time
    if threadpool_limits is not None:
        with threadpool_limits(limits=1, user_api="blas"):
            return _run(args)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    repeats, budget = (3, 0.005) if args.quick else (7, 0.05)
    cases = tiny_cases() + override_cases() + python_key_cases()
    cases += large_cases(args.quick) + train_cases() + lazy_cases(args.quick)
    for name in GROUP_MODULES:  # imported here: each imports Case from this module
        cases += importlib.import_module(f"benchmarks.{name}").cases(args.quick)
    cases = [c for c in cases if args.filter in c.group or args.filter in c.name]
    versions = f"ember {ember.__version__}, numpy {np.__version__}"
    versions += f", torch {torch.__version__}" if torch is not None else ", torch not installed"
    blas = "one thread each" if threadpool_limits else "torch on 1 thread, NumPy BLAS not limited"
    print(
        f"{versions}; {'quick' if args.quick else 'full'} run, min of {repeats} repeats; {blas}\n"
    )
    head = f"{'case':<17}{'ember':>9}{'torch':>9}{'numpy':>9}{'e/torch':>8}{'e/numpy':>8}"
    print(head + f"{'goal':>15} ok")
    print("-" * 80)
    misses = 0
    for c in cases:
        te = measure(c.ember, repeats, budget)
        tt = measure(c.torch, repeats, budget)
        tn = measure(c.numpy, repeats, budget)
        rt, rn = ratio(te, tt), ratio(te, tn)
        ref, limit = c.goal
        tr = measure(c.ref, repeats, budget) if c.ref is not None else None
        if ref == "us":
            r = te / 1e-6 if isinstance(te, float) else None
        else:
            r = {"torch": rt, "numpy": rn}.get(ref, ratio(te, tr))
        if isinstance(te, BaseException):
            mark = "ERROR"
        else:
            mark = "-" if r is None else "pass" if r <= limit else "MISS"
        misses += mark in ("MISS", "ERROR")
        cells = [fmt_time(te), fmt_time(tt), fmt_time(tn)]
        rs = [f"{x:.2f}x" if x is not None else "-" for x in (rt, rn)]
        goal = f"<= {limit:g} us" if ref == "us" else f"<= {limit:g}x {ref}"
        print(f"{c.name:<17}{cells[0]:>9}{cells[1]:>9}{cells[2]:>9}{rs[0]:>8}{rs[1]:>8}"
              f"{goal:>15} {mark}")  # fmt: skip
        if c.ref is not None:
            print(f"{'':<17}({ref}: {fmt_time(tr)}, ember/{ref} {fmt_ratio(r)})")
        if isinstance(te, BaseException):
            print(f"{'':<17}ember raised {type(te).__name__}: {te}"[:80])
    print(f"\n{len(cases) - misses} of {len(cases)} cases within their goal")
    if any(c.group == "lazy" for c in cases):
        print()
        for line in lazy_report(args.quick):
            print(line)
    for name in GROUP_MODULES:  # a group module's report (``report(quick)``), if it has one
        module = importlib.import_module(f"benchmarks.{name}")
        if hasattr(module, "report") and any(c.group == name for c in cases):
            print()
            for line in module.report(args.quick):
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
