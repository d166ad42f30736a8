"""The AutocastCPU key's kernels: casts of floating CPU arguments, then the op below.

# NOTE [autocast as a dispatch key]
Autocast is a layer of the dispatcher, as in PyTorch, not a branch in any op: while an
autocast region for "cpu" is enabled, this thread's include set holds ``AutocastCPU``
(``ember.amp._state.set_cpu_enabled``), so every call reaches the key. Its fallback passes
an op through to the keys below, before the op's decomposition would run
(``keys.FALLBACK_BEFORE_DECOMPOSITION``), so the ops autocast does not list run exactly as
without it. The listed ops (NOTE [autocast policy] in ``_policy.py``) have kernels here
that cast their floating CPU tensor arguments (not float64) to the policy's dtype and run
the op again with the key excluded, so its decomposition's parts (``linear``'s ``t`` and
``addmm``) are not cast a second time. The key sits above Autograd and ForwardAD: the
casts are ``_to_copy`` ops those layers record, so gradients flow back to float32
parameters in float32, and a ``TorchDispatchMode`` (the Python key, below) sees the casts
and the lower-precision ops, as under PyTorch.

# NOTE [autocast cast cache]
Inside one region, the lower-precision cast of a float32 leaf that requires grad (a
parameter) is made once and reused by every later op (``cache_enabled``, on by default):
a weight used by several ops is cast once, and backward sums into one ``_to_copy`` node.
The cache holds the leaf weakly (an entry whose leaf died is never returned) and is
emptied when the outermost region exits (``ember.clear_autocast_cache``), as PyTorch's. A
cached cast is recorded for backward even when made under ``no_grad``, as PyTorch's: an
evaluation step inside a training region must not leave a weight's cast without history.
"""

from __future__ import annotations

import weakref
from typing import Any

from ember import dtypes
from ember._tensor import Tensor
from ember.amp import _state
from ember.amp._policy import FP32, LOWER, POLICY, PROMOTE
from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_BOXED
from ember.dispatch.keys import AUTOCAST_CPU_BIT, DispatchKey
from ember.dispatch.state import GradKeyGuard, KeyGuard
from ember.ops.registry import OpOverload, ops

KEY = DispatchKey.AutocastCPU
_TO_COPY = ops.aten._to_copy.default
_FLOAT32, _FLOAT64 = dtypes.float32, dtypes.float64


#: the devices whose tensors autocast for "cpu" casts: the CPU, and the lazy device, which
#: defers CPU work (PyTorch's lazy tensors have an autocast key of their own)
_DEVICES = ("cpu", "lazy")


def eligible(x: Any) -> bool:
    """Whether autocast for "cpu" may cast ``x``: a floating CPU (or lazy) tensor other than
    float64 (PyTorch's ``is_eligible``)."""
    return (
        isinstance(x, Tensor)
        and x.dtype.is_floating_point
        and x.dtype is not _FLOAT64
        and x.device.type in _DEVICES
    )


def cast(x: Any, to: Any) -> Any:
    """``x`` with its eligible tensors (also inside a list) cast to ``to``, lower-precision
    casts of parameters from the cache (NOTE [autocast cast cache])."""
    if isinstance(x, Tensor):
        if x.dtype is to or not eligible(x):
            return x
        loc = _state.local
        if (
            loc.cache_enabled
            and x.dtype is _FLOAT32
            and to is loc.dtype["cpu"]
            and x.requires_grad
            and x.grad_fn is None
            and x._base is None
        ):
            hit = loc.cache.get(id(x))
            if hit is not None and hit[0]() is x:
                return hit[1]
            with GradKeyGuard(True, 0):  # recorded even under no_grad: later ops reuse it
                out = _TO_COPY(x, dtype=to)
            loc.cache[id(x)] = (weakref.ref(x), out)
            return out
        return _TO_COPY(x, dtype=to)
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tensor) for e in x):
        return type(x)(cast(e, to) for e in x)
    return x


def _widest(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The dtype a promote op runs in: float32 if any eligible argument is float32, else the
    region's lower precision; float64 arguments are ignored (PyTorch's ``promote_type``)."""
    lower = _state.local.dtype["cpu"]
    out = lower
    for x in _tensors(args, kwargs):
        if not eligible(x) or x.dtype is lower:
            continue
        if x.dtype is _FLOAT32:
            out = _FLOAT32
        else:
            raise RuntimeError(
                f"autocast: a {x.dtype} argument with autocast's {lower}: cat, stack and "
                "index_copy run in the widest of float32 and the autocast dtype; cast the "
                f"argument to one of them first (PyTorch: Unexpected floating ScalarType in "
                "at::autocast::prioritize)"
            )
    return out


def _tensors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Tensor]:
    found: list[Tensor] = []
    for x in (*args, *kwargs.values()):
        if isinstance(x, Tensor):
            found.append(x)
        elif isinstance(x, (list, tuple)):
            found.extend(e for e in x if isinstance(e, Tensor))
    return found


def _run_cast(op: OpOverload, to: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``op`` on ``args`` cast to ``to``, run with the AutocastCPU key excluded (the casts
    and the op's decomposition are not cast again)."""
    with KeyGuard(exclude=AUTOCAST_CPU_BIT):
        args = tuple(cast(a, to) for a in args)
        kwargs = {k: cast(v, to) for k, v in kwargs.items()}
        return op._dispatch(*args, **kwargs)


def lower_kernel(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return _run_cast(op, _state.local.dtype["cpu"], args, kwargs)


def fp32_kernel(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return _run_cast(op, _FLOAT32, args, kwargs)


def promote_kernel(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return _run_cast(op, _widest(args, kwargs), args, kwargs)


_KERNELS = {LOWER: lower_kernel, FP32: fp32_kernel, PROMOTE: promote_kernel}


def _op_named(name: str) -> OpOverload | None:
    base, _, overload = name.partition(".")
    packet = getattr(ops.aten, base, None)
    if packet is None or (overload or "default") not in packet.overloads():
        return None
    return getattr(packet, overload or "default")  # type: ignore[no-any-return]


def missing() -> list[str]:
    """The overloads of PyTorch's CPU autocast lists that ember does not define."""
    return sorted(name for name in POLICY if _op_named(name) is None)


def register() -> None:
    """The key's fallthrough and one kernel per listed op (done once, on import)."""
    dispatcher.set_fallthrough(KEY)
    for name, policy in POLICY.items():
        op = _op_named(name)
        if op is not None:
            dispatcher.set_kernel(op, KEY, _KERNELS[policy], KIND_BOXED)


register()
