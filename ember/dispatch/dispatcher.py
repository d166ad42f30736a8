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
what ``__torch_dispatch__`` code written for PyTorch expects.

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
    BACKEND_KEYS,
    CPU_BIT,
    DEVICE_BITS,
    NUM_RUNTIME_KEYS,
    DispatchKey,
    below,
)

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
_ABOVE_OPS = frozenset((DispatchKey.TorchFunction, DispatchKey.TorchFunctionMode))


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


def invalidate() -> None:
    for op in all_ops:
        op._table = None


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
        # stands in for its request (NOTE [torch function keys])
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
    invalidate()


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


def _keyset_lines(schema: FunctionSchema) -> list[str]:
    """Body lines that OR the keys of a call's tensor arguments into ``ks``. An op with no
    tensor argument (a factory) takes the key of its ``device`` argument (BackendSelect)."""
    lines = ["    ks = 0", "    n = len(args)"]
    pos = 0
    for a in schema.arguments:
        if a.type.base == "Tensor":
            if a.kwarg_only:
                lines.append(f"    a = kwargs.get({a.name!r})")
            else:
                lines.append(f"    a = args[{pos}] if n > {pos} else kwargs.get({a.name!r})")
            if a.type.is_list:
                lines += [
                    "    if a is not None:",
                    "        for t in a:",
                    "            if isinstance(t, T): ks |= t._keys",
                    "            elif t is not None: ks |= OTHER[type(t)]",
                ]
            else:
                lines += [
                    "    if isinstance(a, T): ks |= a._keys",
                    "    elif a is not None: ks |= OTHER[type(a)]",
                ]
        if not a.kwarg_only:
            pos += 1
    if any(a.name == "device" and a.type.base == "Device" for a in schema.arguments):
        lines += [
            "    if not ks:",
            "        d = kwargs.get('device')",
            "        ks = CPU if d is None else BITS[str(d).partition(':')[0]]",
        ]
    return lines + ["    ks = ks or CPU"]


_DISPATCH_TAIL = """
    if ACTIVE[0]:
        ks = (ks | local.include) & ~local.exclude
        if not ks:
            raise RuntimeError(f"{op}: every key of the call is excluded; nothing can run it")
    table = op._table
    if table is None:
        table = build_table(op)
    fn, kind = table[ks.bit_length() - 1]
    if kind == 0:
        return fn(*args, **kwargs)
    if kind == 1:
        return fn(ks, *args, **kwargs)
    return fn(op, ks, args, kwargs)
"""


_INTERNAL_TAIL = _DISPATCH_TAIL.replace(
    "    table = op._table\n", "    ks &= REAL\n    table = op._table\n", 1
)


def make_dispatch_fns(
    op: OpOverload,
) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., int]]:
    """Generate, from the op's schema, ``dispatch(*args, **kwargs)`` (the whole hot path:
    key set of the arguments, thread-local include/exclude, table lookup, call),
    ``public(*args, **kwargs)`` and ``keyset(args, kwargs)``. See NOTE [kernel lookup].

    ``public`` is what the public API calls: it may return TORCH_FUNCTION (NOTE [torch
    function keys] in ``ember/_torch_function.py``). ``dispatch`` is for ember's own calls
    from below the public API (formulas, kernels, the optimizers' fast paths): it masks the
    torch-function keys away, as PyTorch's C++ calls never reach Python handlers."""
    from ember.dispatch.state import ACTIVE, local

    body = _keyset_lines(op._schema)
    src = "\n".join(
        [
            "def dispatch(*args, **kwargs):",
            *body,
            _INTERNAL_TAIL,
            "def public(*args, **kwargs):",
            *body,
            _DISPATCH_TAIL,
            "def keyset(args, kwargs):",
            *body,
            "    return ks",
        ]
    )
    scope: dict[str, Any] = {
        "CPU": CPU_BIT, "BITS": _DEVICE_BITS, "ACTIVE": ACTIVE, "local": local, "op": op,
        "build_table": build_table, "OTHER": ARGUMENT_KEYS,
        "REAL": below(DispatchKey.TorchFunction),
        "T": TENSOR_TYPE[0] if TENSOR_TYPE[0] is not object else _TensorCheck(),
    }  # fmt: skip
    dispatch = define(src.split("\n"), scope, "dispatch", f"dispatch {op}")
    return dispatch, scope["public"], scope["keyset"]


def bind_tensor_type(tensor_type: type) -> None:
    """Called once by ``ember._tensor``: generated key-set functions test the real class."""
    TENSOR_TYPE[0] = tensor_type
    for op in all_ops:
        op._dispatch.__globals__["T"] = tensor_type
