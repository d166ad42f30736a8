"""The Python dispatch key: ``TorchDispatchMode`` s and ``__torch_dispatch__`` of Tensor
subclasses, below Autograd and above the backends.

# NOTE [python key]
A tensor whose class overrides ``__torch_dispatch__`` carries the Python key in ``_ekeys``
(set when it is made, as the TorchFunction key is: ``classify`` in
``ember/dispatch/protocols.py``); a non-empty dispatch-mode stack puts the key in the thread's
include set. Either way the op's table entry for the key is ``python_fallback``, one boxed
function for every op (kernel lookup step 4), so handlers see the parts of composite ops, and
backward ops too, since formulas dispatch like any other call. The fallback:

1. strips the arguments that equal their defaults (``strip_defaults``: what PyTorch's
   handlers receive; ``ember.fx.operator_schemas.normalize_function`` puts them back) and
   types the rest as PyTorch's parser does (``dim=1`` for an ``int[]`` is ``[1]``);
2. asks the top mode, popped for the duration (its own calls go to the next mode, or to the
   arguments' classes), then each overloaded argument's class, subclasses first; the first
   result that is not NotImplemented is checked against the schema's returns and returned;
3. with no mode and no overloaded argument (the key was included by other means), runs the
   op below the key.
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.device import device
from ember.dispatch import dispatcher, state
from ember.dispatch.keys import AUTOGRAD_BIT, PYTHON_BIT, DispatchKey, below
from ember.dispatch.protocols import disabled_torch_dispatch_impl
from ember.ops.binding import strip_defaults
from ember.ops.registry import OpOverload

_BELOW_PYTHON = below(DispatchKey.Python)
_local = state.local


class _Plan:
    """What the fallback needs of an op's schema, worked out once per op."""

    __slots__ = (
        "slots", "required", "converters", "written", "options", "fill_device", "returns_arg",
        "view_arg", "view_base", "one_tensor",
    )  # fmt: skip

    def __init__(self, op: OpOverload) -> None:
        #: (position or -1, name, is a list) of each Tensor parameter, in schema order
        self.slots: list[tuple[int, str, bool]] = []
        #: (position or -1, name) of each Tensor parameter the op writes
        self.written: list[tuple[int, str]] = []
        pos = 0
        for a in op._schema.arguments:
            if a.type.base == "Tensor":
                self.slots.append((-1 if a.kwarg_only else pos, a.name, a.type.is_list))
                if a.is_write and not a.type.is_list:
                    self.written.append((-1 if a.kwarg_only else pos, a.name))
            if not a.kwarg_only:
                pos += 1
        #: positional parameters without a default: a call giving no more has none to strip
        self.required = sum(1 for a in op._schema.positional if not a.has_default_value())
        self.converters = _converters(op)
        #: the keyword-only parameters, in schema order, of an op with TensorOptions
        #: (``pin_memory``): PyTorch's handlers see ``pin_memory`` always, and a factory's
        #: ``device`` always (NOTE [factory options at the python key])
        kw = [a.name for a in op._schema.arguments if a.kwarg_only]
        name = op._schema.name.rpartition("::")[2]
        public = not self.slots or name.endswith("_like") or name.startswith("new_")
        self.options: tuple[str, ...] | None = tuple(kw) if "pin_memory" in kw and public else None
        self.fill_device = not self.slots and "device" in kw
        # NOTE [python key results]: where the op's result is one of its arguments (an
        # in-place or out= op), or a view of one, PyTorch's keys above the Python key
        # (ADInplaceOrView, Autograd) make it so whatever the handler returned
        schema = op._schema
        self.returns_arg: tuple[int, str] | None = None
        rets = schema.returns
        if len(rets) == 1 and rets[0].alias_info is not None and rets[0].alias_info.is_write:
            pos = 0
            for a in schema.arguments:
                if (
                    a.alias_info is not None
                    and a.alias_info.before_set & rets[0].alias_info.before_set
                ):
                    self.returns_arg = (-1 if a.kwarg_only else pos, a.name)
                    break
                if not a.kwarg_only:
                    pos += 1
        #: the op returns exactly one Tensor: ``check_returns`` is one isinstance test
        self.one_tensor = (
            len(rets) == 1
            and rets[0].type.base == "Tensor"
            and not rets[0].type.is_list
            and not rets[0].type.optional
        )
        self.view_arg = schema.view_of
        #: a view op that also records its base (every one but detach: PyTorch's detach
        #: shares the version counter only)
        self.view_base = name != "detach"


_PLANS: dict[OpOverload, _Plan] = {}


def _plan(op: OpOverload) -> _Plan:
    plan = _PLANS.get(op)
    if plan is None:
        plan = _PLANS[op] = _Plan(op)
    return plan


def overloaded_tensors(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The tensor arguments (and elements of Tensor[] arguments), in schema order, whose
    class handles ``__torch_dispatch__``: unique by type, subclasses first."""
    return _overloaded(_plan(op), args, kwargs)


def _overloaded(plan: _Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    found: list[Any] = []
    n = len(args)
    for pos, name, is_list in plan.slots:
        x = args[pos] if 0 <= pos < n else kwargs.get(name)
        if x is None:
            continue
        if is_list:
            for t in x:
                if isinstance(t, Tensor) and t._ekeys & PYTHON_BIT:
                    _add(found, t)
        elif isinstance(x, Tensor) and x._ekeys & PYTHON_BIT:
            _add(found, x)
    return found


def _add(found: list[Any], x: Any) -> None:
    if not found:
        found.append(x)
        return
    t = type(x)
    for f in found:
        if type(f) is t:
            return
    for i, f in enumerate(found):
        if issubclass(t, type(f)):
            found.insert(i, x)
            return
    found.append(x)


def python_fallback(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The Python key's kernel for every op (NOTE [python key])."""
    plan = _PLANS.get(op) or _plan(op)
    overloaded = _overloaded(plan, args, kwargs)
    stack = _local.dispatch_modes
    if not stack and not overloaded:
        return op.redispatch(ks & _BELOW_PYTHON, *args, **kwargs)
    if kwargs or len(args) > plan.required:
        sargs, skwargs = strip_defaults(op, args, kwargs)
    else:
        sargs, skwargs = args, kwargs
    if plan.converters is not None:
        sargs, skwargs = typed_arguments(op, sargs, skwargs)
    if plan.options is not None:
        skwargs = _with_options(plan, skwargs)
    types = (type(overloaded[0]),) if len(overloaded) == 1 else tuple(map(type, overloaded))
    # handlers run below autograd: the ops they run are not recorded (unless they enable
    # re-entrant dispatch), whether or not the call itself came through the Autograd key
    versions = _versions(plan, args, kwargs) if plan.written else None
    if stack:  # the top mode first, popped for its handler (state.call_popped)
        handler = stack[-1].__torch_dispatch__
        result = state.call_popped(
            stack, PYTHON_BIT, AUTOGRAD_BIT, handler, (op, types, sargs, skwargs)
        )
        if result is NotImplemented and overloaded:
            result = state.call_excluding(
                AUTOGRAD_BIT, _by_class, (op, overloaded, types, sargs, skwargs)
            )
    else:
        result = state.call_excluding(
            AUTOGRAD_BIT, _by_class, (op, overloaded, types, sargs, skwargs)
        )
    if result is not NotImplemented:
        if versions:
            # a handler that wrote through an inner tensor left the wrapper's counter as
            # it was: bump it, as PyTorch's ADInplaceOrView key does above the Python key
            for t, v in versions:
                if t._version == v:
                    t._bump_version()
        if not (plan.one_tensor and isinstance(result, Tensor)):
            result = check_returns(op, result)
        if plan.returns_arg is not None:
            pos, name = plan.returns_arg
            written = args[pos] if 0 <= pos < len(args) else kwargs.get(name)
            if isinstance(written, Tensor):
                return written  # the very object the op was called on
        elif plan.view_arg is not None and isinstance(result, Tensor):
            base = args[plan.view_arg] if plan.view_arg < len(args) else None
            if isinstance(base, Tensor) and result is not base:
                _as_view_of(result, base, plan.view_base)
        return result
    raise TypeError(
        f"Multiple dispatch failed for '{op}'; all __torch_dispatch__ handlers returned "
        f"NotImplemented:\n\n  - tensor subclasses: {list(types)}\n\nFor more information, "
        "try re-running with TORCH_LOGS=not_implemented"
        if not stack
        else f"Multiple dispatch failed for '{op}': the mode and every __torch_dispatch__ "
        f"handler returned NotImplemented (types {list(types)})"
    )


_CPU = device("cpu")


def _with_options(plan: _Plan, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` of an op with TensorOptions as PyTorch's handlers get them.

    # NOTE [factory options at the python key]
    PyTorch's argument parser fills in TensorOptions of the ops it binds with them
    (factories, ``*_like``, ``new_*``) before the dispatcher runs, so at the Python key their
    ``pin_memory`` is always there (``False``), and a factory (no tensor argument) always
    has its ``device`` (the default device when none was given), while
    ``dtype`` and ``layout`` appear only when the caller gave them: ``ember.ones(2)`` reaches
    a mode as ``aten.ones.default([2], device=device(type='cpu'), pin_memory=False)``, as in
    PyTorch. The keywords keep the schema's order.
    """
    out: dict[str, Any] = {}
    for name in plan.options or ():
        v = kwargs.get(name)
        if v is None:
            if name == "pin_memory":
                v = False
            elif name == "device" and plan.fill_device:
                v = _CPU
            else:
                continue
        out[name] = v
    return out


def _as_view_of(out: Tensor, base: Tensor, record_base: bool) -> None:
    """Make a handler's result of a view op a view of ``base``: the same version counter
    (NOTE [views and versions] in ``ember/_tensor.py``) and, but for ``detach``, ``base``'s
    base as its ``_base`` (NOTE [python key results])."""
    if out._vc is not None and out._vc is base._vc:
        return  # already one (the handler ran the view op on the tensors themselves)
    if base._vc is None:
        base._vc = [0]
    out._vc = base._vc
    if record_base:
        out._base = base if base._base is None else base._base


def _versions(plan: _Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[Any, int]]:
    """(tensor, version) of each argument the op writes that a handler may write around."""
    out = []
    n = len(args)
    for pos, name in plan.written:
        t = args[pos] if 0 <= pos < n else kwargs.get(name)
        if isinstance(t, Tensor) and t._ekeys & PYTHON_BIT:
            out.append((t, t._version))
    return out


def _by_class(
    op: OpOverload,
    overloaded: list[Any],
    types: tuple[type, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """The first overloaded class's result that is not NotImplemented, else NotImplemented."""
    for t in overloaded:
        result = t.__torch_dispatch__(op, types, args, kwargs)
        if result is not NotImplemented:
            return result
    return NotImplemented


def _int_list(x: Any) -> Any:
    if isinstance(x, int) and not isinstance(x, bool):
        return [x]
    return list(x) if isinstance(x, tuple) else x


def _device_arg(x: Any) -> Any:
    return device(x) if isinstance(x, (str, int)) and not isinstance(x, bool) else x


def _converters(op: OpOverload) -> tuple[dict[int, Any], dict[str, Any]] | None:
    """Per position and per keyword, the conversion ``typed_arguments`` applies; None when
    the op has no parameter that needs one."""
    pos: dict[int, Any] = {}
    kw: dict[str, Any] = {}
    i = 0
    for a in op._schema.arguments:
        t = a.type
        conv = None
        if t.is_list and t.base in ("int", "SymInt"):
            conv = _int_list
        elif t.base == "Device":
            conv = _device_arg
        if conv is not None:
            if a.kwarg_only:
                kw[a.name] = conv
            else:
                pos[i] = conv
        if not a.kwarg_only:
            i += 1
    return (pos, kw) if pos or kw else None


def typed_arguments(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Arguments as PyTorch's parser hands them on: an int list is a list (``dim=1`` is
    ``[1]``), a device is a ``device``."""
    found = _plan(op).converters
    if found is None:
        return args, kwargs
    pos, kw = found
    if pos:
        args = tuple(pos[i](x) if i in pos and x is not None else x for i, x in enumerate(args))
    if kw and kwargs:
        kwargs = {k: kw[k](v) if k in kw and v is not None else v for k, v in kwargs.items()}
    return args, kwargs


def check_returns(op: OpOverload, result: Any) -> Any:
    """``result`` if it fits the schema's returns, else a RuntimeError naming the op."""
    returns = op._schema.returns
    if not returns:
        if result is not None:
            raise RuntimeError(
                f"{op}: __torch_dispatch__ returned {type(result).__name__}, but the op returns "
                "nothing; return None"
            )
        return result
    if len(returns) == 1:
        want = returns[0].type
        if want.base == "Tensor" and not want.is_list and not want.optional:
            if not isinstance(result, Tensor):
                raise RuntimeError(
                    f"{op}: __torch_dispatch__ returned {type(result).__name__}, but the op "
                    "returns a Tensor"
                )
        return result
    if not isinstance(result, (tuple, list)) or len(result) != len(returns):
        raise RuntimeError(
            f"{op}: __torch_dispatch__ returned {type(result).__name__}, but the op returns "
            f"{len(returns)} values; return a tuple of {len(returns)}"
        )
    return result


Tensor.__torch_dispatch__ = disabled_torch_dispatch_impl  # type: ignore[attr-defined]
dispatcher.set_fallback(DispatchKey.Python, python_fallback)
