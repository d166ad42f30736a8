"""``ember.compile``: a function or module compiled ahead of time on its first call with each
argument signature, as ``torch.compile``.

>>> @ember.compile
... def f(x):
...     return (x * 2 + 1).relu().sum()
>>> f(ember.ones(3))
tensor(9.)

# NOTE [ember.compile]
A compiled function is an AOTAutograd function (NOTE [aot autograd]) whose compilers the
backend names:

- ``"ember"`` (the default): both graphs go to ember's compiler (NOTE [ember backend]), with
  the min-cut partitioner; ``mode`` picks the tier: ``None``/``"default"``/``"max-autotune"``
  the numba tier (fused parallel loops; the NumPy tier where numba is missing),
  ``"reduce-overhead"`` the NumPy tier (no numba compilation or warm-up);
- ``"aot_eager"``: AOTAutograd with compilers that run the graphs as they are (``nop``);
- ``"eager"``: the function itself, uncompiled (guards and graph breaks still counted);
- a callable ``backend(gm, example_inputs) -> callable``, as PyTorch's custom backends: the
  forward is traced with ``make_fx`` (fake tensors; writes kept) into a ``GraphModule`` of
  OpOverloads over the flattened tensor arguments (a module's parameters and buffers
  first), and the backend gets it with the real example tensors; the callable it returns
  runs under autograd, so gradients flow through its ops.

Where tracing reads a traced tensor's values (data-dependent control flow, ``item()``, an op
whose output shape depends on values), ``fullgraph=True`` raises ``Unsupported`` naming the
call; otherwise that signature runs on the lazy device instead (its inputs moved there, its
outputs back, written inputs copied back), which computes values exactly where the code
reads them: the graph is cut at the data-dependent value. Each is counted as a graph break
with its reason (``counters["graph_break"]``, ``compiled.graph_breaks``). Tensors the
function reads from outside its arguments are inputs of the graph (NOTE [lifted
tensors]); a side effect (``backward()``, an optimizer step, a ``.grad`` read, appending to
a global list: NOTE [compile side effects]) is a graph break that runs the signature
eagerly.

A compiled module (``OptimizedModule``) holds the original as ``_orig_mod``: its
parameters, ``state_dict`` (keys prefixed ``_orig_mod.``, as PyTorch's), ``train()`` and
``eval()`` are the original's; each submodule's training flag is part of the signature, so
switching mode retraces once per mode.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

from ember._compile_counters import counters, reset
from ember._graph_break import USER_CODE, GraphBreak, side_effect
from ember._lift import Guards, Lift, LiftMode
from ember._outer_state import CalledCode, outer_writes
from ember._shape_only import DataDependentShapeError
from ember._subclasses.fake_tensor import DynamicOutputShapeException
from ember._tensor import Tensor
from ember.aot.aot_autograd import (
    GRAPH_BREAKS,
    AOTCompiledFunction,
    aot_function,
    leaf_write_break,
    nop,
)
from ember.aot.aot_autograd import config as aot_config
from ember.aot.ember_backend import ember_compiler
from ember.aot.guards import describe_difference, distance, signature
from ember.aot.partitioners import default_partition, min_cut_rematerialization_partition
from ember.aot.segments import SegmentedFunction
from ember.autograd.grad_mode import no_grad
from ember.autograd.kernel import LeafWriteError
from ember.dispatch import state
from ember.func._functional_call import call_swapped
from ember.fx.experimental.proxy_tensor import TRACING, make_fx
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.modules.module import STRUCTURE, Module
from ember.nn.parameter import Parameter
from ember.ops.registry import ops
from ember.overrides import TorchFunctionMode
from ember.utils._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["OptimizedModule", "Unsupported", "compile", "counters", "list_backends", "reset"]


#: breaks no scalar guard can split: an output shape that depends on values
_SHAPE_BREAKS = (DataDependentShapeError, DynamicOutputShapeException)

_MODES = {None: None, "default": None, "max-autotune": "numba",
          "max-autotune-no-cudagraphs": "numba", "reduce-overhead": "numpy"}  # fmt: skip


class Unsupported(RuntimeError):
    """``fullgraph=True`` met something it cannot put in one graph (PyTorch's
    ``torch._dynamo.exc.Unsupported``)."""


def _partitioner() -> Any:
    """The "ember" backend's partitioner (NOTE [partitioner without networkx]).

    # NOTE [partitioner without networkx]
    The min-cut partitioner (what to save for the backward, as PyTorch's default for
    ``torch.compile``) solves a max-flow with networkx, which ember does not require:
    without it, the backend saves what the default partitioner saves. The values are the
    same either way; only what the backward recomputes differs.
    """
    try:
        import networkx  # noqa: F401  (deferred: only the choice needs to know)
    except ImportError:
        return default_partition
    return min_cut_rematerialization_partition


def list_backends(exclude_tags: Any = ()) -> list[str]:
    """The names ``backend=`` takes."""
    return ["aot_eager", "eager", "ember"]


def _tier_for(mode: str | None) -> str | None:
    if mode not in _MODES:
        raise RuntimeError(
            f"ember.compile: unknown mode {mode!r}; use one of {', '.join(repr(m) for m in _MODES)}"
        )
    found = _MODES[mode]
    if found == "numba":
        from ember.compiler.pipeline import tier  # (numba's availability, read when asked)

        return tier()
    return found


#: factories whose tensors land on the default device: under the lazy fallback, the lazy
#: device (as PyTorch's device context makes them on its device)
_FACTORIES = frozenset(
    "zeros ones full empty empty_strided arange rand randn randint randperm linspace "
    "logspace eye scalar_tensor tensor as_tensor".split()
)


class _OnLazy(TorchFunctionMode):
    """What the function reads from elsewhere joins its arguments on the lazy device:
    tensors it makes itself (``ember.zeros(3)``, ``ember.tensor([...])``) are made there,
    as PyTorch's device context makes them on its device, and cpu tensors it reads from a
    closure, a global or a module attribute are moved there when an op takes them (once
    per call; written ones are copied back, as the arguments are)."""

    def __init__(self, moved: dict[int, tuple[Tensor, Tensor, int]]) -> None:
        super().__init__()
        self.moved = moved

    def _move(self, x: Any) -> Any:
        if isinstance(x, Tensor) and x.device.type == "cpu" and type(x) in (Tensor, Parameter):
            found = self.moved.get(id(x))
            if found is None:
                y = x.to("lazy")
                found = self.moved[id(x)] = (x, y, y._version)
            return found[1]
        return x

    def __torch_function__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name in _FACTORIES and kwargs.get("device") is None:
            kwargs["device"] = "lazy"
        elif func is not _LIFT_FRESH:
            args, kwargs = tree_map(self._move, (args, kwargs))
        out = func(*args, **kwargs)
        if func is _LIFT_FRESH and isinstance(out, Tensor) and out.device.type == "cpu":
            return out.to("lazy")
        return out


_LIFT_FRESH = getattr(getattr(ops.aten, "lift_fresh", None), "default", None)


def _lazy_fallback(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run on the lazy device (NOTE [ember.compile]): cpu tensors moved there (and
    the tensors it makes made there), results moved back, inputs it wrote updated."""

    def run(*args: Any, **kwargs: Any) -> Any:
        moved: dict[int, tuple[Tensor, Tensor, int]] = {}
        mode = _OnLazy(moved)
        largs, lkwargs = tree_map(mode._move, (args, kwargs))
        with mode:
            out = fn(*largs, **lkwargs)
        with no_grad():
            for cpu, lazy, v in moved.values():
                if lazy._version != v:
                    cpu.copy_(lazy.to("cpu"))
        return tree_map(
            lambda x: x.to("cpu") if isinstance(x, Tensor) and x.device.type == "lazy" else x, out
        )

    return run


def _user_code(fn: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
    """``fn``, marked as the user's code while a trace runs it (NOTE [compile side
    effects]); run outside a trace (past the recompile limit), just ``fn``."""

    def run(*args: Any, **kwargs: Any) -> Any:
        if not TRACING[0]:
            return fn(*args, **kwargs)
        USER_CODE[0] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            USER_CODE[0] -= 1

    run.__name__ = name or getattr(fn, "__name__", "compiled")
    return run


class _CustomBackendFunction:
    """A function compiled by a custom backend ``(GraphModule, example_inputs) -> callable``
    (NOTE [ember.compile]), with AOTAutograd's guards."""

    def __init__(self, fn: Callable[..., Any], backend: Callable[..., Any], owner: Any) -> None:
        self.fn = fn
        self.backend = backend
        self.owner = owner
        self.cache: dict[Any, tuple[Any, Any, list[int]]] = {}
        self.signatures: list[Any] = []
        self.recompile_reasons: list[str] = []
        self.__name__ = getattr(fn, "__name__", "compiled")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        flat, spec = tree_flatten((args, kwargs))
        sig = signature(flat, state.local.grad_enabled)
        found = self.cache.get(sig)
        if found is None:
            found = self._compile(sig, flat, spec)
        compiled, out_spec, out_leaves = found
        if compiled is None:
            return out_spec(*args, **kwargs)  # a graph break: the lazy fallback
        tensors = [a for a in flat if isinstance(a, Tensor)]
        outs = list(compiled(*tensors))
        leaves = [outs[k] if isinstance(k, int) else k[1] for k in out_leaves]
        return tree_unflatten(leaves, out_spec)

    def _compile(self, sig: Any, flat: list[Any], spec: Any) -> Any:
        if self.signatures:
            closest = min(self.signatures, key=lambda s: distance(sig, s))
            self.recompile_reasons.append(
                f"{self.__name__}: retracing; closest is #{self.signatures.index(closest)}: "
                + "; ".join(describe_difference(sig, closest))
            )
        positions = [i for i, a in enumerate(flat) if isinstance(a, Tensor)]
        holder: dict[str, Any] = {}

        def traced(*tensors: Any) -> Any:
            full = list(flat)
            for i, t in zip(positions, tensors, strict=True):
                full[i] = t
            a, k = tree_unflatten(full, spec)
            out_flat, out_spec = tree_flatten(self.fn(*a, **k))
            holder["spec"] = out_spec
            holder["leaves"] = [None if isinstance(o, Tensor) else ("const", o) for o in out_flat]
            return tuple(o for o in out_flat if isinstance(o, Tensor))

        tensors = [flat[i] for i in positions]
        try:
            gm = make_fx(traced, tracing_mode="fake", _allow_non_fake_inputs=True)(*tensors)
        except (*GRAPH_BREAKS, LeafWriteError) as e:
            if isinstance(e, LeafWriteError):
                e = leaf_write_break(e, "ember.compile")
            entry = (None, self.owner.graph_break(sig, e), [])
            self.cache[sig] = entry
            self.signatures.append(sig)
            return entry
        compiled = self.backend(gm, tensors)
        k = 0
        out_leaves: list[Any] = []
        for leaf in holder["leaves"]:
            if leaf is None:
                out_leaves.append(k)
                k += 1
            else:
                out_leaves.append(leaf)
        entry = (compiled, holder["spec"], out_leaves)
        self.cache[sig] = entry
        self.signatures.append(sig)
        counters["stats"]["unique_graphs"] += 1
        return entry

    def explain(self) -> list[str]:
        return list(self.recompile_reasons)


class _Compiled:
    """What ``ember.compile`` returns for a function (NOTE [ember.compile]).

    The compiled function (``impl``) takes the arguments, then the lifted tensors, then
    their number (NOTE [lifted tensors]), so that ``args[i]`` in its explanations is the
    user's argument ``i``; the ``"eager"`` backend takes just the arguments.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        backend: Any,
        mode: str | None,
        fullgraph: bool,
        source: Callable[..., Any] | None = None,
    ) -> None:
        self._orig_fn = fn
        self.backend = backend
        self.mode = mode
        self.fullgraph = fullgraph
        self.graph_breaks: list[str] = []
        self.__name__ = getattr(fn, "__name__", "compiled")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn
        #: NOTE [lifted tensors]
        self._lifted: list[Tensor] = []
        #: the user's code (a compiled module's forward), for the guards and the check
        #: of writes to outer state
        code = (fn,) if source is None else (fn, source)
        self._guards = Guards(*code)
        self._guards.record()
        self._restarts: list[str] = []
        self._writes = next((w for w in map(outer_writes, code) if w is not None), None)
        #: compiles one piece of a graph break (NOTE [graph break segments]); None: the
        #: lazy device runs such a signature whole
        self.piece_compiler: Callable[[Any], Any] | None = None
        self._build()

    def _build(self) -> None:
        backend, fn = self.backend, self._orig_fn
        traced = _user_code(self._with_lifted, self.__name__)
        if backend == "eager":
            self.impl: Any = fn
        elif backend == "aot_eager":
            self.impl = aot_function(traced, nop, nop)
            self.piece_compiler = lambda gm: aot_function(gm, nop, nop)
        elif backend == "ember":
            tier_name = _tier_for(self.mode)

            def compiler(gm: Any, example_inputs: Any) -> Any:
                return ember_compiler(gm, example_inputs, tier_name=tier_name)

            partition = _partitioner()
            self.impl = aot_function(traced, compiler, compiler, partition_fn=partition)
            self.piece_compiler = lambda gm: aot_function(
                gm, compiler, compiler, partition_fn=partition
            )
        elif callable(backend):
            self.impl = _CustomBackendFunction(traced, backend, self)
        else:
            raise RuntimeError(
                f"ember.compile: unknown backend {backend!r}; use one of {list_backends()} or "
                "a callable (GraphModule, example_inputs) -> callable"
            )
        if isinstance(self.impl, AOTCompiledFunction):
            self.impl.options["graph_break"] = self.graph_break

    def _with_lifted(self, *rest: Any, **kwargs: Any) -> Any:
        """The user's function called with ``args..., lifted..., n``: its ``n`` lifted
        tensors swapped for the trace's inputs (NOTE [lifted tensors])."""
        n = rest[-1]
        args = rest[: len(rest) - 1 - n]
        if not TRACING[0]:  # past the recompile limit: the function itself
            return self._orig_fn(*args, **kwargs)
        if self._writes is not None:
            side_effect(self._writes)
        found = rest[len(args) : -1]
        inputs = {id(t): x for t, x in zip(self._lifted[:n], found, strict=True)}
        with CalledCode() as called, LiftMode(inputs, called):
            out = self._orig_fn(*args, **kwargs)
        self._guards.watch(called.names())
        return out

    def graph_break(self, sig: Any, error: BaseException) -> Any:
        """A call met while tracing that one graph cannot hold: raise under ``fullgraph``,
        else count it and run this signature eagerly (a side effect: NOTE [compile side
        effects]) or in pieces and on the lazy device (data-dependent: NOTE
        [ember.compile]). What it returns takes the compiled function's arguments (the
        lifted tensors first)."""
        reason = f"{type(error).__name__}: {error}"
        if self.fullgraph:
            what = (
                "has a side effect"
                if isinstance(error, GraphBreak)
                else "has data-dependent control flow or output shapes"
            )
            raise Unsupported(
                f"ember.compile(fullgraph=True): {self.__name__} {what}, which cannot be one "
                f"graph: {reason}"
            ) from error
        self.graph_breaks.append(reason)
        counters["graph_break"][reason] += 1
        if isinstance(error, GraphBreak):
            run = self._orig_fn
        elif self.piece_compiler is None or isinstance(error, _SHAPE_BREAKS):
            run = _lazy_fallback(self._orig_fn)
        else:
            run = SegmentedFunction(
                _user_code(self._orig_fn), self.piece_compiler, _lazy_fallback(self._orig_fn),
                aot_config.cache_size_limit, eager=self._orig_fn,
            )  # fmt: skip
        return _AfterLifted(run)

    def _restart(self, why: str) -> None:
        """Forget the lifted tensors and the compiled signatures (NOTE [lifted tensors])."""
        self._restarts.append(f"{self.__name__}: compiling again: {why}")
        self._lifted = []
        self._guards.record()
        if len(self._restarts) > aot_config.cache_size_limit:
            warnings.warn(
                f"ember.compile({self.__name__}): compiled again {len(self._restarts)} times "
                f"(config.cache_size_limit = {aot_config.cache_size_limit}); running it "
                f"uncompiled from now on. Last: {why}",
                stacklevel=3,
            )
            self.backend, self.impl = "eager", self._orig_fn
            return
        self._build()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.backend == "eager":
            return self.impl(*args, **kwargs)
        guards = self._guards
        if guards.names or self._lifted:
            i = guards.changed(bool(self._lifted))
            while i is not None:
                if not guards.swap(i, self._lifted):
                    self._restart(guards.why(i))
                    if self.backend == "eager":
                        return self.impl(*args, **kwargs)
                    break
                i = guards.changed(bool(self._lifted))
        while True:
            lifted = self._lifted
            try:
                return self.impl(*args, *lifted, len(lifted), **kwargs)
            except Lift as e:
                if any(t is e.tensor for t in lifted):
                    raise RuntimeError(
                        f"ember.compile({self.__name__}): internal error: a lifted tensor "
                        "was not swapped for its input"
                    ) from None
                if not lifted:
                    self._guards.record()
                self._lifted = [*lifted, e.tensor]

    def explain(self) -> list[str]:
        """Why each retrace happened, then each graph break's reason."""
        reasons = self.impl.explain() if hasattr(self.impl, "explain") else []
        return self._restarts + reasons + [f"graph break: {r}" for r in self.graph_breaks]

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return lambda *a, **k: self(obj, *a, **k)


class _AfterLifted:
    """``fn`` called with the compiled function's arguments: the ones ahead of the lifted
    tensors and their number (NOTE [lifted tensors])."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, *rest: Any, **kwargs: Any) -> Any:
        return self.fn(*rest[: len(rest) - 1 - rest[-1]], **kwargs)


def _uninitialized(mod: Module) -> bool:
    """Whether a lazy module in ``mod`` still has uninitialised parameters."""
    return any(
        isinstance(m, LazyModuleMixin) and m.has_uninitialized_params() for m in mod.modules()
    )


class OptimizedModule(Module):
    """A compiled module: ``forward`` compiled with the parameters and buffers as inputs;
    everything else is the original's (``_orig_mod``).

    Each call passes the compiled function the parameter and buffer names and the
    submodules' training flags (static values: part of the signature), then the tensors
    themselves, then the arguments. Where the tensors live (which dict, which key) is kept
    from call to call and re-read only when a module anywhere registered, replaced or
    removed a parameter, buffer or child (``module.STRUCTURE``); the values are read at each
    call, so an assigned tensor is seen.
    """

    def __init__(
        self,
        mod: Module,
        backend: Any,
        mode: str | None,
        fullgraph: bool,
        forward_only: bool = False,
    ) -> None:
        super().__init__()
        self._orig_mod = mod
        # Module.compile: the class's forward (the module's hooks run around the compiled
        # call); else the module's own call, hooks in the graph
        target = partial(type(mod).forward, mod) if forward_only else mod

        def functional(names: tuple[str, ...], flags: Any, *rest: Any, **kwargs: Any) -> Any:
            n = len(names)
            values = dict(zip(names, rest[:n], strict=True))
            return call_swapped(mod, values, target, rest[n:], kwargs)

        functional.__name__ = type(mod).__name__
        forward = getattr(type(mod).forward, "__func__", type(mod).forward)
        self.__dict__["_compiled"] = _Compiled(functional, backend, mode, fullgraph, forward)
        self.__dict__["_layout"] = None

    def _read_layout(self) -> tuple[int, tuple[str, ...], list[Any], list[Module]]:
        mod = self._orig_mod
        names: list[str] = []
        refs: list[Any] = []
        for registry in ("_parameters", "_buffers"):
            for prefix, m in mod.named_modules(remove_duplicate=False):
                table = m.__dict__[registry]
                for k, v in table.items():
                    if v is not None:
                        names.append(f"{prefix}.{k}" if prefix else k)
                        refs.append((table, k))
        paths = [p for p, _ in mod.named_modules()]
        layout = (STRUCTURE[0], tuple(names), refs, list(mod.modules()), paths)
        self.__dict__["_layout"] = layout
        return layout

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        layout = self.__dict__["_layout"]
        if layout is None or layout[0] != STRUCTURE[0]:
            if _uninitialized(self._orig_mod):
                # lazy modules infer their parameters' shapes from a first, eager call (as
                # PyTorch's compiler runs them): the graph is traced once they have them
                return self._orig_mod(*args, **kwargs)
            layout = self._read_layout()
        _, names, refs, mods, _ = layout
        try:
            tensors = [d[k] for d, k in refs]
        except KeyError:  # a dict written directly
            _, names, refs, mods, _ = self._read_layout()
            tensors = [d[k] for d, k in refs]
        flags = tuple([m.training for m in mods])
        return self.__dict__["_compiled"](names, flags, *tensors, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    @property
    def graph_breaks(self) -> list[str]:
        return self.__dict__["_compiled"].graph_breaks

    def explain(self) -> list[str]:
        """Why each retrace happened, then each graph break's reason (the flattened
        arguments named: a submodule's training flag, a parameter or buffer, ``input[i]``)."""
        layout = self.__dict__["_layout"] or self._read_layout()
        _, names, _, _, paths = layout
        labels = [f"name of {n}" for n in names]
        labels += [f"{p or type(self._orig_mod).__name__}.training" for p in paths]
        labels += list(names)

        def label(m: re.Match[str]) -> str:
            i = int(m.group(1))
            return labels[i] if i < len(labels) else f"input[{i - len(labels)}]"

        return [re.sub(r"args\[(\d+)\]", label, r) for r in self.__dict__["_compiled"].explain()]


def compile(  # noqa: A001 (torch.compile's name)
    model: Any = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: Any = "ember",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
    _forward_only: bool = False,
) -> Any:
    """``model`` (a function or a module) compiled ahead of time per argument signature
    (NOTE [ember.compile]); with no ``model``, a decorator. ``_forward_only`` (what
    ``Module.compile`` asks): the module's class ``forward`` is traced, without its hooks.

    >>> lin = ember.nn.Linear(3, 2)
    >>> fast = ember.compile(lin, backend="aot_eager")
    >>> bool(ember.allclose(fast(ember.ones(4, 3)), lin(ember.ones(4, 3))))
    True
    """
    if model is None:

        def decorate(m: Any) -> Any:
            return compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)  # fmt: skip

        return decorate
    if disable:
        return model
    if dynamic:
        warnings.warn(
            "ember.compile(dynamic=True): ember traces static shapes; each new shape is a "
            "new graph (up to the recompile limit)",
            stacklevel=2,
        )
    _tier_for(mode) if backend == "ember" else None
    if isinstance(model, Module):
        return OptimizedModule(model, backend, mode, fullgraph, _forward_only)
    if not callable(model):
        raise TypeError(f"ember.compile: expected a function or a Module, got {type(model)}")
    return _Compiled(model, backend, mode, fullgraph)


def _disable_dynamo(fn: Any = None, recursive: bool = True) -> Any:
    """PyTorch's ``torch._disable_dynamo``: marks ``fn`` as never traced by its compiler
    (a decorator, with or without arguments). ember.compile traces through ``make_fx``,
    which sees the ops ``fn`` runs either way, so ``fn`` comes back unchanged.

    >>> ember._disable_dynamo(abs) is abs
    True
    """
    if fn is None:
        return lambda f: _disable_dynamo(f, recursive)
    return fn
