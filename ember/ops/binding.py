"""Binding Python calls to schemas: overload resolution, canonical arguments, defaults.

# NOTE [canonical arguments]
Every op is called with its schema's positional parameters passed positionally and its
kwarg-only parameters passed by keyword; what the caller left out stays out (kernels carry
the schema defaults in their own signatures). ``strip_defaults`` drops trailing arguments
equal to their defaults (what ``__torch_dispatch__`` sees, as in PyTorch) and
``fill_defaults`` puts every default back.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ember.dispatch.codegen import define
from ember.dtypes import dtype
from ember.ops.registry import TENSOR_TYPE, OpOverload, OpOverloadPacket
from ember.ops.schema import NO_DEFAULT, Argument, FunctionSchema, SchemaType
from ember.return_types import out_kind

_NUMBER_TYPES = (int, float, complex, bool, np.number, np.bool_)
_cache: dict[tuple[int, int, tuple[str, ...]], list[OpOverload]] = {}


def _is_tensor(x: Any) -> bool:
    return isinstance(x, TENSOR_TYPE[0]) or hasattr(type(x), "__torch_function__")


def _is_int(x: Any) -> bool:
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    return isinstance(x, TENSOR_TYPE[0]) and x.ndim == 0 and not x.dtype.is_floating_point


def type_matches(t: SchemaType, x: Any, pointwise: bool = False, lenient: bool = False) -> bool:
    """Whether ``x`` can be passed where the schema says ``t`` (PyTorch's arg-parser rules;
    ``lenient``: a 0-dim tensor that requires grad passes as a Scalar too, the last resort
    of ``resolve`` for ops ember has no Tensor overload of, such as ``_foreach_mul_``)."""
    if x is None:
        return t.optional
    if t.is_list:
        if t.base == "Tensor":
            return isinstance(x, (list, tuple)) and all(
                (e is None and t.elem_optional) or _is_tensor(e) for e in x
            )
        if isinstance(x, (list, tuple)) or (hasattr(x, "__len__") and hasattr(x, "__iter__")):
            if _is_tensor(x):
                return False
            inner = SchemaType(t.base)
            return all(type_matches(inner, e) for e in x)
        # a single int fills a sized list (int[1] dim=1, int[2] stride=1)
        return t.list_size is not None and t.list_size > 0 and type_matches(SchemaType(t.base), x)
    b = t.base
    if b == "Tensor":
        return _is_tensor(x) or (pointwise and isinstance(x, _NUMBER_TYPES))
    if b in ("int", "SymInt"):
        return _is_int(x)
    if b == "float":
        return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
    if b == "bool":
        return isinstance(x, (bool, np.bool_))
    if b == "Scalar":
        # a tensor passes as a number only 0-dim and without grad, as in PyTorch's parser:
        # else ``xlogy(t0, 0.5)`` bound ``xlogy.Scalar_Self`` and lost ``t0``'s gradient
        return isinstance(x, _NUMBER_TYPES) or (
            isinstance(x, TENSOR_TYPE[0]) and x.ndim == 0 and (lenient or not x.requires_grad)
        )
    if b == "str":
        return isinstance(x, str)
    if b == "ScalarType":
        return isinstance(x, dtype)
    if b == "complex":
        return isinstance(x, numbers.Number)
    return True


# NOTE [out tuples]
# An out overload with several outputs names each (``max.dim_max(..., *, Tensor(a!) max,
# Tensor(b!) max_values)``); Python passes them as one tuple, ``ember.max(x, 0, out=(v, i))``,
# and gets back the op's ``<name>_out`` named tuple (``ember.return_types.max_out``), as
# PyTorch's parser does. Such an overload takes an ``out`` parameter of this type, which
# ``canonical`` splits into the schema's names (a tuple of the wrong length: PyTorch's
# TypeError), and ``public_of`` wraps the result.
_OUT_TUPLE = SchemaType("Tensor", -1)


def tensor_params(op: OpOverload) -> list[tuple[int, str, bool]]:
    """``(position, name, is_list)`` of each Tensor parameter of ``op``: its place among the
    positional arguments (NOTE [canonical arguments]) or -1 for a kwarg-only one, and whether
    it is a list of Tensors; what the autograd and forward-AD kernels read from a call."""
    out = []
    pos = 0
    for a in op._schema.arguments:
        if a.type.base == "Tensor":
            out.append((-1 if a.kwarg_only else pos, a.name, a.type.is_list))
        if not a.kwarg_only:
            pos += 1
    return out


def out_names(schema: FunctionSchema) -> tuple[str, ...]:
    """The kwarg-only arguments an out overload writes (``("max", "max_values")``)."""
    return tuple(a.name for a in schema.kwarg_only if a.is_write)


def _param_names(schema: FunctionSchema) -> dict[str, Argument]:
    out = {a.name: a for a in schema.arguments}
    if "self" in out and "input" not in out:
        out["input"] = out["self"]  # Python spells the schema's `self` as `input`
    if "out" not in out and len(out_names(schema)) > 1:  # NOTE [out tuples]
        out["out"] = Argument("out", _OUT_TUPLE, kwarg_only=True)
    return out


def public_of(op: OpOverload, names: tuple[str, ...]) -> Any:
    """The function a Python call of ``op`` with keywords ``names`` runs: the op's own, or for
    ``out=`` of several outputs one that returns the op's named tuple (NOTE [out tuples])."""
    public = op._public
    kind = out_kind(op.overloadpacket.__name__) if "out" in names else None
    if kind is None or "out" in {a.name for a in op._schema.arguments}:
        return public

    def call(*args: Any, **kwargs: Any) -> Any:
        r = public(*args, **kwargs)
        return kind(r) if type(r) is tuple else r  # (not the __torch_function__ marker)

    return call


def _fits_arity(schema: FunctionSchema, nargs: int, names: tuple[str, ...]) -> bool:
    pos = schema.positional
    if nargs > len(pos):
        return False
    if not names:  # every parameter past the given ones has a default
        return all(a.has_default_value() for a in pos[nargs:]) and all(
            a.has_default_value() for a in schema.kwarg_only
        )
    params = _param_names(schema)
    given = {a.name for a in pos[:nargs]}
    for n in names:
        a = params.get(n)
        if a is None or a.name in given:
            return False
        given.add(a.name)
        if a.type is _OUT_TUPLE:
            given.update(out_names(schema))
    return all(a.name in given or a.has_default_value() for a in schema.arguments)


def _scalar_version(b: OpOverload, a: OpOverload) -> bool:
    """Whether ``b`` is ``a`` with a Scalar where ``a`` takes a Tensor (and else the same
    parameter types): PyTorch's parser tries ``a`` first."""
    pa, pb = a._schema.positional, b._schema.positional
    if len(pa) != len(pb):
        return False
    differs = False
    for x, y in zip(pa, pb, strict=True):
        if x.type.base == y.type.base:
            continue
        if x.type.base == "Tensor" and y.type.base == "Scalar":
            differs = True
            continue
        return False
    return differs


# PyTorch's parser lets a Python number fill a Tensor parameter only for these operators
# (python_arg_parser's allow-list); elsewhere a number binds the Scalar twin when there is one
# (``lerp(a, b, 0.5)`` is ``lerp.Scalar``, ``x.pow(2.)`` is ``pow.Tensor_Scalar``).
_NUMBERS_AS_TENSORS = frozenset(
    f"{name}{suffix}"
    for name in (
        "add",
        "sub",
        "mul",
        "div",
        "true_divide",
        "floor_divide",
        "remainder",
        "fmod",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "logical_and",
        "logical_or",
        "logical_xor",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "bitwise_left_shift",
        "bitwise_right_shift",
        "__and__",
        "__or__",
        "__xor__",
        "__lshift__",
        "__rshift__",
        "__iand__",
        "__ior__",
        "__ixor__",
        "__ilshift__",
        "__irshift__",
    )
    for suffix in ("", "_")
)


def numbers_as_tensors(op: OpOverload) -> bool:
    """Whether a Python number may fill ``op``'s Tensor parameters: a pointwise op in
    PyTorch's allow-list, or one with no overload taking a Scalar there instead (a twin
    differing only there, or any overload of as many parameters with a Scalar in one of
    op's Tensor places: ``pow(2, t)`` is ``pow.Scalar``, not ``pow.Tensor_Scalar`` with
    a 2 for its Tensor)."""
    if "pointwise" not in op.tags:
        return False
    packet = op.overloadpacket
    if packet.__name__ in _NUMBERS_AS_TENSORS:
        return True
    mine = op._schema.positional
    for o in packet._overloads.values():
        if _scalar_version(o, op):
            return False
        theirs = o._schema.positional
        if (
            o is not op
            and len(theirs) == len(mine)
            and any(
                x.type.base == "Tensor" and y.type.base == "Scalar"
                for x, y in zip(mine, theirs, strict=True)
            )
        ):
            return False
    return True


def tensors_first(ops_: list[OpOverload]) -> list[OpOverload]:
    """``ops_`` with each overload taking a Scalar where another takes a Tensor moved after
    that one, as PyTorch's parser orders them (so a 0-dim tensor binds as a Tensor:
    ``x.clamp(t0, t1)`` is ``clamp.Tensor`` and keeps autograd and type promotion)."""
    out = list(ops_)
    if len(out) < 2:
        return out
    changed = True
    while changed:
        changed = False
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                if _scalar_version(out[i], out[j]):
                    out.insert(i, out.pop(j))
                    changed = True
                    break
            if changed:
                break
    return out


def _candidates(packet: OpOverloadPacket, nargs: int, names: tuple[str, ...]) -> list[OpOverload]:
    key = (id(packet), nargs, names)
    found = _cache.get(key)
    if found is None:
        want_out = "out" in names
        found = tensors_first(
            [
                op
                for op in packet._overloads.values()
                if op._schema.is_out == want_out and _fits_arity(op._schema, nargs, names)
            ]
        )
        _cache[key] = found
    return found


def matches(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any], lenient: bool = False
) -> bool:
    schema = op._schema
    pointwise = numbers_as_tensors(op)
    for a, x in zip(schema.positional, args, strict=False):
        if not type_matches(a.type, x, pointwise, lenient):
            return False
    params = _param_names(schema)
    for name, x in kwargs.items():
        if not type_matches(params[name].type, x, pointwise, lenient):
            return False
    return True


def resolve(
    packet: OpOverloadPacket, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[OpOverload, tuple[Any, ...], dict[str, Any]]:
    """Pick the overload of ``packet`` a Python call means and canonicalise its arguments."""
    cands = _candidates(packet, len(args), tuple(kwargs))
    if len(cands) == 1 and not kwargs:
        return cands[0], args, kwargs
    for lenient in (False, True):
        for op in cands:
            if matches(op, args, kwargs, lenient):
                return (op, *canonical(op, args, kwargs)) if kwargs else (op, args, kwargs)
    raise TypeError(invalid_arguments_message(packet, args, kwargs))


def _describe(x: Any) -> str:
    if isinstance(x, TENSOR_TYPE[0]):
        return "Tensor"
    if isinstance(x, (list, tuple)):
        return f"{type(x).__name__} of [{', '.join(_describe(e) for e in x)}]"
    return type(x).__name__


def invalid_arguments_message(
    packet: OpOverloadPacket, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> str:
    got = [_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in kwargs.items()]
    sigs = "\n".join(f" * {op._schema}" for op in packet._overloads.values())
    return (
        f"{packet.__name__}() received an invalid combination of arguments - "
        f"got ({', '.join(got)}), but expected one of:\n{sigs}"
    )


def canonical(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Move positional parameters given by keyword into place (see NOTE [canonical arguments])."""
    schema = op._schema
    pos = schema.positional
    if not kwargs:
        return args, kwargs
    rest = dict(kwargs)
    if "input" in rest and "input" not in {a.name for a in schema.arguments}:
        rest["self"] = rest.pop("input")
    if "out" in rest and "out" not in {a.name for a in schema.arguments}:  # NOTE [out tuples]
        names, given = out_names(schema), rest.pop("out")
        if len(given) != len(names):
            raise TypeError(f"expected tuple of {len(names)} elements but got {len(given)}")
        rest.update(zip(names, given, strict=True))
    out = list(args)
    last = max((i for i, a in enumerate(pos) if a.name in rest), default=-1)
    for i in range(len(out), last + 1):
        a = pos[i]
        if a.name in rest:
            out.append(rest.pop(a.name))
        elif a.has_default_value():
            out.append(a.default_value)
        else:
            raise TypeError(f"{op.__name__}() missing required argument '{a.name}' (pos {i})")
    unknown = set(rest) - {a.name for a in schema.kwarg_only}
    if unknown:
        raise TypeError(f"{op.__name__}() got unexpected keyword argument(s) {sorted(unknown)}")
    return tuple(out), rest


def fill_defaults(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Every argument explicit: positional ones as a tuple, kwarg-only ones in the dict.

    >>> from ember.ops.binding import fill_defaults
    >>> x, y = ember.tensor([1.0]), ember.tensor([2.0])
    >>> fill_defaults(ember.ops.aten.add.Tensor, (x, y), {})
    ((tensor([1.]), tensor([2.])), {'alpha': 1})
    """
    args, kwargs = canonical(op, args, kwargs)
    schema = op._schema
    out = list(args)
    for a in schema.positional[len(args) :]:
        if not a.has_default_value():
            raise TypeError(f"{op.__name__}() missing required argument '{a.name}'")
        out.append(a.default_value)
    full = {}
    for a in schema.kwarg_only:
        if a.name in kwargs:
            full[a.name] = kwargs[a.name]
        elif a.has_default_value():
            full[a.name] = a.default_value
        elif not a.type.optional:
            raise TypeError(f"{op.__name__}() missing required keyword argument '{a.name}'")
    return tuple(out), full


def _same(value: Any, default: Any) -> bool:
    if default is NO_DEFAULT:
        return False
    if isinstance(default, tuple):
        return isinstance(value, (list, tuple)) and tuple(value) == default
    return (
        type(value) is type(default) and value == default if default is not None else value is None
    )


def strip_defaults(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Drop trailing positional and kwarg-only arguments that equal their defaults."""
    args, kwargs = canonical(op, args, kwargs)
    pos = op._schema.positional
    n = len(args)
    while n and n <= len(pos) and _same(args[n - 1], pos[n - 1].default_value):
        n -= 1
    params = {a.name: a for a in op._schema.kwarg_only}
    kept = {
        k: v for k, v in kwargs.items() if k not in params or not _same(v, params[k].default_value)
    }
    return tuple(args[:n]), kept


_MATCHERS: dict[tuple[str, ...], Any] = {}


def make_matcher(op: OpOverload) -> Any:
    """Generate ``match(args) -> bool`` for positional-only calls: ``matches`` unrolled from
    the schema, with cheap ``type(x) is ...`` tests first (NOTE [binding fast paths]). The
    code depends only on the tests, so it is made once per sequence of them, by a factory
    taking each parameter's type ``t{i}`` (NOTE [dispatch per layout])."""
    schema = op._schema
    pointwise = numbers_as_tensors(op)
    tests = []
    for i, a in enumerate(schema.positional):
        t = a.type
        x = f"args[{i}]"
        if t.is_list:
            test = f"tm(t{i}, {x})"
        elif t.base == "Tensor":
            test = f"isinstance({x}, T) or is_tensor({x})"
            if pointwise:
                test += f" or type({x}) in NUMS"
        elif t.base in ("int", "SymInt"):
            test = f"type({x}) is int or is_int({x})"
        elif t.base == "Scalar":
            test = f"type({x}) in NUMS or tm(t{i}, {x})"
        elif t.base == "bool":
            test = f"type({x}) is bool or tm(t{i}, {x})"
        else:
            test = f"tm(t{i}, {x})"
        if t.optional:
            test = f"{x} is None or {test}"
        tests.append(f"        if n > {i} and not ({test}): return False")
    key = tuple(tests)
    factory = _MATCHERS.get(key)
    if factory is None:
        params = ", ".join(["_"] + [f"t{i}" for i in range(len(tests))])
        lines = [f"def matcher({params}):", "    def match(args):", "        n = len(args)"]
        lines += [*tests, "        return True", "    return match"]
        scope: dict[str, Any] = {
            "T": TENSOR_TYPE[0], "NUMS": frozenset(_NUMBER_TYPES), "is_tensor": _is_tensor,
            "is_int": _is_int, "tm": type_matches,
        }  # fmt: skip
        where = f"overload match {len(_MATCHERS)} (first {op})"
        factory = _MATCHERS[key] = define(lines, scope, "matcher", where)
    return factory(None, *(a.type for a in schema.positional))


def keyword_route(
    packet: OpOverloadPacket, nargs: int, names: tuple[str, ...]
) -> list[tuple[Any, Any, Any, bool]]:
    """For calls with ``nargs`` positional arguments and keywords ``names``: per candidate
    overload, in order, ``(match(args, kwargs), op, public function, needs canonical)``:
    ``resolve`` with the schema work done once per call shape (NOTE [binding fast paths])."""
    route = []
    for op in _candidates(packet, nargs, names):
        schema = op._schema
        params = _param_names(schema)
        positional = {a.name for a in schema.positional}
        canon = any(
            n == "input" or params[n].name in positional or params[n].type is _OUT_TUPLE
            for n in names
        )
        route.append((_keyword_matcher(op, names, params), op, public_of(op, names), canon))
    return route


def _keyword_matcher(op: OpOverload, names: tuple[str, ...], params: dict[str, Argument]) -> Any:
    positional = make_matcher(op)
    pointwise = numbers_as_tensors(op)
    kw = tuple((n, params[n].type) for n in names)

    def match(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        if not positional(args):
            return False
        for n, t in kw:
            if not type_matches(t, kwargs[n], pointwise):
                return False
        return True

    return match
