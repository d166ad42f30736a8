"""Kernel tables: registration, lookup order, fallbacks, and the key set of a call.

# NOTE [kernel lookup]
Each op keeps one kernel table: entry ``k`` is what runs when ``k`` is the highest key of a
call's key set. It is built on first use and dropped after any registration. Entry ``k`` is,
in order: the op's own kernel for ``k``; for a backend key, its CompositeExplicitAutograd
kernel; its CompositeImplicitAutograd kernel (a decomposition into other ops, each of which
dispatches on its own); the boxed fallback registered for ``k``; else an error naming the op,
the key and the keys the op has kernels for.

Decompositions come *before* fallbacks, as in c10 (``computeDispatchTableEntry``): a Python
or Lazy fallback then sees the parts of a CompositeImplicit op, never the op itself, which is
what ``__torch_dispatch__`` code written for PyTorch expects. The keys c10 does not let the
alias stand for (``keys.FALLBACK_BEFORE_DECOMPOSITION``: the torch-function keys, autocast)
take their fallback first.

Kernels come in three calling conventions (``KIND_*``): plain (the op's own arguments),
with-keyset (the key set first, to redispatch below itself), and boxed
(``fn(op, keyset, args, kwargs)``, one function for every op: fallbacks).

# NOTE [specialized fallbacks]
A boxed fallback pays for its generality on every call: it finds the op's Tensor arguments
and what to do with them at run time. A fallback may come with a ``specialize(op)`` that,
when an op's table is built, returns a kernel made for that op (any calling convention) to
stand in the fallback's place. It must behave as the fallback would; it only does it
faster. The Autograd key uses it for PyTorch's generated per-op autograd kernels (NOTE
[generated recorders] in ``ember/autograd/recorder.py``). Registering a fallback without
one drops the old specializer, so a user's fallback is never bypassed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ember.device import DeviceBits
from ember.dispatch import state as _state
from ember.dispatch.codegen import define
from ember.dispatch.keys import (
    AUTOGRAD_BIT,
    BACKEND_KEYS,
    CPU_BIT,
    DEVICE_BITS,
    FALLBACK_BEFORE_DECOMPOSITION,
    NUM_RUNTIME_KEYS,
    DispatchKey,
    below,
)
from ember.dispatch.state import ACTIVE

_TF_MODE_BIT = 1 << DispatchKey.TorchFunctionMode

if TYPE_CHECKING:
    from ember.ops.registry import OpOverload
    from ember.ops.schema import FunctionSchema

KIND_PLAIN, KIND_KEYSET, KIND_BOXED = 0, 1, 2
Kernel = tuple[Callable[..., Any], int]

fallbacks: dict[DispatchKey, Kernel] = {}
#: per key, ``specialize(op) -> Kernel`` standing in for the fallback (NOTE [specialized
#: fallbacks])
specializers: dict[DispatchKey, Callable[[OpOverload], Kernel]] = {}
all_ops: list[OpOverload] = []
_VALID = frozenset(int(k) for k in DispatchKey if k < NUM_RUNTIME_KEYS)
#: keys whose fallback comes before an op's decompositions
_ABOVE_OPS = FALLBACK_BEFORE_DECOMPOSITION
_CPU_ENTRY = CPU_BIT.bit_length() - 1


class _FactoryDeviceBits(DeviceBits):
    """A factory's ``device=`` -> its backend bit; a device with no key raises PyTorch's
    error, except while a TorchFunctionMode is on: then the call goes to the mode first
    (0 here leaves the key set to the mode's key), as PyTorch's argument parser hands a
    factory to modes before it parses ``device``, so a mode can implement a device ember
    does not know (``ember.empty(4, device="my_device")``)."""

    def __missing__(self, name: str) -> int:
        if _state.local.function_modes and not _state.local.exclude & _TF_MODE_BIT:
            return 0
        return super().__missing__(name)


_DEVICE_BITS = _FactoryDeviceBits(DEVICE_BITS)
#: the Tensor class, once ember._tensor has defined it (the dispatcher sits below it)
TENSOR_TYPE: list[type[Any]] = [object]


def invalidate(op: OpOverload | None = None) -> None:
    """Drop the kernel table of ``op`` (of every op when None), to be rebuilt on next use:
    after a registration, or when what a fallback's specializer makes for it changed."""
    if op is not None:
        op._table = None
        return
    for o in all_ops:
        o._table = None


def build_table(op: OpOverload) -> list[Kernel]:
    table = [entry(op, k) for k in range(NUM_RUNTIME_KEYS)]
    op._table = table
    return table


def entry(op: OpOverload, key: int) -> Kernel:
    """The kernel that runs for ``op`` when ``key`` is the highest key (NOTE [kernel lookup])."""
    if key not in _VALID:
        return missing_entry(op, key)
    dkey = DispatchKey(key)
    own = op._kernels.get(dkey)
    if own is not None:
        return own
    if dkey in _ABOVE_OPS:
        # __torch_function__ asks before an op runs at all, so a decomposition never
        # stands in for its request (NOTE [torch function keys]); autocast passes the ops
        # it does not cast down whole (``FALLBACK_BEFORE_DECOMPOSITION``)
        fallback = fallbacks.get(dkey)
        if fallback is not None:
            return fallback
    if dkey in BACKEND_KEYS:
        explicit = op._kernels.get(DispatchKey.CompositeExplicitAutograd)
        if explicit is not None:
            return explicit
    implicit = op._kernels.get(DispatchKey.CompositeImplicitAutograd)
    if implicit is not None:
        return implicit
    fallback = fallbacks.get(dkey)
    if fallback is not None:
        special = specializers.get(dkey)
        return fallback if special is None else special(op)
    return missing_entry(op, key)


def missing_entry(op: OpOverload, key: int) -> Kernel:
    def missing(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        have = ", ".join(k.name for k in op.kernel_keys()) or "none"
        kname = DispatchKey(key).name if key in _VALID else str(key)
        raise NotImplementedError(
            f"Could not run '{op.name()}' with arguments from the '{kname}' backend: the op has "
            f"no kernel for {kname} and {kname} has no fallback. Keys with kernels: {have}. "
            f"Register one with ember.library.Library('{op.namespace}', 'IMPL')"
            f".impl('{op.__name__}', fn, '{kname}')."
        )

    return missing, KIND_BOXED


def call_kernel(
    op: OpOverload, kernel: Kernel, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """Call ``kernel`` for ``op`` with key set ``ks``: the one place outside generated code
    that decides between the three calling conventions (``KIND_*``; generated code inlines
    the same decision from one template, ``_CALL``)."""
    fn, kind = kernel
    if kind == KIND_PLAIN:
        return fn(*args, **kwargs)
    if kind == KIND_KEYSET:
        return fn(ks, *args, **kwargs)
    return fn(op, ks, args, kwargs)


def table_of(op: OpOverload) -> list[Kernel]:
    """``op``'s kernel table, built if a registration dropped it (NOTE [kernel lookup])."""
    return op._table or build_table(op)


def as_plain(op: OpOverload, kernel: Kernel, ks: int) -> Callable[..., Any]:
    """``kernel`` as a function of the op's own arguments, run with key set ``ks``."""
    fn, kind = kernel
    if kind == KIND_PLAIN:
        return fn
    if kind == KIND_KEYSET:
        return lambda *a, **k: fn(ks, *a, **k)
    return lambda *a, **k: fn(op, ks, a, k)


def direct_cpu_kernel(op: OpOverload, a: Any, b: Any) -> Callable[..., Any] | None:
    """``op``'s plain CPU kernel when a call on tensors ``a`` and ``b`` would run it and
    nothing else (both carry the CPU key alone, no with-block changes any thread's keys),
    else None: the one question a fast path in the catalogue asks instead of reading keys.

    >>> from ember.dispatch.dispatcher import direct_cpu_kernel
    >>> a = ember.ones(2, 2)
    >>> direct_cpu_kernel(ember.ops.aten.mm.default, a, a) is not None
    True
    """
    if a._ekeys == CPU_BIT == b._ekeys and not ACTIVE[0]:
        fn, kind = (op._table or build_table(op))[_CPU_ENTRY]
        if kind == KIND_PLAIN:
            return fn
    return None


def runs_cpu_kernel_alone(t: Any) -> bool:
    """Whether a call on tensor ``t`` whose result has no gradient (``ones_like``) runs its
    CPU kernel and nothing else: ``t`` carries the CPU key, perhaps with Autograd (whose
    kernel passes such a call through), and no with-block changes any thread's keys (no
    mode, no forward AD, no excluded key); the question a fast path outside ``dispatch/``
    asks instead of reading keys.

    >>> from ember.dispatch.dispatcher import runs_cpu_kernel_alone
    >>> runs_cpu_kernel_alone(ember.ones(2, requires_grad=True))
    True
    """
    return t._ekeys | AUTOGRAD_BIT == _CPU_AUTOGRAD and not ACTIVE[0]


_CPU_AUTOGRAD = CPU_BIT | AUTOGRAD_BIT


def device_keys(device_type: str) -> int:
    """The key set a kernel redispatches with to reach device ``device_type``'s backend
    kernel (PyTorch's error for a device ember has no backend for).

    >>> from ember.dispatch.dispatcher import device_keys
    >>> device_keys("cpu")
    1
    """
    return _DEVICE_BITS[device_type]


def fallthrough_entry(key: DispatchKey) -> Kernel:
    mask = below(key)

    def fallthrough(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return op.redispatch(ks & mask, *args, **kwargs)

    return fallthrough, KIND_BOXED


def set_kernel(op: OpOverload, key: DispatchKey, fn: Callable[..., Any] | None, kind: int) -> None:
    if fn is None:
        op._kernels.pop(key, None)
    else:
        op._kernels[key] = (fn, kind)
    invalidate(op)


def set_fallback(
    key: DispatchKey,
    fn: Callable[..., Any] | None,
    kind: int = KIND_BOXED,
    specialize: Callable[[OpOverload], Kernel] | None = None,
) -> None:
    """Register (or with ``None`` remove) the boxed fallback ``fn(op, keyset, args, kwargs)``,
    with an optional ``specialize(op)`` making per-op kernels that stand in for it (NOTE
    [specialized fallbacks])."""
    if fn is None:
        fallbacks.pop(key, None)
    else:
        fallbacks[key] = (fn, kind)
    if specialize is None:
        specializers.pop(key, None)
    else:
        specializers[key] = specialize
    invalidate()


def set_fallthrough(key: DispatchKey) -> None:
    """Make ``key`` transparent: ops with no kernel for it go straight to the next key."""
    fallbacks[key] = fallthrough_entry(key)
    specializers.pop(key, None)
    invalidate()


# --------------------------------------------------------------------------- key sets


class _ArgumentKeys(dict[type, int]):
    """The keys a non-Tensor object passed where the schema takes a Tensor adds to a call:
    ``TorchFunction`` for a tensor-like (its class overrides ``__torch_function__``), else 0.
    Computed once per type by ``classify`` (set by ``ember.overrides``)."""

    classify: Callable[[type], int] = staticmethod(lambda t: 0)  # type: ignore[assignment]

    def __missing__(self, t: type) -> int:
        keys = self[t] = self.classify(t)
        return keys


ARGUMENT_KEYS = _ArgumentKeys()


class _TensorCheck:
    """Stands in for ``Tensor`` in generated code until the class exists (then rebound)."""

    def __instancecheck__(self, x: Any) -> bool:
        return isinstance(x, TENSOR_TYPE[0])


# NOTE [dispatch per layout]
# The generated hot path depends on an op only through its *layout*: where its Tensor and
# Tensor[] parameters sit (position, or keyword-only) and whether it takes a ``device``. The
# parameter names and the op itself are arguments of a factory made once per layout (about
# 50 layouts serve some 1,300 ops), so importing ember compiles a few thousand generated
# lines, not one function per op. ``dispatch`` (ember's own calls) and ``public`` (the
# public API's) come from one template, ``_CALL``; only ``dispatch`` masks the
# torch-function keys away. ``keyset(args, kwargs)``, the same key-set body for the boxed
# paths that need a call's keys without dispatching it, comes from a second factory per
# layout, generated when an op of the layout first asks (most never do).

Layout = tuple[tuple[tuple[int | None, bool], ...], bool]


def layout_of(schema: FunctionSchema) -> tuple[Layout, tuple[str, ...]]:
    """The op's layout (NOTE [dispatch per layout]) and the names of its Tensor parameters."""
    tensors: list[tuple[int | None, bool]] = []
    names: list[str] = []
    pos = 0
    for a in schema.arguments:
        if a.type.base == "Tensor":
            tensors.append((None if a.kwarg_only else pos, a.type.is_list))
            names.append(a.name)
        if not a.kwarg_only:
            pos += 1
    device = any(a.name == "device" and a.type.base == "Device" for a in schema.arguments)
    return (tuple(tensors), device), tuple(names)


def _keyset_lines(layout: Layout) -> list[str]:
    """Body lines that OR the keys of a call's tensor arguments into ``ks``. An op with no
    tensor argument (a factory) takes the key of its ``device`` argument (BackendSelect).
    The i-th Tensor parameter's name is the factory's argument ``N{i}``."""
    tensors, device = layout
    lines = ["    ks = 0", "    n = len(args)"] if tensors else ["    ks = 0"]
    for i, (pos, is_list) in enumerate(tensors):
        if pos is None:
            lines.append(f"    a = kwargs.get(N{i})")
        else:
            lines.append(f"    a = args[{pos}] if n > {pos} else kwargs.get(N{i})")
        if is_list:
            lines += [
                "    if a is not None:",
                "        for t in a:",
                "            if isinstance(t, T): ks |= t._ekeys",
                "            elif t is not None: ks |= OTHER[type(t)]",
            ]
        else:
            lines += [
                "    if isinstance(a, T): ks |= a._ekeys",
                "    elif a is not None: ks |= OTHER[type(a)]",
            ]
    if device:
        lines += [
            "    if not ks:",
            "        d = kwargs.get('device')",
            "        ks = CPU if d is None else BITS[str(d).partition(':')[0]]",
        ]
    return lines + ["    ks = ks or CPU"]


#: the one template of a generated call (``{mask}`` is empty for ``public``): the effective
#: key set (``state.effective_keys`` inlined, only while some with-block changes the thread's
#: sets: NOTE [fast path counter]), the table entry of its highest key, and the one calling
#: convention (``call_kernel``)
_CALL = """
    if ACTIVE[0]:
        ks = (ks | local.include) & ~local.exclude
        if not ks:
            raise RuntimeError(f"{{op}}: every key of the call is excluded; nothing can run it")
{mask}    fn, kind = (op._table or build_table(op))[ks.bit_length() - 1]
    if kind == 0:
        return fn(*args, **kwargs) if kwargs else fn(*args)
    if kind == 1:
        return fn(ks, *args, **kwargs)
    return fn(op, ks, args, kwargs)
"""


def lookup_source(ks: str) -> str:
    """Generated-code expression for the ``(fn, kind)`` entry of ``op``'s table for the
    highest key of the key set named ``ks`` (``op`` and ``build_table`` in scope): the
    lookup of ``_CALL``, for templates elsewhere (the autograd recorders)."""
    return f"(op._table or build_table(op))[{ks}.bit_length() - 1]"


def call_source(ks: str) -> str:
    """Generated-code expression calling ``fn`` of kind ``kind`` with key set ``ks``: the
    calling-convention decision of ``call_kernel``, for templates elsewhere."""
    return (
        f"fn(*args, **kwargs) if kind == 0 else fn({ks}, *args, **kwargs) if kind == 1 "
        f"else fn(op, {ks}, args, kwargs)"
    )


_FACTORIES: dict[Layout, Callable[..., Any]] = {}
#: the globals every factory shares (``T`` is rebound once the Tensor class exists)
_SCOPE: dict[str, Any] = {}


def _scope() -> dict[str, Any]:
    """The globals every factory shares, made on first use."""
    if not _SCOPE:
        _SCOPE.update(
            CPU=CPU_BIT, BITS=_DEVICE_BITS, ACTIVE=ACTIVE, local=_state.local,
            build_table=build_table, OTHER=ARGUMENT_KEYS, REAL=below(DispatchKey.TorchFunction),
            T=TENSOR_TYPE[0] if TENSOR_TYPE[0] is not object else _TensorCheck(),
        )  # fmt: skip
    return _SCOPE


def _factory(layout: Layout) -> Callable[..., Any]:
    """The function making the two generated dispatch functions of every op of ``layout``."""
    made = _FACTORIES.get(layout)
    if made is not None:
        return made
    body = _keyset_lines(layout)
    params = ", ".join(["op"] + [f"N{i}" for i in range(len(layout[0]))])
    name = f"layout_{len(_FACTORIES)}"
    lines = [
        f"def {name}({params}):",
        *("    " + line for line in ["def dispatch(*args, **kwargs):", *body]),
        *("    " + line for line in _CALL.format(mask="    ks &= REAL\n").split("\n")),
        *("    " + line for line in ["def public(*args, **kwargs):", *body]),
        *("    " + line for line in _CALL.format(mask="").split("\n")),
        "    return dispatch, public",
    ]
    lines = [line if line.strip() else "" for line in lines]
    made = _FACTORIES[layout] = define(lines, _scope(), name, f"dispatch {name} {layout}")
    return made


#: layout -> the function making ``keyset(args, kwargs)`` for an op of that layout
_KEYSET_FACTORIES: dict[Layout, Callable[..., Any]] = {}


def _keyset_factory(layout: Layout) -> Callable[..., Any]:
    """The function making ``keyset(args, kwargs)`` for the ops of ``layout``: generated on
    the first call of one (only boxed paths ask: ``decompose``, the Python key's default
    ``__torch_dispatch__``), so importing ember executes none (NOTE [dispatch per layout])."""
    made = _KEYSET_FACTORIES.get(layout)
    if made is not None:
        return made
    params = ", ".join(f"N{i}" for i in range(len(layout[0])))
    name = f"keyset_{len(_KEYSET_FACTORIES)}"
    lines = [
        f"def {name}({params}):",
        *("    " + line for line in ["def keyset(args, kwargs):", *_keyset_lines(layout)]),
        "        return ks",
        "    return keyset",
    ]
    made = _KEYSET_FACTORIES[layout] = define(lines, _scope(), name, f"keyset {name} {layout}")
    return made


def _first_keyset(op: OpOverload, layout: Layout, names: tuple[str, ...]) -> Callable[..., int]:
    """``op``'s ``keyset`` until its first call, which makes the real one and puts it in
    ``op._keyset`` (every caller reads the attribute: nothing keeps this one)."""

    def keyset(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        real = op._keyset = _keyset_factory(layout)(*names)
        return real(args, kwargs)  # type: ignore[no-any-return]

    return keyset


def make_dispatch_fns(
    op: OpOverload,
) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., int]]:
    """``dispatch(*args, **kwargs)`` (the whole hot path: key set of the arguments,
    thread-local include/exclude, table lookup, call), ``public(*args, **kwargs)`` and
    ``keyset(args, kwargs)`` for ``op``, from its layout's factories (NOTE [dispatch per
    layout], NOTE [kernel lookup]); ``keyset`` is generated on its first call.

    ``public`` is what the public API calls: it may return TORCH_FUNCTION (NOTE [torch
    function keys] in ``ember/dispatch/protocols.py``). ``dispatch`` is for ember's own calls
    from below the public API (formulas, kernels, the optimizers' fast paths): it masks the
    torch-function keys away, as PyTorch's C++ calls never reach Python handlers."""
    layout, names = layout_of(op._schema)
    dispatch, public = _factory(layout)(op, *names)
    return dispatch, public, _first_keyset(op, layout, tuple(names))


def bind_tensor_type(tensor_type: type) -> None:
    """Called once by ``ember._tensor``: generated key-set functions test the real class."""
    TENSOR_TYPE[0] = tensor_type
    if _SCOPE:
        _SCOPE["T"] = tensor_type
