"""``symbolic_trace`` and ``Tracer``: a graph from running Python code on proxies, as
``torch.fx``.

The tracer calls the function (or the module's ``forward``) with a ``Proxy`` per parameter
and records what the proxies go through (NOTE [symbolic tracing]). The result is a
``GraphModule`` whose generated ``forward`` does the same calls.

>>> def f(x, y):
...     return ember.relu(x + y) * 2
>>> gm = ember.fx.symbolic_trace(f)
>>> print(gm.code.strip())
def forward(self, x, y):
    add = x + y;  x = y = None
    relu = ember.relu(add);  add = None
    mul = relu * 2;  relu = None
    return mul
>>> gm(ember.tensor([1.0, -3.0]), ember.tensor([1.0, 1.0]))
tensor([4., 0.])

NOTE [symbolic tracing]
Inside ``Tracer.trace`` three things are patched, and put back after:
- ``Module.__call__``: a module call goes to ``Tracer.call_module``, which records a
  ``call_module`` node for a leaf module (``is_leaf_module``: ember.nn's own modules but
  ``Sequential``) and otherwise runs its ``forward`` on the proxies;
- ``Module.__getattr__`` (reached for parameters, buffers and submodules): a parameter
  becomes a ``get_attr`` proxy (``Tracer.getattr``), one per parameter;
- the functions marked with ``wrap`` (and those of the ``math`` module) in the globals of
  the traced code: a call with a proxy argument becomes one ``call_function`` node.
Everything else reaches the proxies themselves: ember's functions through
``__torch_function__``, operators and methods through ``Proxy``'s own methods. Tensors that
are not parameters or buffers of the root become ``_tensor_constant<n>`` attributes.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import sys
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from types import FunctionType, ModuleType
from typing import Any

from ember._tensor import Tensor
from ember._torch_functional import _assert
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Argument, map_aggregate
from ember.fx.proxy import ParameterProxy, Proxy, TracerBase
from ember.nn.modules.container import Sequential
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["PH", "Tracer", "is_fx_tracing", "symbolic_trace", "wrap"]

_IS_TRACING = [False]
_ORIG_GETATTR = Module.__getattr__
_ORIG_CALL = Module.__call__
#: (id of a module's globals, name) -> those globals: the functions ``wrap`` marked
_WRAPPED: dict[tuple[int, str], dict[str, Any]] = {}
_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def is_fx_tracing() -> bool:
    """Whether a ``symbolic_trace`` is running (``torch.fx._symbolic_trace.is_fx_tracing``).

    >>> ember.fx._symbolic_trace.is_fx_tracing()
    False
    """
    return _IS_TRACING[0]


class PHBase:
    """A ``concrete_args`` value that stays a placeholder (``PH``)."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def _assert_is_none(value: Any, msg: str) -> None:
    """What a ``None`` given in ``concrete_args`` checks at run time."""
    if value is not None:
        raise AssertionError(msg)


class Tracer(TracerBase):
    """Records a module or function as a ``Graph`` (``trace``); subclass it and override
    ``is_leaf_module``, ``call_module``, ``create_proxy``, ``create_arg`` or ``getattr`` to
    change what is recorded.

    >>> class NoLeaves(ember.fx.Tracer):
    ...     def is_leaf_module(self, m, qualified_name):
    ...         return False
    >>> g = NoLeaves().trace(ember.nn.Sequential(ember.nn.ReLU()))
    >>> [n.op for n in g.nodes]
    ['placeholder', 'call_function', 'output']
    """

    def __init__(
        self,
        autowrap_modules: tuple[ModuleType, ...] = (math,),
        autowrap_functions: tuple[Callable[..., Any], ...] = (),
        param_shapes_constant: bool = False,
    ) -> None:
        super().__init__()
        self._autowrap_function_ids = {
            id(v)
            for m in autowrap_modules
            for k, v in m.__dict__.items()
            if not k.startswith("_") and callable(v)
        }
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        # NOTE [factories of proxies]
        self._autowrap_function_ids.update(id(f) for f in _factories())
        self._autowrap_search.append(_EMBER)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict[Module, str] | None = None
        self.root_module_name = ""
        self.module_stack: OrderedDict[str, tuple[str, Any]] = OrderedDict()
        self.num_calls: dict[str, int] = {}
        self.tensor_attrs: dict[Any, str] = {}

    # ---------------------------------------------------------------- overridable
    def create_arg(self, a: Any) -> Argument:
        """As ``TracerBase.create_arg``, and: a parameter or buffer of the root becomes a
        ``get_attr`` node; another tensor is stored on the root as ``_tensor_constant<n>``
        and read with ``get_attr``; a submodule of the root becomes ``get_attr``."""
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", n, (), {})
            qualname = self.tensor_attrs.get(_Key(a))
            if qualname is None:
                qualname = self.get_fresh_qualname("_tensor_constant")
                self.tensor_attrs[_Key(a)] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        if isinstance(a, Module):
            for n, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", n, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            # a named tuple is made by a call of its class (a node, as torch.fx does)
            args = tuple(self.create_arg(e) for e in a)
            return self.create_node("call_function", type(a), args, {})
        return super().create_arg(a)

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """Whether a call of ``m`` is recorded as one ``call_module`` node: ember.nn's own
        modules are (but ``Sequential``), user modules are traced through."""
        return type(m).__module__.startswith("ember.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        """``mod``'s dotted name in the root (``"layer1.0"``)."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(
        self,
        m: Module,
        forward: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """A module call: a ``call_module`` proxy for a leaf module, else ``forward``'s
        result traced through."""
        name = self.path_of_module(m)
        calls = self.num_calls.get(name, 0)
        key = f"{name}@{calls}" if calls else name
        self.module_stack[key] = (name, type(m))
        self.num_calls[name] = calls + 1
        try:
            if not self.is_leaf_module(m, name):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", name, args, kwargs)
        finally:
            self.module_stack.pop(key, None)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Proxy]) -> Any:
        """What reading a module attribute gives while tracing: a ``get_attr`` proxy for a
        parameter of the root (one per parameter; buffers too with
        ``proxy_buffer_attributes``), the value itself otherwise."""
        collections: list[Callable[[], Iterator[tuple[str, Any]]]] = []
        if isinstance(attr_val, Parameter):
            collections.append(self.root.named_parameters)
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            collections.append(self.root.named_buffers)
        for named in collections:
            for n, p in named():
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        factory = None
                        if self.param_shapes_constant and isinstance(attr_val, Parameter):
                            factory = functools.partial(_parameter_proxy, self, n, attr_val)
                        parameter_proxy_cache[n] = self.create_proxy(
                            "get_attr", n, (), {}, proxy_factory_fn=factory
                        )
                    return parameter_proxy_cache[n]
        return attr_val

    def get_fresh_qualname(self, prefix: str) -> str:
        """``<prefix><n>`` for the first ``n`` that the root has no attribute of."""
        i = 0
        while hasattr(self.root, f"{prefix}{i}"):
            i += 1
        return f"{prefix}{i}"

    # ---------------------------------------------------------------- tracing
    def create_args_for_root(
        self,
        root_fn: Callable[..., Any],
        is_module: bool,
        concrete_args: dict[str, Any] | tuple[Any, ...] | None = None,
    ) -> tuple[Callable[..., Any], list[Any]]:
        """Placeholders for ``root_fn``'s parameters (``*args`` and ``**kwargs`` too), and
        the function to call with them."""
        fn = inspect.unwrap(root_fn)
        co = fn.__code__
        total = co.co_argcount + co.co_kwonlyargcount
        names = list(co.co_varnames)
        sig = inspect.signature(fn)
        args: list[Any] = []
        skip = 0
        if is_module:
            if total == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            args.append(self.root)
        arg_names = names[skip:total]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(
                    f"Tracing expected {len(arg_names)} arguments but got "
                    f"{len(concrete_args)} concrete arguments"
                )
            concrete_args = dict(zip(arg_names, concrete_args, strict=True))
        if not co.co_flags & _VARSTUFF:
            for name in arg_names:
                args.append(self._placeholder(name, concrete_args, sig, fn))
            return root_fn, args
        # placeholders in the order of a signature (positional, *args, keyword-only,
        # **kwargs), so the generated forward takes them as the function does; the
        # function is called with all of them positionally, in the order of its code
        n_pos = co.co_argcount - skip
        made: dict[str, Any] = {}
        extra = total
        varargs = varkw = None
        if co.co_flags & inspect.CO_VARARGS:
            varargs = names[extra]
            extra += 1
        if co.co_flags & inspect.CO_VARKEYWORDS:
            varkw = names[extra]
        order = arg_names[:n_pos] + ([f"*{varargs}"] if varargs else [])
        order += arg_names[n_pos:] + ([f"**{varkw}"] if varkw else [])
        for name in order:
            made[name.lstrip("*")] = self._placeholder(name, concrete_args, sig, fn)
        code_order = arg_names + [n for n in (varargs, varkw) if n]
        args.extend(made[n] for n in code_order)
        return _positional(root_fn, len(args)), args

    def _placeholder(
        self,
        name: str,
        concrete_args: dict[str, Any] | None,
        sig: inspect.Signature,
        fn: Callable[..., Any],
    ) -> Any:
        if name[0] == "*":
            default: tuple[Any, ...] = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        if concrete_args is not None and name in concrete_args:
            return self._concrete(name, concrete_args[name], default)
        type_expr = getattr(fn, "__annotations__", {}).get(name.lstrip("*"))
        return self.create_proxy("placeholder", name, default, {}, type_expr=type_expr)

    def _concrete(self, name: str, value: Any, default: tuple[Any, ...]) -> Any:
        """A ``concrete_args`` entry: a placeholder ``<name>_1`` whose value is checked to be
        the one traced with (``PH`` keeps it a placeholder proxy)."""
        leaves: list[Any] = []
        map_aggregate(value, leaves.append)
        if value is not PH and any(isinstance(v, PHBase) for v in leaves):
            raise NotImplementedError(
                f"symbolic_trace: concrete_args[{name!r}] mixes PH with concrete values; ember "
                "keeps a whole argument a placeholder (PH) or a constant"
            )
        out = self.create_proxy("placeholder", f"{name}_1", default, {})
        if isinstance(value, PHBase):
            return out
        if type(value) in (bool, int, float, str, complex):
            self.create_proxy(
                "call_function",
                _assert,
                (out == value, f"{name} has been specialized to have value {value} but got "
                 "another value"),
                {},
            )  # fmt: skip
        elif value is None:
            msg = f"{name} has been specialized to have value None but got another value"
            self.create_proxy("call_function", _assert_is_none, (out, msg), {})
        else:
            warnings.warn(
                f"Was not able to add assertion to guarantee correct input {name} to specialized "
                "function. It is up to the user to make sure that your inputs match the inputs "
                "you specialized the function with.",
                stacklevel=4,
            )
        return value

    def trace(
        self, root: Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None
    ) -> Graph:
        """Run ``root`` (a module's ``forward``, or a function) on proxies and return the
        graph of what they went through (NOTE [symbolic tracing]). A function is traced
        as the ``forward`` of an empty module, which ``self.root`` then is."""
        was_tracing = _IS_TRACING[0]
        _IS_TRACING[0] = True
        try:
            if isinstance(root, Module):
                self.root = root
                fn = getattr(type(root), self.traced_func_name, None)
                if isinstance(root, GraphModule) and self.traced_func_name == "forward":
                    fn = root.generated_forward()  # its parameters, not (*args, **kwargs)
                if fn is None:
                    raise AttributeError(
                        f"traced_func_name={self.traced_func_name} doesn't exist in "
                        f"{type(root).__name__}"
                    )
                self.root_module_name = root._get_name()
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = Module()
                fn = root
            if not isinstance(fn, FunctionType):
                raise TypeError(
                    f"symbolic_trace: expected a Python function or a Module whose "
                    f"{self.traced_func_name} is one, got {type(fn).__name__}"
                )
            self.graph = Graph(tracer_cls=type(self))
            self.tensor_attrs = {}
            self._collect_tensor_attrs(self.root, [])
            fn_globals = fn.__globals__
            fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
            cache: dict[str, Proxy] = {}
            with _Patcher() as patcher:
                self._patch(patcher, cache)
                patcher.autowrap(fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    patcher.autowrap(module.__dict__, self._autowrap_function_ids)
                result = fn(*args)
                ann = getattr(inspect.unwrap(fn), "__annotations__", {})
                self.create_node(
                    "output", "output", (self.create_arg(result),), {},
                    type_expr=ann.get("return"),
                )  # fmt: skip
            self.submodule_paths = None
        finally:
            _IS_TRACING[0] = was_tracing
        return self.graph

    def _collect_tensor_attrs(self, m: Module, prefix: list[str]) -> None:
        # tensors kept as plain attributes of the root are read by name, not copied
        for k, v in m.__dict__.items():
            if isinstance(v, Tensor):
                self.tensor_attrs[_Key(v)] = ".".join([*prefix, k])
        for k, child in m.named_children():
            self._collect_tensor_attrs(child, [*prefix, k])

    def _patch(self, patcher: _Patcher, cache: dict[str, Proxy]) -> None:
        tracer = self

        @functools.wraps(_ORIG_GETATTR)
        def module_getattr(mod: Module, attr: str) -> Any:
            return tracer.getattr(attr, _ORIG_GETATTR(mod, attr), cache)

        @functools.wraps(_ORIG_CALL)
        def module_call(mod: Module, *args: Any, **kwargs: Any) -> Any:
            def forward(*a: Any, **k: Any) -> Any:
                return _ORIG_CALL(mod, *a, **k)

            fwd = getattr(type(mod), "forward", None)
            patcher.autowrap(getattr(fwd, "__globals__", {}), tracer._autowrap_function_ids)
            return tracer.call_module(mod, forward, args, kwargs)

        patcher.setattr(Module, "__getattr__", module_getattr)
        patcher.setattr(Module, "__call__", module_call)
        for (_, name), frame_dict in list(_WRAPPED.items()):
            if name not in frame_dict and hasattr(builtins, name):
                orig = getattr(builtins, name)
            else:
                orig = frame_dict[name]
            patcher.setitem(frame_dict, name, _wrapped_function(orig))


#: ember's factories whose size or bound arguments may be traced values
FACTORY_NAMES = ("zeros", "ones", "empty", "full", "arange", "rand", "randn", "randint",
                 "randperm", "linspace", "logspace", "eye", "empty_strided")  # fmt: skip
_EMBER = sys.modules["ember"]


def _factories() -> list[Callable[..., Any]]:
    """NOTE [factories of proxies]
    ``torch.zeros(x.shape)`` reaches ``Proxy.__torch_function__`` because PyTorch's argument
    parser looks for the protocol in size and scalar arguments too; ember's dispatcher looks
    in tensor arguments only, and a factory has none. So, while tracing, ember's factories
    are leaves as ``math``'s functions are: a call with a proxy argument is one
    ``call_function`` node of the factory itself (printed ``ember.zeros(getattr_1)``)."""
    return [f for n in FACTORY_NAMES if callable(f := getattr(_EMBER, n, None))]


def _parameter_proxy(tracer: Tracer, name: str, param: Any, node: Any) -> ParameterProxy:
    return ParameterProxy(tracer, node, name, param)


class _Key:
    """A tensor as a dictionary key by identity (tensors compare elementwise)."""

    __slots__ = ("t",)

    def __init__(self, t: Any) -> None:
        self.t = t

    def __hash__(self) -> int:
        return id(self.t)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and other.t is self.t


def _positional(fn: Callable[..., Any], nargs: int) -> Callable[..., Any]:
    """``fn`` with its keyword-only, ``*args`` and ``**kwargs`` parameters taken
    positionally, so each can be given one proxy."""
    co = fn.__code__  # type: ignore[attr-defined]
    code = co.replace(
        co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0,
        co_flags=co.co_flags & ~_VARSTUFF,
    )  # fmt: skip
    return FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)  # type: ignore[attr-defined]


def _find_proxy(*objects: Any) -> Proxy | None:
    found: list[Proxy] = []

    def look(x: Any) -> Any:
        if isinstance(x, Proxy) and not found:
            found.append(x)
        return x

    map_aggregate(objects, look)
    return found[0] if found else None


def _wrapped_function(orig: Callable[..., Any]) -> Callable[..., Any]:
    """``orig`` recorded as one ``call_function`` node when a proxy is among its arguments."""

    @functools.wraps(orig)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return orig(*args, **kwargs)
        out = proxy.tracer.create_proxy("call_function", orig, args, kwargs)
        out.node.meta["is_wrapped"] = True
        return out

    return wrapped


class _Patcher:
    """Changes made for one trace, undone in reverse order when the block ends."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []
        self._visited: set[int] = set()

    def setitem(self, d: dict[str, Any], name: str, value: Any) -> None:
        if name in d:
            old = d[name]
            self._undo.append(lambda: d.__setitem__(name, old))
        else:
            self._undo.append(lambda: d.pop(name, None))
        d[name] = value

    def setattr(self, cls: type, name: str, value: Any) -> None:
        old = cls.__dict__[name]
        self._undo.append(lambda: setattr(cls, name, old))
        setattr(cls, name, value)

    def autowrap(self, frame_dict: dict[str, Any], ids: set[int]) -> None:
        """Wrap the functions of ``frame_dict`` whose ids are in ``ids`` (``math.sqrt``...)."""
        if id(frame_dict) in self._visited:
            return
        self._visited.add(id(frame_dict))
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in ids:
                self.setitem(frame_dict, name, _wrapped_function(value))

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc: Any) -> None:
        while self._undo:
            self._undo.pop()()
        self._visited.clear()


def wrap(fn_or_name: str | Callable[..., Any]) -> Any:
    """Mark a global function (by itself or its name) of the calling module as a leaf:
    a call of it with a proxy argument is recorded as one ``call_function`` node instead of
    being traced through. Call it at the top level of a module.

    >>> import ember.fx
    >>> ember.fx.wrap("len")  # doctest: +SKIP
    """
    if callable(fn_or_name):
        name = fn_or_name.__name__
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise TypeError(
            f"wrap: expected a global function or its name, got {type(fn_or_name).__name__}"
        )
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _WRAPPED[(id(caller.f_globals), name)] = caller.f_globals
    return fn_or_name


def symbolic_trace(
    root: Module | Callable[..., Any], concrete_args: dict[str, Any] | None = None
) -> GraphModule:
    """A ``GraphModule`` recording what ``root`` (a module or a function) does with its
    inputs; ``concrete_args`` fixes some inputs to values (their branches are taken and
    checked at run time) or keeps them placeholders (``PH``).

    >>> def f(x, double):
    ...     return x * 2 if double else x
    >>> gm = ember.fx.symbolic_trace(f, concrete_args={"double": True})
    >>> gm(ember.ones(2), True)
    tensor([2., 2.])
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
