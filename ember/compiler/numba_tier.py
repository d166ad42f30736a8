"""The numba tier: one parallel loop per fusion group (NOTE [fusion groups]).

NOTE [kernel caches]
A group's kernel is Python source generated from its ops (readable: one line per op), a
function ``kernel`` compiled by numba with ``parallel=True``. Source is keyed by its text:
in memory per process, and on disk under ``$EMBER_CACHE_DIR`` (default
``~/.cache/ember``) as a module whose numba machine code numba caches beside it, so a new
process running the same model loads the kernel instead of compiling it. Which operands
are single elements (a 0-dim tensor, a number) is part of the source; sizes are not.

When numba is missing (``EMBER_LAZY_NUMBA=0`` acts as if it were), fails to compile a
kernel, or a group is smaller than ``MIN_ELEMENTS``, the group's ops run one by one on the
cpu kernels with the same results; ``tier::numba`` and ``tier::ops`` count which ran, and
``numba_failed`` counts failures.
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

from ember.compiler.fusion import ELEMENTWISE, REDUCTIONS
from ember.lazy import metrics
from ember.lazy.ir import Node, Param, Slot

MIN_ELEMENTS = 1 << 15  # below this a kernel launch costs more than the passes it saves
_lock = threading.Lock()
_kernels: dict[str, Callable[..., Any] | None] = {}  # source hash -> kernel (None: failed)
_numba: list[Any] = []  # [module] once imported; [None] when unavailable


def numba_available() -> bool:
    if os.environ.get("EMBER_LAZY_NUMBA", "1") == "0":
        return False
    if not _numba:
        try:
            import numba  # noqa: F401
        except Exception:  # noqa: BLE001 - any import failure means "not available"
            _numba.append(None)
        else:
            _numba.append(numba)
    return _numba[0] is not None


def cache_dir() -> Path:
    root = os.environ.get("EMBER_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "ember"
    )
    path = Path(root) / "kernels"
    path.mkdir(parents=True, exist_ok=True)
    return path


class Fused:
    """The step of one fusion group: the numba kernel when the operands fit, else the
    group's ops one by one (``singles``, the interpreter's steps)."""

    def __init__(self, members: list[Node], singles: list[Any]) -> None:
        self.root = members[-1]
        self.reduce = REDUCTIONS.get(self.root.op)
        self.dtype = self.root.meta[0][2]  # every member computes in it (fusion.py)
        where = {id(n): k for k, n in enumerate(members)}
        self.externals: list[tuple[int, int]] = []  # (id(node), output) of outside operands
        ext_index: dict[tuple[int, int], int] = {}
        # per member: operand references ("m", k) member k, ("x", e) external e
        self.plan: list[list[tuple[str, int]]] = []
        for node in members:
            refs = []
            for n, i in node.inputs:
                if id(n) in where:
                    refs.append(("m", where[id(n)]))
                else:
                    key = (id(n), i)
                    if key not in ext_index:
                        ext_index[key] = len(self.externals)
                        self.externals.append(key)
                    refs.append(("x", ext_index[key]))
            self.plan.append(refs)
        self.ops = [(n.op, n.args, n.kwargs) for n in members]
        self.singles = singles
        self.sources: dict[tuple[bool, ...], str] = {}

    # ------------------------------------------------------------------ source
    def source(self, scalar: tuple[bool, ...]) -> str:
        """The kernel's source for operands where ``scalar[e]`` says external ``e`` is a
        single element."""
        found = self.sources.get(scalar)
        if found is not None:
            return found
        T = np.dtype(self.dtype).name
        n_ext = len(self.externals)
        n_params = sum(_count_params(args, kwargs) for _, args, kwargs in self.ops)
        params = [f"p{q}" for q in range(n_params)]
        body = []
        q = 0
        last = len(self.ops) - (1 if self.reduce else 0)
        for k in range(last):
            op, args, kwargs = self.ops[k]
            names: list[str] = []
            for a in args:
                if type(a) is Slot:
                    kind, j = self.plan[k][a.i]
                    names.append(f"v{j}" if kind == "m" else (f"a{j}" if scalar[j] else f"a{j}[i]"))
                else:
                    names.append(f"p{q}")
                    q += 1
            kw = {}
            for name in kwargs:
                kw[name] = f"p{q}"
                q += 1
            body.append(f"        v{k} = {ELEMENTWISE[op](names, kw)}")
        head = ["import numpy as np", "from numba import njit, prange", f"T = np.{T}", ""]
        args_list = ", ".join([f"a{e}" for e in range(n_ext)] + params)
        deco = '@njit(parallel=True, cache=True, error_model="numpy")'
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
    def __call__(self, ins: list[Any], nodes: list[Node]) -> list[Any]:
        shapes = [a.shape for a in ins]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            shape = None
        n = int(np.prod(shape)) if shape is not None else 0
        fits = shape is not None and all(s == shape or int(np.prod(s)) == 1 for s in shapes)
        if not fits or n < MIN_ELEMENTS or not numba_available():
            metrics.count("tier::ops")
            return self.one_by_one(ins, nodes)
        scalar = tuple(int(np.prod(s)) == 1 and s != shape for s in shapes)
        source = self.source(scalar)
        kernel = _kernel(source)
        if kernel is not None:
            T = np.dtype(self.dtype).type
            operands = [
                T(a.reshape(-1)[0]) if s else np.ascontiguousarray(a).reshape(-1)
                for a, s in zip(ins, scalar, strict=True)
            ]
            params = [T(p) for node in nodes for p in _params_in_order(node)]
            try:  # numba compiles on the first call: a typing error surfaces here
                if self.reduce is None:
                    out = np.empty(shape, self.dtype)
                    kernel(out.reshape(-1), n, *operands, *params)
                    result = out
                else:
                    acc = kernel(n, *operands, *params)
                    result = np.asarray(acc / n if self.reduce == "mean" else acc, self.dtype)
            except Exception as exc:  # noqa: BLE001 - any failure falls back to the ops
                _failed(source, exc)
            else:
                metrics.count("tier::numba")
                return [result]
        metrics.count("tier::ops")
        return self.one_by_one(ins, nodes)

    def one_by_one(self, ins: list[Any], nodes: list[Node]) -> list[Any]:
        values: list[Any] = []
        for k, (step, node) in enumerate(zip(self.singles, nodes, strict=True)):
            operands = [values[j] if kind == "m" else ins[j] for kind, j in self.plan[k]]
            values.append(step(operands, node.params)[0])
        return [values[-1]]


def _count_params(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    return sum(type(a) is not Slot for a in args) + len(kwargs)


def _params_in_order(node: Node) -> list[Any]:
    """A node's parameter values in the order the source names them (args, then kwargs)."""
    out = [node.params[a.j] for a in node.args if type(a) is Param]
    out += [node.params[v.j] for v in node.kwargs.values()]
    return out


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
