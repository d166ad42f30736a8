"""Dispatch keys and key sets.

# NOTE [dispatch key order]
The enum value *is* the priority: the dispatcher runs the kernel of the highest key in a
call's key set. The order is c10's (``DispatchKey.h``): autograd above functionalization,
functionalization above the Python key, the Python key above every backend. Values are
spaced so that later keys (ADInplaceOrView, autocast, vmap, ...) can slot in between.

A key set is a plain ``int`` bitmask with bit ``1 << key``: union is ``|``, the highest key
is ``ks.bit_length() - 1``, and "everything below key k" is ``ks & ((1 << k) - 1)``.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class DispatchKey(IntEnum):  # value = priority: the highest key in a key set runs first
    CPU = 0
    Meta = 2
    Lazy = 4
    # a sparse COO tensor's backend key (c10's SparseCPU: Sparse above the dense backends),
    # kernels in ember/backends/sparse/ (NOTE [sparse layout] there)
    SparseCPU = 6
    BackendSelect = 8
    Python = 10
    Functionalize = 12
    # in a thread's include set while a vmap runs: random factories (no tensor argument)
    # follow vmap's ``randomness`` (PyTorch's FuncTorchVmapMode); every other op falls through
    FuncTorchVmapMode = 13
    ADInplaceOrView = 14
    # vmap's BatchedTensor (PyTorch's FuncTorchBatched): below Autograd, so a transform
    # inside vmap records its graph on the batched (logical) tensors (NOTE [vmap levels] in
    # ember/_batched/tensor.py)
    FuncTorchBatched = 15
    Autograd = 16
    # Forward-mode AD (NOTE [forward AD as a dispatch key] in ember/autograd/forward_ad/
    # _kernel.py): above Autograd, so a dual's tangent is computed before the primal is
    # recorded for backward, and formulas record too (forward over reverse).
    ForwardAD = 17
    # in a thread's include set while autocast is enabled for "cpu" (NOTE [autocast as a
    # dispatch key] in ember/amp/_kernel.py): above Autograd and ForwardAD, so the casts it
    # inserts are recorded for backward and get tangents, as c10 orders AutocastCPU above
    # the autograd keys
    AutocastCPU = 18
    PythonTLSSnapshot = 19
    PythonDispatcher = 20
    # in a thread's include set while make_fx(pre_dispatch=True) traces: it records each op
    # before autograd and before a CompositeImplicitAutograd decomposition (PyTorch's
    # PreDispatch; NOTE [pre-dispatch tracing] in ember/fx/experimental/_pre_dispatch.py)
    PreDispatch = 21
    # Above the dispatcher proper: PyTorch's Python argument parser checks these before any
    # key runs (NOTE [torch function keys] in ember/dispatch/protocols.py).
    TorchFunction = 22  # an argument's class overrides __torch_function__
    TorchFunctionMode = 24  # a TorchFunctionMode is on

    # Alias keys: registration targets only, never in a runtime key set.
    CompositeImplicitAutograd = 40
    CompositeExplicitAutograd = 41


#: the number of runtime keys a per-op kernel table holds
NUM_RUNTIME_KEYS = DispatchKey.TorchFunctionMode + 1

CPU_BIT = 1 << DispatchKey.CPU
META_BIT = 1 << DispatchKey.Meta
LAZY_BIT = 1 << DispatchKey.Lazy
SPARSE_CPU_BIT = 1 << DispatchKey.SparseCPU
PYTHON_BIT = 1 << DispatchKey.Python
FUNCTIONALIZE_BIT = 1 << DispatchKey.Functionalize
AUTOGRAD_BIT = 1 << DispatchKey.Autograd
FORWARD_AD_BIT = 1 << DispatchKey.ForwardAD
AUTOCAST_CPU_BIT = 1 << DispatchKey.AutocastCPU
BATCHED_BIT = 1 << DispatchKey.FuncTorchBatched
VMAP_MODE_BIT = 1 << DispatchKey.FuncTorchVmapMode
TORCH_FUNCTION_BIT = 1 << DispatchKey.TorchFunction
TORCH_FUNCTION_MODE_BIT = 1 << DispatchKey.TorchFunctionMode
PRE_DISPATCH_BIT = 1 << DispatchKey.PreDispatch

#: keys that name where data lives and that CompositeExplicitAutograd kernels serve; a
#: tensor has exactly one of them or SparseCPU (whose kernels are all its own: ember's
#: explicit kernels read dense data)
BACKEND_KEYS = (DispatchKey.CPU, DispatchKey.Meta, DispatchKey.Lazy)
#: the keys a tensor's data gives it, which its views, parameters and ``.data`` inherit:
#: its backend key, and Functionalize with Lazy (NOTE [functionalize] in
#: ``ember/functionalize/fallback.py``)
BACKEND_MASK = CPU_BIT | META_BIT | LAZY_BIT | SPARSE_CPU_BIT | FUNCTIONALIZE_BIT
#: the keys of a lazy tensor
LAZY_KEYS = LAZY_BIT | FUNCTIONALIZE_BIT
#: the backend key of each device type
DEVICE_BITS = {"cpu": CPU_BIT, "meta": META_BIT, "lazy": LAZY_BIT}
#: the backends a CompositeExplicitAutograd kernel serves
EXPLICIT_KEYS = BACKEND_KEYS
#: keys whose fallback serves an op before the op's CompositeImplicitAutograd kernel would
#: (NOTE [kernel lookup] in dispatcher.py): c10 lets that alias key stand for the backend and
#: autograd keys only, so a key outside them passes an op it has no kernel for down whole,
#: and the layers below (an Autograd or batching kernel of a composite op, a decomposition
#: run at the Autograd key) see it as they would without the key. The torch-function keys
#: ask before an op runs at all; autocast (NOTE [autocast as a dispatch key]) casts only
#: the ops of its lists and must not change what runs for the rest.
#: Pre-dispatch tracing records ops as the user called them.
FALLBACK_BEFORE_DECOMPOSITION = frozenset(
    (
        DispatchKey.TorchFunction,
        DispatchKey.TorchFunctionMode,
        DispatchKey.AutocastCPU,
        DispatchKey.PreDispatch,
    )
)


def keyset(*keys: DispatchKey) -> int:
    """The bitmask holding ``keys``."""
    out = 0
    for k in keys:
        out |= 1 << k
    return out


def keys_of(ks: int) -> list[DispatchKey]:
    """The keys in a key set, highest priority first (for messages and debugging)."""
    return [k for k in sorted(DispatchKey, reverse=True) if k < 32 and ks >> k & 1]


def highest(ks: int) -> DispatchKey:
    return DispatchKey(ks.bit_length() - 1)


def below(key: DispatchKey) -> int:
    """The mask of every key with lower priority than ``key``."""
    return (1 << key) - 1


def format_keyset(ks: int) -> str:
    return "DispatchKeySet(" + ", ".join(k.name for k in keys_of(ks)) + ")"


class DispatchKeySet:
    """A set of dispatch keys (a bitmask) as an object, as ``torch._C.DispatchKeySet``
    (``ember._C`` exports it); the dispatcher itself uses plain ints.

    >>> from ember.dispatch.keys import DispatchKey, DispatchKeySet
    >>> ks = DispatchKeySet(DispatchKey.CPU)
    >>> ks.has(DispatchKey.CPU), ks
    (True, DispatchKeySet(CPU))
    """

    __slots__ = ("_bits",)

    def __init__(self, keys: Any = 0) -> None:
        if isinstance(keys, DispatchKeySet):
            self._bits = keys._bits
        elif isinstance(keys, DispatchKey):
            self._bits = 1 << keys
        else:
            self._bits = int(keys)

    def has(self, key: DispatchKey) -> bool:
        return bool(self._bits >> key & 1)

    def __or__(self, other: Any) -> DispatchKeySet:
        return DispatchKeySet(self._bits | DispatchKeySet(other)._bits)

    def __sub__(self, other: Any) -> DispatchKeySet:
        return DispatchKeySet(self._bits & ~DispatchKeySet(other)._bits)

    def __and__(self, other: Any) -> DispatchKeySet:
        return DispatchKeySet(self._bits & DispatchKeySet(other)._bits)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DispatchKeySet) and other._bits == self._bits

    def __hash__(self) -> int:
        return hash(self._bits)

    def __int__(self) -> int:
        return self._bits

    def empty(self) -> bool:
        return self._bits == 0

    def highestPriorityTypeId(self) -> DispatchKey:  # noqa: N802 (PyTorch's name)
        return DispatchKey(self._bits.bit_length() - 1)

    def __iter__(self) -> Any:
        return iter(keys_of(self._bits))

    def __repr__(self) -> str:
        return "DispatchKeySet(" + ", ".join(k.name for k in keys_of(self._bits)) + ")"
