"""The protocol's lists, generated from the registry, the bindings and the Tensor class (no
hand-kept list): what can be overridden, what cannot, and a dummy per overridable function.

# NOTE [generated override lists]
An overridable function is any public callable of ``ember``, ``ember.nn.functional``,
``ember.linalg``, ``ember.fft`` and ``ember.special`` (where they exist) that goes through the
protocol, and every Tensor method and property. A callable there that does not (dtype and
state helpers, factories that build from Python data) is listed by ``get_ignored_functions``;
``tests/test_overrides.py`` fails for a public callable in neither list. Dummies for
``get_testing_overrides`` take their signature from the op's schemas (all functional
overloads: NOTE [dummy signatures]) or from the Python function itself.
"""

from __future__ import annotations

import functools
import inspect
import keyword
import sys
import types as _types
from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.dispatch.protocols import GENERATED_MEMBERS
from ember.ops.registry import OpOverload, OpOverloadPacket, ops

#: namespaces searched, in ``resolve_name`` order
NAMESPACES = ("ember", "ember.nn.functional", "ember.linalg", "ember.fft", "ember.special")

#: public callables in those namespaces that stay out of the protocol, by name: types,
#: dtype and state helpers, and builders from Python data (as PyTorch ignores them;
#: from_dlpack too: its argument is often a torch tensor, whose own handler must not run)
IGNORED_NAMES = frozenset(
    """
    Tensor Size dtype device DispatchKey can_cast promote_types result_type get_default_dtype
    set_default_dtype set_printoptions is_grad_enabled is_inference_mode_enabled no_grad
    enable_grad set_grad_enabled inference_mode manual_seed seed initial_seed get_rng_state
    set_rng_state Generator default_generator load save tensor as_tensor from_numpy from_dlpack
    is_tensor compile vmap broadcast_shapes asarray frombuffer typename is_storage
    get_default_device set_default_device set_default_tensor_type get_num_interop_threads
    get_device_module
    set_num_interop_threads
    use_deterministic_algorithms are_deterministic_algorithms_enabled
    is_deterministic_algorithms_warn_only_enabled set_num_threads get_num_threads
    set_float32_matmul_precision get_float32_matmul_precision
    is_anomaly_enabled is_anomaly_check_nan_enabled set_anomaly_enabled
    is_autocast_enabled set_autocast_enabled get_autocast_dtype set_autocast_dtype
    is_autocast_cpu_enabled set_autocast_cpu_enabled get_autocast_cpu_dtype
    set_autocast_cpu_dtype is_autocast_cache_enabled set_autocast_cache_enabled
    clear_autocast_cache autocast_increment_nesting autocast_decrement_nesting
    """.split()
)
#: ignored by their full name, where another namespace has a function of the same name
#: (``ember.cond`` the control-flow operator, ``ember.linalg.cond`` the condition number);
#: ``ember.while_loop`` takes functions, not tensors (PyTorch's lists neither override nor
#: test it)
IGNORED_QUALIFIED = frozenset({"ember.cond", "ember.while_loop"})


def _is_public_callable(name: str, obj: Any) -> bool:
    return (
        not name.startswith("_")
        and callable(obj)
        and not isinstance(obj, _types.ModuleType)
        and not (isinstance(obj, type) and not issubclass(obj, Tensor))
    )


def _namespace_items() -> list[tuple[Any, str, Any]]:
    out = []
    for mod_name in NAMESPACES:
        mod = sys.modules.get(mod_name)
        if mod is None:
            continue
        names = getattr(mod, "__all__", None) or dir(mod)
        for name in names:
            obj = getattr(mod, name, None)
            if _is_public_callable(name, obj):
                out.append((mod, name, obj))
    return out


def _tensor_members() -> list[tuple[str, Any]]:
    """(name, func) for every overridable Tensor method and property (``__get__``)."""
    out = []
    for name, member in Tensor.__dict__.items():
        if name not in GENERATED_MEMBERS and not is_overridable_member(name):
            continue
        if True:
            if isinstance(member, property):
                out.append((name, getattr(Tensor, name).__get__))
            elif callable(member) and not isinstance(member, (type, staticmethod, classmethod)):
                out.append((name, getattr(Tensor, name)))
    return out


#: Tensor members written in Python that stay out of the protocol: object plumbing and
#: subclass construction, as in PyTorch
NOT_OVERRIDABLE = frozenset(
    "__new__ __init__ __init_subclass__ __torch_function__ __hash__ __class__ __getattr__ __iter__ "
    "__setattr__ __delattr__ __dir__ __sizeof__ __reduce__ __getstate__ __setstate__ "
    "__weakref__ __dict__ __slots__ __module__ __doc__ __annotations__ __copy__ as_subclass "
    "_make_subclass".split()
)
#: further Tensor members PyTorch's ``get_ignored_functions`` lists (those ember has)
IGNORED_TENSOR_MEMBERS = frozenset(
    "_make_wrapper_subclass __subclasshook__ __delitem__ _is_zerotensor _neg_view _conj "
    "_fix_weakref _use_count _typed_storage _view_func".split()
)
#: the Python protocol methods of Tensor that PyTorch makes overridable
OVERRIDABLE_DUNDERS = frozenset(
    "__getitem__ __setitem__ __len__ __iter__ __reversed__ __contains__ __repr__ __format__ "
    "__bool__ __float__ __int__ __complex__ __index__ __array__ __reduce_ex__ "
    "__deepcopy__".split()
)


def is_overridable_member(name: str) -> bool:
    """Whether the Tensor member ``name``, written in Python, takes part in the protocol."""
    if name in NOT_OVERRIDABLE:
        return False
    if name.startswith("__"):
        return name in OVERRIDABLE_DUNDERS
    return not name.startswith("_")


@functools.cache
def _lists() -> tuple[dict[Any, list[Callable[..., Any]]], dict[Any, str], set[Any]]:
    overridable: dict[Any, list[Callable[..., Any]]] = {}
    names: dict[Any, str] = {}
    ignored: set[Any] = set()
    for mod, name, obj in _namespace_items():
        ignore = name in IGNORED_NAMES or f"{mod.__name__}.{name}" in IGNORED_QUALIFIED
        if ignore or isinstance(obj, type):
            ignored.add(obj)
            continue
        overridable.setdefault(mod, []).append(obj)
        names.setdefault(obj, f"{mod.__name__}.{name}")
    for name in sorted(NOT_OVERRIDABLE | IGNORED_TENSOR_MEMBERS):
        member = getattr(Tensor, name, None)
        if callable(member) and not isinstance(member, type):
            ignored.add(member)  # Tensor.as_subclass, Tensor.__hash__, ... (as PyTorch lists)
    tensor_list = overridable.setdefault(Tensor, [])
    for name, func in _tensor_members():
        tensor_list.append(func)
        static = inspect.getattr_static(Tensor, name)
        suffix = ".__get__" if isinstance(static, property) else ""
        names.setdefault(func, f"ember.Tensor.{name}{suffix}")
        if isinstance(static, property) and static.fset is not None:
            names.setdefault(static.__set__, f"ember.Tensor.{name}.__set__")
    return overridable, names, ignored


def get_overridable_functions() -> dict[Any, list[Callable[..., Any]]]:
    """Every overridable function, by namespace (a module, or ``ember.Tensor``)."""
    return {k: list(v) for k, v in _lists()[0].items()}


def get_ignored_functions() -> set[Any]:
    """Public callables that cannot be overridden (types, state helpers, data builders) and
    the Tensor members that make and identify objects (``Tensor.as_subclass``,
    ``Tensor._make_subclass``, ``Tensor.__hash__``, ...), as PyTorch's list has them.

    >>> from ember.overrides import get_ignored_functions
    >>> ember.Tensor.as_subclass in get_ignored_functions()
    True
    """
    return set(_lists()[2])


def resolve_name(f: Any) -> str | None:
    """A name for ``f``: ``"ember.add"`` and ``"ember.Tensor.add"`` evaluate back to it (with
    ``ember`` imported); an operator is named as it prints, ``"aten.add.Tensor"``, as
    PyTorch's ``resolve_name`` does; None for an unknown callable.

    >>> from ember.overrides._lists import resolve_name
    >>> resolve_name(ember.add), resolve_name(ember.ops.aten.add.Tensor)
    ('ember.add', 'aten.add.Tensor')
    """
    if isinstance(f, (OpOverload, OpOverloadPacket)):
        return str(f)
    try:
        return _lists()[1].get(f)
    except TypeError:  # unhashable
        return None


@functools.cache
def _tensor_methods() -> frozenset[Any]:
    return frozenset(_lists()[0][Tensor])


def is_tensor_method_or_property(func: Callable[..., Any]) -> bool:
    """Whether ``func`` (as a handler receives it) is a Tensor method or a property's
    ``__get__``.

    >>> from ember.overrides._lists import is_tensor_method_or_property
    >>> is_tensor_method_or_property(ember.Tensor.add), is_tensor_method_or_property(ember.add)
    (True, False)
    """
    return func in _tensor_methods() or getattr(func, "__name__", "") == "__get__"


@functools.cache
def _nowrap() -> frozenset[Any]:
    return frozenset({Tensor.grad.__get__})  # type: ignore[attr-defined]


def get_default_nowrap_functions() -> frozenset[Any]:
    """Functions whose results the default handler returns as they are (no subclass
    conversion): the ``grad`` getter, so identity is kept."""
    return _nowrap()


def get_testing_overrides() -> dict[Callable[..., Any], Callable[..., Any]]:
    """A dummy returning -1, with the function's signature, for every overridable
    function: a test calls each function with tensor-likes and checks the handler."""
    out: dict[Callable[..., Any], Callable[..., Any]] = {}
    for namespace, funcs in _lists()[0].items():
        for f in funcs:
            out[f] = _dummy(f, method=namespace is Tensor)
    return out


def _dummy(f: Callable[..., Any], method: bool) -> Callable[..., Any]:
    def dummy(*args: Any, **kwargs: Any) -> int:
        return -1

    dummy.__name__ = getattr(f, "__name__", "dummy")
    sig = _signature(f, method)
    if sig is not None:
        dummy.__signature__ = sig  # type: ignore[attr-defined]
    return dummy


def _signature(f: Callable[..., Any], method: bool) -> inspect.Signature | None:
    """The Python signature of ``f`` (a Tensor member if ``method``): from its op's schemas
    when it is generated from the registry (NOTE [dummy signatures]), else its own."""
    name = getattr(f, "__name__", "")
    packet = getattr(ops.aten, name, None) if name and not name.startswith("__") else None
    if packet is not None and getattr(f, "__doc__", "") and str(packet) in (f.__doc__ or ""):
        sig = _schema_signature(packet, method)
        if sig is not None:
            return sig
    try:
        return inspect.signature(f)
    except (TypeError, ValueError):
        return None


def _schema_signature(packet: OpOverloadPacket, method: bool) -> inspect.Signature | None:
    """The parameters of every functional overload of ``packet`` in one signature, as the
    function (or, if ``method``, the Tensor method) binding them takes them.

    # NOTE [dummy signatures]
    A function generated from the registry takes the arguments of all its op's overloads
    (``ember.div`` those of ``div.Tensor`` and of ``div.Tensor_mode``: ``rounding_mode``;
    ``ember.scatter`` both ``src`` and ``value``), so its dummy lists them all, as
    PyTorch's dummies list what PyTorch's function accepts by any of its forms. The first
    overload gives the order; a parameter only a later overload has goes before the next
    one it shares with it, where everything from there on has a default
    (``nuclear_norm(input, dim, keepdim)`` from ``nuclear_norm(self, keepdim)`` and
    ``nuclear_norm.dim(self, dim, keepdim)``), else after the positional ones; keyword-only
    parameters come last. The first overload's required parameters are the dummy's, those
    only later overloads have default to None. The tensor argument is ``input`` in a
    function's dummy (where no argument is already), as PyTorch's binding names it, and
    ``self`` in a method's; keywords get a trailing ``_`` (``from_``); a factory's tensor
    options end with ``requires_grad=False`` (which its binding takes beside the schema's);
    a function's dummy (not a method's: methods take no ``out=``, in PyTorch neither) ends
    with ``out=None`` where the op has an ``out`` overload (one ``out``, a tuple, where that
    overload writes several tensors). Parameters are annotated with the schema's type
    strings. ``tests/test_overrides.py`` compares every dummy's parameter names with those
    PyTorch's dummy and PyTorch's real function both take.
    """
    overloads = [o for o in packet._overloads.values() if not o._schema.is_out]
    if not overloads:
        return None
    positional: list[inspect.Parameter] = []
    keyword_only: list[inspect.Parameter] = []
    seen: set[str] = set()
    for i, op in enumerate(overloads):
        args = op._schema.arguments
        has_input = any(a.name == "input" for a in args)
        names = [_param_name(a.name, method, has_input) for a in args]
        for j, (a, pname) in enumerate(zip(args, names, strict=True)):
            if pname in seen:
                continue
            seen.add(pname)
            default = a.default_value if a.has_default_value() else inspect.Parameter.empty
            if i and default is inspect.Parameter.empty:
                default = None  # the first overload's form does without it
            if a.kwarg_only:
                kind = inspect.Parameter.KEYWORD_ONLY
                keyword_only.append(inspect.Parameter(pname, kind, default=default))
                keyword_only[-1] = keyword_only[-1].replace(annotation=str(a.type))
                continue
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            param = inspect.Parameter(pname, kind, default=default, annotation=str(a.type))
            positional.insert(_insertion_point(positional, names[j + 1 :]), param)
    params = positional + keyword_only
    if "pin_memory" in seen and "requires_grad" not in seen:
        # a factory's tensor options: PyTorch's binding (and ember's) takes requires_grad too
        grad = inspect.Parameter("requires_grad", inspect.Parameter.KEYWORD_ONLY, default=False)
        params.append(grad.replace(annotation="bool"))
    with_out = not method and not packet.__name__.startswith("_")
    if with_out and any(o._schema.is_out for o in packet._overloads.values()):
        if "out" not in seen:  # PyTorch's dummies take out=None where there is an out= form
            out = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
            params.append(out.replace(annotation="Tensor?"))
    return inspect.Signature(params)


def _param_name(name: str, method: bool, has_input: bool) -> str:
    """A schema argument's name as a Python parameter (NOTE [dummy signatures])."""
    if keyword.iskeyword(name):
        return name + "_"  # from: from_
    if name == "self" and not method and not has_input:
        return "input"  # PyTorch's binding and dummies name a function's tensor input
    return name


def _insertion_point(params: list[inspect.Parameter], later: list[str]) -> int:
    """Where a parameter a later overload adds goes among ``params``: before the first of
    the names following it there that is already a parameter, if every parameter from that
    one on has a default (else a required one would follow an optional one); else last."""
    for name in later:
        at = next((k for k, p in enumerate(params) if p.name == name), None)
        if at is not None:
            if all(p.default is not inspect.Parameter.empty for p in params[at:]):
                return at
            break
    return len(params)
