"""``Proxy``: a value being traced, as ``torch.fx.proxy``.

A ``Proxy`` stands for a ``Node`` of the graph a tracer is building. Whatever Python does
with it becomes a node: public functions and ``Tensor`` methods reach its
``__torch_function__`` (a ``call_function`` node, or a ``call_method`` one for a method),
operators (``+``, ``@``, ``[]``, ``-x``, ``==``) become ``call_function`` nodes of the
``operator`` module's functions, attribute reads (``x.shape``, ``x.dtype``) become
``getattr`` nodes and method calls (``x.relu()``) ``call_method`` nodes. What would need the
value itself (``bool``, iteration, ``len``) raises ``TraceError`` saying why.

>>> g = ember.fx.Graph()
>>> x = ember.fx.Proxy(g.placeholder("x"))
>>> y = ember.relu(x * 2).sum(-1)
>>> _ = g.output((y.node, x.shape.node))
>>> print(ember.fx.GraphModule({}, g).code.strip())
def forward(self, x):
    mul = x * 2
    relu = ember.relu(mul);  mul = None
    sum_1 = relu.sum(-1);  relu = None
    getattr_1 = x.shape;  x = None
    return (sum_1, getattr_1)
"""

from __future__ import annotations

import bisect
import collections
import dis
import enum
import inspect
import operator
from collections.abc import Callable, Iterator
from typing import Any

from ember.dtypes import dtype
from ember.fx.graph import Graph
from ember.fx.node import Argument, Node, Target, map_aggregate
from ember.ops.registry import OpOverload, OpOverloadPacket
from ember.overrides._lists import is_tensor_method_or_property

__all__ = [
    "Attribute", "GraphAppendingTracer", "ParameterProxy", "Proxy", "TraceError", "TracerBase",
]  # fmt: skip


class TraceError(ValueError):
    """Tracing met something it cannot record (control flow on a traced value, iteration)."""


#: the operators a Proxy records, by the ``operator`` function's name, and how generated code
#: writes each (as torch.fx's ``magic_methods``)
REFLECTABLE = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}  # fmt: skip
MAGIC = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}", **REFLECTABLE,
}  # fmt: skip

#: values that are arguments as they are (numbers, strings, dtypes, ops...)
BASE_TYPES: tuple[type, ...] = (str, int, float, bool, complex, dtype, OpOverload,
                                OpOverloadPacket, type(None), type(...))  # fmt: skip


class TracerBase:
    """What a ``Proxy`` needs of its tracer: make nodes and proxies, turn Python values into
    graph arguments, and say what ``bool``/iteration of a proxy means (they raise)."""

    graph: Graph
    #: whether ``assert proxy`` records an assertion instead of raising TraceError
    trace_asserts: bool = False
    #: whether buffers read as module attributes become ``get_attr`` proxies (otherwise
    #: they become ``get_attr`` nodes only where they are used as arguments)
    proxy_buffer_attributes: bool = False
    #: the method of the root module that is traced
    traced_func_name: str = "forward"

    def create_node(
        self,
        kind: str,
        target: Target,
        args: tuple[Argument, ...],
        kwargs: dict[str, Argument],
        name: str | None = None,
        type_expr: Any = None,
    ) -> Node:
        """Add a node to the graph (override to check or change what is recorded)."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        stack = getattr(self, "module_stack", None)
        if stack:
            node.meta["nn_module_stack"] = collections.OrderedDict(stack)
        return node

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(
        self,
        kind: str,
        target: Target,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        name: str | None = None,
        type_expr: Any = None,
        proxy_factory_fn: Callable[[Node], Proxy] | None = None,
    ) -> Proxy:
        """A node for this call (arguments through ``create_arg``), wrapped in a Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return proxy_factory_fn(node) if proxy_factory_fn else self.proxy(node)

    def create_arg(self, a: Any) -> Argument:
        """A Python value as a graph argument: proxies become their nodes, containers are
        converted element by element, numbers, strings, dtypes and ops stay as they are."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, BASE_TYPES):
            return a
        if hasattr(type(a), "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(e) for e in a]
            return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out: dict[Any, Argument] = {}
            for k, v in a.items():
                key = self.create_arg(k)
                if isinstance(key, Node) or (
                    isinstance(key, tuple) and any(isinstance(e, Node) for e in key)
                ):
                    raise RuntimeError(
                        f"Keys for dictionaries used as an argument cannot contain a Node. "
                        f"Got key: {k}"
                    )
                out[key] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, enum.Enum) or _is_argument_value(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """What ``bool(proxy)`` means: by default TraceError (a custom tracer may decide)."""
        raise TraceError(
            "symbolically traced variables cannot be used as inputs to control flow"
            f" (bool() of {obj!r}); make the branch a concrete_args value, or move it into a "
            "function marked with ember.fx.wrap"
        )

    def iter(self, obj: Proxy) -> Iterator[Any]:
        """What iterating a proxy means: by default TraceError (unpacking ``a, b = proxy``
        is recorded as indexing instead)."""
        raise TraceError(
            f"Proxy object cannot be iterated ({obj!r}). This can be attempted when the Proxy "
            "is used in a loop or as a *args or **kwargs function argument. Loop over "
            "range(<a constant>) and index the proxy instead, or move the loop into a "
            "function marked with ember.fx.wrap"
        )

    def keys(self, obj: Proxy) -> Proxy:
        """What ``proxy.keys()`` (and ``**proxy``) records: a call of the method."""
        return Attribute(obj, "keys")()


def _is_argument_value(a: Any) -> bool:
    # devices, memory formats and layouts are arguments as they are, as in torch.fx
    return type(a).__module__.startswith("ember") and type(a).__name__ in (
        "device",
        "memory_format",
        "layout",
    )


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing graph (what a bare ``Proxy(node)`` uses)."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.module_stack: collections.OrderedDict[str, Any] = collections.OrderedDict()


class Proxy:
    """A traced value: every operation on it is recorded in its tracer's graph (see the
    module docstring). ``Proxy(node)`` appends to ``node``'s graph.

    A proxy cannot be a branch condition or be iterated (its value does not exist yet):
    make such values ``concrete_args`` of ``symbolic_trace``, or move the code into a
    function marked with ``ember.fx.wrap``, which is then recorded as one call.
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        self.tracer = tracer if tracer is not None else GraphAppendingTracer(node.graph)
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if k.startswith("_"):
            # protocols and private fields that Python and ember probe for (``__array__``,
            # ``_is_param``) are not attributes of the traced value
            raise AttributeError(f"{type(self).__name__} has no attribute {k!r}")
        return Attribute(self, k)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator[Proxy]:
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        if caller is not None:
            insts = list(dis.get_instructions(caller.f_code))
            i = bisect.bisect_left([x.offset for x in insts], caller.f_lasti)
            if i < len(insts) and insts[i].opname == "UNPACK_SEQUENCE":
                # ``a, b = proxy``: the count is known from the code, so index it
                return iter([self[k] for k in range(insts[i].argval)])  # type: ignore[index]
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self) -> Proxy:
        return self.tracer.keys(self)

    def __len__(self) -> int:
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to "
            "be recorded, please call ember.fx.wrap('len') at module scope"
        )

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    @classmethod
    def __torch_function__(
        cls,
        orig_method: Callable[..., Any],
        types: tuple[type, ...],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> Proxy:
        args = args or ()
        kwargs = kwargs or {}
        tracers: dict[TracerBase, None] = {}

        def find(a: Any) -> Any:
            if isinstance(a, cls):
                tracers[a.tracer] = None
            return a

        map_aggregate(args, find)
        map_aggregate(kwargs, find)
        if len(tracers) > 1:
            raise RuntimeError(
                f"Found multiple different tracers {list(tracers)} while trying to trace "
                f"operations {orig_method}"
            )
        tracer = next(iter(tracers))
        if is_tensor_method_or_property(orig_method):
            if getattr(orig_method, "__name__", "") == "__get__":
                # a property read of a real tensor with a proxy argument cannot happen; a
                # property of a proxy is an Attribute
                raise TraceError(f"cannot trace the property getter {orig_method!r}")
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy(
            "call_function",
            orig_method,
            args,
            kwargs,
            name=tracer.graph._target_to_str(orig_method),
        )


class Attribute(Proxy):
    """``proxy.name``: a ``getattr`` node (made when first used), or a ``call_method``
    node when called (``proxy.relu()``)."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


class ParameterProxy(Proxy):
    """A parameter's proxy whose ``shape``, ``size()``, ``dim()``, ``ndim``, ``numel()`` and
    ``nelement()`` are the parameter's own (``Tracer(param_shapes_constant=True)``), so
    Python code may branch on them."""

    def __init__(self, tracer: TracerBase, node: Node, name: str, param: Any) -> None:
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self) -> Any:
        return self.param.shape

    def size(self, dim: int | None = None) -> Any:
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self) -> int:
        return int(self.param.dim())

    @property
    def ndim(self) -> int:
        return int(self.param.ndim)

    def numel(self) -> int:
        return int(self.param.numel())

    def nelement(self) -> int:
        return int(self.param.numel())


def _define_operator(name: str) -> None:
    target = getattr(operator, name)

    def impl(*args: Any, **kwargs: Any) -> Proxy:
        return args[0].tracer.create_proxy("call_function", target, args, kwargs)

    impl.__name__ = impl.__qualname__ = f"__{name.strip('_')}__"
    # set after the class is made, so defining __eq__ keeps Proxy hashable (as torch.fx)
    setattr(Proxy, impl.__name__, impl)


def _define_reflected(name: str) -> None:
    target = getattr(operator, name)

    def impl(self: Proxy, lhs: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", target, (lhs, self), {})

    impl.__name__ = impl.__qualname__ = f"__r{name.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


for _name in MAGIC:
    if hasattr(operator, _name):  # ``div`` is Python 2's
        _define_operator(_name)
for _name in REFLECTABLE:
    if hasattr(operator, _name):
        _define_reflected(_name)
