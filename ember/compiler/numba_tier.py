"""The numba tier: one parallel loop per fusion group (NOTE [fusion groups]).

NOTE [kernel caches]
A group's kernel is Python source generated from its ops (readable: one line per op), a
function ``kernel`` compiled by numba with ``parallel=True``. Source is keyed by its text:
in memory per process, and on disk under ``$EMBER_CACHE_DIR`` (default
``~/.cache/ember``) as a module whose numba machine code numba caches beside it, so a new
process running the same model loads the kernel instead of compiling it. Which operands
are single elements (a 0-dim tensor, a number) is part of the source; sizes are not.

When numba is missing (``EMBER_LAZY_NUMBA=0`` acts as if it were), fails to compile a
kernel, the operands' shapes do not fit one loop (broadcasting), or a group is smaller than
``MIN_ELEMENTS``, the group's ops run as the NumPy tier writes them (``fallback``), with
the same results; ``tier::numba`` and ``tier::ops`` count which ran, and ``numba_failed``
counts failures.

NOTE [warm-up runs]
A kernel's first ``WARM_RUNS`` runs in a process (counted by its source, so every graph
that contains the group shares the count) run the group's ops as NumPy, and numba takes
over from the next run: a computation that runs once gets its result at NumPy's speed
instead of waiting for numba to import (about 0.25 s) and to compile the loop (about
0.5 s) or load it from the disk cache, and a loop that runs again pays for numba once.
``numba_warmup`` counts these runs. A kernel already built in this process runs at once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ember.compiler import metrics
from ember.compiler.buffers import reuse_buffers
from ember.compiler.fusion import ELEMENTWISE, REDUCTIONS
from ember.compiler.numpy_tier import compile_numpy
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node

MIN_ELEMENTS = 1 << 15  # below this a kernel launch costs more than the passes it saves
WARM_RUNS = 1  # runs of a kernel's ops before numba builds it (NOTE [warm-up runs])
_lock = threading.Lock()
_kernels: dict[str, Callable[..., Any] | None] = {}  # source hash -> kernel (None: failed)
_numba: list[bool] = []  # [whether numba is installed], once looked up
_warm: dict[str, int] = {}  # source hash -> runs of its ops so far (NOTE [warm-up runs])


def numba_available() -> bool:
    """numba is installed (and not switched off by ``EMBER_LAZY_NUMBA=0``); it is imported
    only when a kernel is first built, so a program that never fuses a large group never
    pays for importing it."""
    if os.environ.get("EMBER_LAZY_NUMBA", "1") == "0":
        return False
    if not _numba:
        try:
            found = importlib.util.find_spec("numba") is not None
        except (ImportError, ValueError):  # a broken install, or sys.modules["numba"] = None
            found = False
        _numba.append(found)
    return _numba[0]


def cache_dir() -> Path:
    root = os.environ.get("EMBER_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "ember"
    )
    path = Path(root) / "kernels"
    path.mkdir(parents=True, exist_ok=True)
    return path


class FusedKernel:
    """One fusion group's kernel (the target of its node): the numba loop when the
    operands fit, else the group's ops as generated NumPy (``fallback``). Called with the
    group's outside tensors, then its parameters."""

    fused = True  # its result is an array of its own (buffer reuse may take it)

    def __init__(
        self, members: list[Node], externals: list[Node], params: list[Node], name: str
    ) -> None:
        self.__name__ = name
        root = members[-1]
        self.reduce = REDUCTIONS.get(root.target)
        self.dtype = root.meta["tensor_meta"].dtype.np  # every member computes in it
        where: dict[Node, tuple[str, int]] = {n: ("m", k) for k, n in enumerate(members)}
        where.update({n: ("x", e) for e, n in enumerate(externals)})
        where.update({n: ("p", q) for q, n in enumerate(params)})
        self.n_ext = len(externals)
        self.n_params = len(params)
        #: per member: op, its arguments' references, its keywords' references
        self.ops: list[tuple[Any, list[tuple[str, int]], dict[str, tuple[str, int]]]] = [
            (n.target, [where[a] for a in n.args], {k: where[v] for k, v in n.kwargs.items()})
            for n in members
        ]
        self.sources: dict[tuple[bool, ...], str] = {}
        # the group's ops as NumPy: made when first needed (a large group numba runs never is)
        self._metas = (
            [n.meta.get("tensor_meta") for n in externals],
            [n.meta.get("param") for n in params],
            [(n.name, n.meta.get("tensor_meta")) for n in members],
        )
        self._fallback: Callable[..., Any] | None = None

    def __repr__(self) -> str:
        return f"<FusedKernel {self.__name__}: {len(self.ops)} ops>"

    def fallback(self, *args: Any) -> Any:
        """The group's ops, as the NumPy tier writes them."""
        fn = self._fallback
        if fn is None:
            fn = self._fallback = self._numpy()
        return fn(*args)

    def _numpy(self) -> Callable[..., Any]:
        """The group's ops as a generated NumPy function of the same arguments."""
        ext_metas, param_types, member_metas = self._metas
        sub = Graph()
        refs: dict[tuple[str, int], Node] = {}
        for e, tm in enumerate(ext_metas):
            refs[("x", e)] = ph = sub.placeholder(f"a{e}")
            ph.meta["tensor_meta"] = tm
        for q, kind in enumerate(param_types):
            refs[("p", q)] = ph = sub.placeholder(f"p{q}")
            ph.meta["param"] = kind
        for k, ((op, args, kwargs), (name, tm)) in enumerate(
            zip(self.ops, member_metas, strict=True)
        ):
            node = sub.call_function(
                op, tuple(refs[r] for r in args), {w: refs[r] for w, r in kwargs.items()}, name=name
            )
            node.meta["tensor_meta"] = tm
            refs[("m", k)] = node
        sub.output(refs[("m", len(self.ops) - 1)])
        gm = GraphModule({}, sub)
        gm.meta["arrays"] = True
        reuse_buffers(sub)
        fn, _ = compile_numpy(gm, self.__name__)
        return fn

    # ------------------------------------------------------------------ source
    def source(self, scalar: tuple[bool, ...]) -> str:
        """The kernel's source for operands where ``scalar[e]`` says external ``e`` is a
        single element."""
        found = self.sources.get(scalar)
        if found is not None:
            return found
        T = np.dtype(self.dtype).name

        def name(ref: tuple[str, int]) -> str:
            kind, j = ref
            if kind == "m":
                return f"v{j}"
            if kind == "p":
                return f"p{j}"
            return f"a{j}" if scalar[j] else f"a{j}[i]"

        body = []
        last = len(self.ops) - (1 if self.reduce else 0)
        for k in range(last):
            op, args, kwargs = self.ops[k]
            expr = ELEMENTWISE[op]([name(r) for r in args], {w: name(r) for w, r in kwargs.items()})
            body.append(f"        v{k} = {expr}")
        head = ["import numpy as np", "from numba import njit, prange", f"T = np.{T}", ""]
        params = [f"p{q}" for q in range(self.n_params)]
        args_list = ", ".join([f"a{e}" for e in range(self.n_ext)] + params)
        deco = '@njit(parallel=True, cache=True, error_model="numpy"'
        deco += ', fastmath={"reassoc"})' if self.reduce is not None else ")"
        if self.reduce is None:
            lines = [deco, f"def kernel(out, n, {args_list}):", "    for i in prange(n):"]
            lines += body + [f"        out[i] = v{last - 1}"]
        else:
            lines = [
                deco,
                f"def kernel(n, {args_list}):",
                "    acc = 0.0",
                "    for i in prange(n):",
            ]
            lines += body + [f"        acc += v{last - 1}", "    return acc"]
        text = "\n".join(head + lines) + "\n"
        self.sources[scalar] = text
        return text

    # ------------------------------------------------------------------ running
    def __call__(self, *args: Any) -> Any:
        ins, params = args[: self.n_ext], args[self.n_ext :]
        shapes = [a.shape for a in ins]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            shape = None
        n = int(np.prod(shape)) if shape is not None else 0
        fits = shape is not None and all(s == shape or int(np.prod(s)) == 1 for s in shapes)
        if shape is None or not fits or n < MIN_ELEMENTS or not numba_available():
            metrics.count("tier::ops")
            return self.fallback(*args)
        scalar = tuple(int(np.prod(s)) == 1 and s != shape for s in shapes)
        source = self.source(scalar)
        if _warming(source):
            metrics.count("numba_warmup")
            metrics.count("tier::ops")
            return self.fallback(*args)
        kernel = _kernel(source)
        if kernel is not None:
            T = np.dtype(self.dtype).type
            operands = [
                T(a.reshape(-1)[0]) if s else np.ascontiguousarray(a).reshape(-1)
                for a, s in zip(ins, scalar, strict=True)
            ]
            numbers = [T(p) for p in params]
            try:  # numba compiles on the first call: a typing error surfaces here
                if self.reduce is None:
                    out = np.empty(shape, self.dtype)
                    kernel(out.reshape(-1), n, *operands, *numbers)
                    result = out
                else:
                    acc = kernel(n, *operands, *numbers)
                    result = np.asarray(acc / n if self.reduce == "mean" else acc, self.dtype)
            except Exception as exc:  # noqa: BLE001 - any failure falls back to the ops
                _failed(source, exc)
            else:
                metrics.count("tier::numba")
                return result
        metrics.count("tier::ops")
        return self.fallback(*args)


def _warming(source: str) -> bool:
    """This run of the kernel is a warm-up run (NOTE [warm-up runs])."""
    digest = _digest(source)
    with _lock:
        if digest in _kernels:
            return False
        runs = _warm.get(digest, 0)
        if runs >= WARM_RUNS:
            return False
        _warm[digest] = runs + 1
        return True


def _kernel(source: str) -> Callable[..., Any] | None:
    digest = _digest(source)
    with _lock:
        if digest in _kernels:
            return _kernels[digest]
        try:
            path = cache_dir() / f"ember_kernel_{digest}.py"
            if not path.exists():
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(source)
                os.replace(tmp, path)
            name = f"ember_kernel_{digest}"
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            kernel = module.kernel
        except Exception as exc:  # noqa: BLE001 - any failure falls back to the ops
            _kernels[digest] = None
            _report(exc)
            return None
        _kernels[digest] = kernel
        return kernel


def _digest(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()[:20]


def _failed(source: str, exc: BaseException) -> None:
    with _lock:
        _kernels[_digest(source)] = None
    _report(exc)


def _report(exc: BaseException) -> None:
    metrics.count("numba_failed")
    if os.environ.get("EMBER_LAZY_DEBUG", "") not in ("", "0"):
        print(f"[ember.lazy] numba kernel failed, running the ops: {exc}", file=sys.stderr)
