"""Public functions, Tensor methods and operators, generated from the op registry.

Nothing here names an op's arguments: each binding resolves the overload from the schemas
(``ember/ops/binding.py``) and calls it, so a new catalogue line is a new ``ember.<name>``
and ``Tensor.<name>`` with no other edit. The only hand-written table is ``DUNDERS``: which
Python operator means which op, which no schema can say.

# NOTE [binding fast paths]
A method of an op that takes nothing but ``self`` is its dispatch function, called directly.
A call with no keywords whose argument count picks exactly one overload skips resolution
(``fast``); when several overloads take that many arguments, matchers generated from their
schemas (``make_matcher``) pick the first that fits, in definition order. Int-list varargs
(``x.view(2, 3)``, ``ember.zeros(2, 3)``) are packed into one tuple when the op has an
overload taking a single int list there, as PyTorch's parser does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.device import as_device
from ember.dispatch.codegen import define
from ember.dispatch.protocols import GENERATED_MEMBERS
from ember.dispatch.protocols import TORCH_FUNCTION as TF
from ember.ops.binding import (
    _fits_arity,
    canonical,
    invalid_arguments_message,
    keyword_route,
    make_matcher,
    matches,
    public_of,
    resolve,
    tensors_first,
)
from ember.ops.registry import OpOverload, OpOverloadPacket, ops
from ember.overrides import answer as tf
from ember.overrides import (
    dispatch_torch_function,
    handle_torch_function,
    has_tensor_likes,
    has_torch_function,
)

_INT_TYPES = (int,)


def _varargs(packet: OpOverloadPacket, method: bool) -> tuple[int, OpOverload | None]:
    """Where int-list varargs may start, and the overload that takes them."""
    for op in packet._overloads.values():
        pos = op._schema.positional
        lead = 1 if pos and pos[0].type.is_tensor else 0
        if method != bool(lead):
            continue
        if (
            len(pos) == lead + 1
            and pos[lead].type.is_list
            and not pos[lead].type.optional  # var.correction's int[1]? dim: no varargs
            and pos[lead].type.base in ("int", "SymInt")
        ):
            return lead, op
    return -1, None


def make_public(packet: OpOverloadPacket, method: bool) -> Callable[..., Any]:
    """The ``ember.<name>`` function (or, with ``method``, ``Tensor.<name>``) of a packet."""
    max_args = max(len(op._schema.positional) for op in packet._overloads.values())
    fast: dict[int, Callable[..., Any]] = {}
    typed: dict[int, list[tuple[Callable[..., bool], Callable[..., Any]]]] = {}
    for n in range(max_args + 1):
        cands = tensors_first([
            op for op in packet._overloads.values()
            if not op._schema.is_out and _fits_arity(op._schema, n, ())
        ])  # fmt: skip
        if len(cands) == 1:
            fast[n] = cands[0]._public
        elif cands:
            typed[n] = [(make_matcher(op), op._public) for op in cands]
    at, varargs = _varargs(packet, method)
    # does any overload take a plain int where the varargs start? (squeeze.dim does; view not)
    int_there = varargs is not None and any(
        len(op._schema.positional) > at
        and op._schema.positional[at].type.base in ("int", "SymInt")
        and not op._schema.positional[at].type.is_list
        for op in packet._overloads.values()
    )
    varargs_op = varargs._public if varargs is not None else None
    fast_get = fast.get
    kw_routes: dict[tuple[int, tuple[str, ...]], list[Any]] = {}

    me: list[Any] = [None]  # the public function itself: ``func`` for __torch_function__

    def call(*args: Any, **kwargs: Any) -> Any:  # ember.<name> itself: no extra frame
        # every path ends in a dispatch function, which returns TORCH_FUNCTION when an
        # argument or a mode overrides the call (NOTE [torch function keys])
        if varargs_op is not None and len(args) > at and type(args[at]) in _INT_TYPES:
            packed = (*args[:at], args[at:])
            if not kwargs:
                if len(args) > at + 1 or not int_there:
                    r = varargs_op(*packed)
                    return r if r is not TF else tf(me[0], args, kwargs)
                # one int where some overload takes an int (x.squeeze(0): squeeze.dim)
                op = fast_get(len(args))
                if op is not None:
                    r = op(*args)
                    return r if r is not TF else tf(me[0], args, kwargs)
                for match, dispatch in typed.get(len(args), ()):
                    if match(args):
                        r = dispatch(*args)
                        return r if r is not TF else tf(me[0], args, kwargs)
                r = varargs_op(*packed)
                return r if r is not TF else tf(me[0], args, kwargs)
            if len(args) == at + 1 and int_there:
                try:
                    op, a, k = resolve(packet, args, kwargs)
                except TypeError:
                    op = varargs
                if op is not varargs:
                    r = op._public(*a, **k)
                    return r if r is not TF else tf(me[0], args, kwargs)
            # keywords may pick another overload (rand.generator): resolve below
            pargs = packed
        else:
            pargs = args
        if not kwargs:
            op = fast_get(len(pargs))
            if op is not None:
                try:
                    r = op(*pargs)
                except TypeError:
                    _check_types(packet, pargs)  # a clearer error if the types don't fit
                    raise
                return r if r is not TF else tf(me[0], args, kwargs)
            for match, dispatch in typed.get(len(pargs), ()):
                if match(pargs):
                    r = dispatch(*pargs)
                    return r if r is not TF else tf(me[0], args, kwargs)
        else:
            route = kw_routes.get((len(pargs), tuple(kwargs)))
            if route is None:
                route = kw_routes[(len(pargs), tuple(kwargs))] = keyword_route(
                    packet, len(pargs), tuple(kwargs)
                )
            for match, op, public, canon in route:
                if match(pargs, kwargs):
                    if canon:
                        ca, ck = canonical(op, pargs, kwargs)
                        r = public(*ca, **ck)
                    else:
                        r = public(*pargs, **kwargs)
                    return r if r is not TF else tf(me[0], args, kwargs)
        try:
            op, a, k = resolve(packet, pargs, kwargs)
        except TypeError:
            if has_tensor_likes(args, kwargs):  # a tensor-like no overload names
                return dispatch_torch_function(me[0], args, kwargs)
            raise
        r = public_of(op, tuple(kwargs))(*a, **k)
        return r if r is not TF else tf(me[0], args, kwargs)

    if method and _self_only(packet):
        fn = _self_only_method(packet, me)
    elif method:

        def bound(self: Any, *args: Any, **kwargs: Any) -> Any:
            # the two commonest calls, without building the argument tuple twice:
            # x.view(2, 3) (int varargs) and x.sum() (one overload takes this many arguments)
            if not kwargs:
                if varargs_op is not None and len(args) > 1 and type(args[0]) is int:
                    r = varargs_op(self, args)
                    return r if r is not TF else tf(me[0], (self, *args), kwargs)
                op = fast_get(len(args) + 1)
                if op is not None and (varargs_op is None or not args or type(args[0]) is not int):
                    try:
                        r = op(self, *args)
                    except TypeError:
                        _check_types(packet, (self, *args))
                        raise
                    return r if r is not TF else tf(me[0], (self, *args), kwargs)
            return call(self, *args, **kwargs)

        fn = bound
    else:
        fn = call
    if _takes_requires_grad(packet):
        fn = _with_requires_grad(fn)
    fn.__name__ = fn.__qualname__ = packet.__name__
    fn.__doc__ = _doc(packet)
    me[0] = fn
    return fn


def _self_only(packet: OpOverloadPacket) -> bool:
    """One functional overload taking nothing but ``self`` (``t``, ``relu``, ``exp``)."""
    ops_ = [op for op in packet._overloads.values() if not op._schema.is_out]
    if len(ops_) != 1:
        return False
    args = ops_[0]._schema.arguments
    return len(args) == 1 and args[0].name == "self" and args[0].type.is_tensor


def _self_only_method(packet: OpOverloadPacket, me: list[Any]) -> Callable[..., Any]:
    """``Tensor.<name>`` of a self-only op: the op's dispatch, called with nothing to
    resolve (NOTE [binding fast paths]); extra arguments are Python's TypeError."""
    op = next(o for o in packet._overloads.values() if not o._schema.is_out)
    name = packet.__name__
    scope: dict[str, Any] = {"dispatch": op._public, "TF": TF, "tf": tf, "me": me}
    lines = [
        f"def {name}(self):",
        "    r = dispatch(self)",
        "    return r if r is not TF else tf(me[0], (self,), {})",
    ]
    return define(lines, scope, name, f"method Tensor.{name}")


def _takes_requires_grad(packet: OpOverloadPacket) -> bool:
    """Factories (TensorOptions, no tensor input), ``*_like`` and ``new_*`` ops take the
    Python-only ``requires_grad=`` keyword, as in PyTorch's generated bindings."""
    name = packet.__name__
    for op in packet._overloads.values():
        args = op._schema.arguments
        like = name.endswith("_like") or name.startswith("new_")
        if any(a.name == "pin_memory" for a in args) and (
            like or not any(a.type.is_tensor for a in args)
        ):
            return True
    return False


def _with_requires_grad(fn: Callable[..., Any]) -> Callable[..., Any]:
    def factory(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Any:
        if "out" in kwargs:
            kwargs = _out_options(kwargs)
        out = fn(*args, **kwargs)
        return out.requires_grad_(True) if requires_grad else out

    return factory


def _out_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A factory's keywords beside ``out=``: PyTorch's bindings take ``dtype``, ``layout``,
    ``device`` and ``pin_memory`` there too and check them against ``out`` (which then gives
    them: NOTE [factory out=] in ``ember/ops/native/creation.py``); ``out=None`` is no out."""
    out = kwargs["out"]
    rest = {k: v for k, v in kwargs.items() if k not in _OUT_GIVES}
    if out is None:
        del rest["out"]
        return {**rest, **{k: v for k, v in kwargs.items() if k in _OUT_GIVES}}
    if not isinstance(out, Tensor):
        return kwargs  # the overload resolution's TypeError
    dtype = kwargs.get("dtype")
    if dtype is not None and dtype != out.dtype:
        raise RuntimeError(
            f"dtype {dtype._short} does not match dtype of out parameter ({out.dtype._short})"
        )
    layout = kwargs.get("layout")
    if layout is not None and str(layout).rpartition(".")[2] != "strided":
        raise RuntimeError(f"layout {layout} does not match layout of out parameter (Strided)")
    device = kwargs.get("device")
    if device is not None and as_device(device).type != out.device.type:
        raise RuntimeError(
            f"device type {as_device(device).type} does not match device type of out parameter "
            f"({out.device.type})"
        )
    return rest


_OUT_GIVES = frozenset(("dtype", "layout", "device", "pin_memory"))


def _check_types(packet: OpOverloadPacket, args: tuple[Any, ...]) -> None:
    """Raise PyTorch's "invalid combination of arguments" if no overload takes ``args``."""
    if not any(matches(op, args, {}) for op in packet._overloads.values()):
        raise TypeError(invalid_arguments_message(packet, args, {})) from None


def _doc(packet: OpOverloadPacket) -> str:
    sigs = "\n".join(f"    {op._schema}" for op in packet._overloads.values())
    return f"``{packet}``, dispatched by the overload the arguments match:\n\n{sigs}\n"


_SCALARS = (int, float, bool, complex)


def binary_dunder(
    tensor_op: OpOverload,
    scalar_op: OpOverload,
    reflected: bool,
    scalar_swapped: bool,
    reported: list[Any],
) -> Callable[[Any, Any], Any]:
    """``Tensor.__add__`` and friends: ``tensor_op`` for a tensor operand, ``scalar_op`` for a
    Python number (argument order as PyTorch passes them); NotImplemented otherwise, and when
    every ``__torch_function__`` handler declines (so Python tries the reflected operator).
    ``reported[0]`` is the ``func`` handlers see (``Tensor.add`` for ``a + b``, as PyTorch)."""
    t_op = tensor_op._public
    s_op = scalar_op._public

    def dunder(self: Any, other: Any) -> Any:
        if type(other) in _SCALARS:
            r = s_op(other, self) if scalar_swapped else s_op(self, other)
        elif isinstance(other, Tensor) or has_tensor_likes((other,), {}):
            r = t_op(other, self) if reflected else t_op(self, other)
        else:
            return NotImplemented
        if r is not TF:
            return r
        try:
            return tf(reported[0], (self, other), {})
        except TypeError:
            return NotImplemented

    return dunder


def _exponent_named(dunder: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``__pow__``/``__ipow__`` taking the operand as ``exponent``, the name PyTorch's take
    from pow's schema (``t.__pow__(exponent=2)``)."""

    def pow_dunder(self: Any, exponent: Any) -> Any:
        return dunder(self, exponent)

    return pow_dunder


def unary_dunder(overload: OpOverload, reported: list[Any]) -> Callable[[Any], Any]:
    op = overload._public

    def dunder(self: Any) -> Any:
        r = op(self)
        return r if r is not TF else tf(reported[0], (self,), {})

    return dunder


def _rtruediv(self: Any, other: Any) -> Any:
    """``number / tensor``: PyTorch computes ``reciprocal(tensor) * number``."""
    if has_torch_function((self, other)):
        return _reflected_handler(_rtruediv, self, other)
    if type(other) in _SCALARS or isinstance(other, Tensor):
        return ops.aten.mul.Tensor(ops.aten.reciprocal.default(self), other)
    return NotImplemented


def _reflected_handler(fn: Any, self: Any, other: Any) -> Any:
    """A Python-written operator's ``__torch_function__`` call (it reports itself, as in
    PyTorch); NotImplemented when every handler declines."""
    try:
        return handle_torch_function(fn, (self, other), self, other)
    except TypeError:
        return NotImplemented


#: operators that PyTorch writes in Python or binds under their own name, so
#: ``__torch_function__`` sees ``Tensor.__pow__``; the rest report the method they call
#: (``a + b`` is ``Tensor.add``). Checked against PyTorch by tests/test_overrides.py.
REPORT_THEMSELVES = frozenset(
    "__floordiv__ __rfloordiv__ __rmod__ __pow__ __rpow__ __ipow__ __rmatmul__ __and__ "
    "__iand__ __or__ __ior__ __xor__ __ixor__ __lshift__ __rlshift__ __ilshift__ __rshift__ "
    "__rrshift__ __irshift__ __eq__ __invert__".split()
)


# Python operator -> (packet, overload for a Tensor operand, overload for a Python number,
# kind): "b" binary, "r" reflected (number op), "rs" reflected with the number passed first,
# "u" unary. The overloads are the ones PyTorch dispatches for each operator (checked by
# tests/test_dispatch.py against a TorchDispatchMode on PyTorch).
DUNDERS: dict[str, tuple[str, str, str, str]] = {
    "__add__": ("add", "Tensor", "Tensor", "b"), "__radd__": ("add", "Tensor", "Tensor", "r"),
    "__iadd__": ("add_", "Tensor", "Tensor", "b"),
    "__sub__": ("sub", "Tensor", "Tensor", "b"), "__isub__": ("sub_", "Tensor", "Tensor", "b"),
    "__mul__": ("mul", "Tensor", "Tensor", "b"), "__rmul__": ("mul", "Tensor", "Tensor", "r"),
    "__imul__": ("mul_", "Tensor", "Tensor", "b"),
    "__truediv__": ("div", "Tensor", "Tensor", "b"),
    "__itruediv__": ("div_", "Tensor", "Tensor", "b"),
    "__floordiv__": ("floor_divide", "default", "default", "b"),
    "__rfloordiv__": ("floor_divide", "default", "default", "rs"),
    "__ifloordiv__": ("floor_divide_", "Tensor", "Scalar", "b"),
    "__mod__": ("remainder", "Tensor", "Scalar", "b"),
    "__rmod__": ("remainder", "Tensor", "Scalar_Tensor", "rs"),
    "__imod__": ("remainder_", "Tensor", "Scalar", "b"),
    "__pow__": ("pow", "Tensor_Tensor", "Tensor_Scalar", "b"),
    "__rpow__": ("pow", "Tensor_Tensor", "Scalar", "rs"),
    "__ipow__": ("pow_", "Tensor", "Scalar", "b"),
    "__matmul__": ("matmul", "default", "default", "b"),
    "__rmatmul__": ("matmul", "default", "default", "rs"),
    "__and__": ("bitwise_and", "Tensor", "Scalar", "b"),
    "__rand__": ("bitwise_and", "Tensor", "Scalar", "r"),
    "__iand__": ("bitwise_and_", "Tensor", "Scalar", "b"),
    "__or__": ("bitwise_or", "Tensor", "Scalar", "b"),
    "__ror__": ("bitwise_or", "Tensor", "Scalar", "r"),
    "__ior__": ("bitwise_or_", "Tensor", "Scalar", "b"),
    "__xor__": ("bitwise_xor", "Tensor", "Scalar", "b"),
    "__rxor__": ("bitwise_xor", "Tensor", "Scalar", "r"),
    "__ixor__": ("bitwise_xor_", "Tensor", "Scalar", "b"),
    "__lshift__": ("__lshift__", "Tensor", "Scalar", "b"),
    "__ilshift__": ("bitwise_left_shift_", "Tensor", "Tensor_Scalar", "b"),
    "__rlshift__": ("bitwise_left_shift", "Tensor", "Scalar_Tensor", "rs"),
    "__rshift__": ("__rshift__", "Tensor", "Scalar", "b"),
    "__irshift__": ("bitwise_right_shift_", "Tensor", "Tensor_Scalar", "b"),
    "__rrshift__": ("bitwise_right_shift", "Tensor", "Scalar_Tensor", "rs"),
    "__eq__": ("eq", "Tensor", "Scalar", "b"), "__ne__": ("ne", "Tensor", "Scalar", "b"),
    "__lt__": ("lt", "Tensor", "Scalar", "b"), "__le__": ("le", "Tensor", "Scalar", "b"),
    "__gt__": ("gt", "Tensor", "Scalar", "b"), "__ge__": ("ge", "Tensor", "Scalar", "b"),
    "__neg__": ("neg", "default", "", "u"), "__abs__": ("abs", "default", "", "u"),
    "__invert__": ("bitwise_not", "default", "", "u"),
    "__pos__": ("positive", "default", "", "u"),
}  # fmt: skip


def _rsub(self: Any, other: Any) -> Any:
    """``number - tensor`` is ``rsub.Scalar(tensor, number)``, as in PyTorch."""
    if has_torch_function((self, other)):
        return _reflected_handler(_rsub, self, other)
    if type(other) in _SCALARS:
        return ops.aten.rsub.Scalar(self, other)
    if isinstance(other, Tensor):
        return ops.aten.sub.Tensor(other, self)
    return NotImplemented


_rsub.__name__ = _rsub.__qualname__ = "__rsub__"
_rtruediv.__name__ = _rtruediv.__qualname__ = "__rtruediv__"


def bind_all(namespace: dict[str, Any]) -> list[str]:
    """Attach every packet's public function to ``namespace`` and method to ``Tensor``;
    returns the names of the functions bound."""
    names = []
    for packet in ops.aten:
        name = packet.__name__
        if "method" in packet._variants and name not in Tensor.__dict__:
            setattr(Tensor, name, make_public(packet, method=True))
            GENERATED_MEMBERS.add(name)
        if "function" in packet._variants:
            namespace[name] = make_public(packet, method=False)
            names.append(name)
    for dunder, (pname, t_name, s_name, kind) in DUNDERS.items():
        packet = getattr(ops.aten, pname)
        reported: list[Any] = [None]
        if kind == "u":
            fn = unary_dunder(getattr(packet, t_name), reported)
        else:
            t_op, s_op = getattr(packet, t_name), getattr(packet, s_name)
            fn = binary_dunder(t_op, s_op, kind != "b", kind == "rs", reported)
            if pname in ("pow", "pow_") and kind == "b":
                fn = _exponent_named(fn)
        fn.__name__ = fn.__qualname__ = dunder
        setattr(Tensor, dunder, fn)
        GENERATED_MEMBERS.add(dunder)
        reported[0] = fn if dunder in REPORT_THEMSELVES else getattr(Tensor, pname)
    Tensor.__rsub__ = _rsub  # type: ignore[attr-defined]
    Tensor.__rtruediv__ = _rtruediv  # type: ignore[attr-defined]
    GENERATED_MEMBERS.update(("__rsub__", "__rtruediv__"))
    Tensor.__hash__ = object.__hash__  # type: ignore[method-assign]
    return names
