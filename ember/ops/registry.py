"""Operators: ``OpOverload`` (one schema; calling it dispatches), ``OpOverloadPacket`` (all
overloads of one name) and the ``ember.ops.<namespace>`` objects that hold them. How a call
finds its kernel: NOTE [kernel lookup] in ``ember/dispatch/dispatcher.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_PLAIN, TENSOR_TYPE, Kernel, call_kernel
from ember.dispatch.keys import DispatchKey
from ember.dispatch.protocols import TORCH_FUNCTION, TORCH_FUNCTION_HANDLER
from ember.ops.schema import FunctionSchema, parse_schema

__all__ = [
    "OpOverload", "OpOverloadPacket", "ops", "define_op", "all_overloads", "impl", "TENSOR_TYPE",
]  # fmt: skip


class _OpModule(str):
    """``OpOverload.__module__``: on an op, ``"ember.ops.<namespace>"`` (PyTorch's is
    ``"torch._ops.<namespace>"``, so ``f"{func.__module__}.{func.__name__}"`` names the op,
    as logging handlers print it); on the class itself, the defining module. A ``str`` so
    that the class attribute stays a string; a descriptor so that each op gives its own."""

    __slots__ = ()

    def __get__(self, obj: Any, owner: Any = None) -> str:
        return str(self) if obj is None else f"ember.ops.{obj.namespace}"


class OpOverload:
    """One overload of an operator, e.g. ``ember.ops.aten.add.Tensor``; calling it dispatches.

    >>> ember.ops.aten.add.Tensor(ember.ones(2), ember.ones(2))
    tensor([2., 2.])
    """

    __slots__ = (
        "_schema", "_name", "_overloadname", "overloadpacket", "namespace", "tags",
        "_kernels", "_table", "_keyset", "_dispatch", "_public", "__name__", "__qualname__",
        "_qualname", "py_kernels", "__weakref__",
    )  # fmt: skip

    __module__ = _OpModule(__name__)

    def __init__(self, packet: OpOverloadPacket, schema: FunctionSchema, tags: tuple[str, ...]):
        self._schema = schema
        self.overloadpacket = packet
        self.namespace = packet._namespace
        self._overloadname = schema.overload_name or "default"
        self._name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
        self.__name__ = f"{packet.__name__}.{self._overloadname}"
        self.__qualname__ = self.__name__
        self._qualname = f"{self.namespace}.{self.__name__}"
        self.tags = tags
        self._kernels: dict[DispatchKey, Kernel] = {}
        self._table: list[Kernel] | None = None
        self._dispatch, self._public, self._keyset = dispatcher.make_dispatch_fns(self)
        self.py_kernels: dict[Any, Callable[..., Any]] = {}
        dispatcher.all_ops.append(self)

    # ---------------------------------------------------------------- names
    def name(self) -> str:
        """``"aten::add.Tensor"`` (``"aten::sum"`` for a default overload)."""
        return self._name

    def __str__(self) -> str:
        return self._qualname

    def __repr__(self) -> str:
        packet = f"{self.namespace}.{self.overloadpacket.__name__}"
        return f"<OpOverload(op='{packet}', overload='{self._overloadname}')>"

    @property
    def op(self) -> OpOverload:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_lookup, (self.namespace, self.overloadpacket.__name__, self._overloadname))

    @property
    def is_view(self) -> bool:
        return self._schema.view_of is not None

    # ---------------------------------------------------------------- calling
    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        r = self._public(*args, **kwargs)  # generated per op: NOTE [kernel lookup]
        # NOTE [torch function keys]: an argument or a mode takes the call over
        return r if r is not TORCH_FUNCTION else TORCH_FUNCTION_HANDLER[0](self, args, kwargs)

    def redispatch(self, keyset: int, /, *args: Any, **kwargs: Any) -> Any:
        """Run the kernel of the highest key in ``keyset`` (a kernel passes its own key set
        with itself masked out: ``op.redispatch(ks & below(key), ...)``)."""
        if not keyset:
            raise RuntimeError(f"{self}: redispatch with an empty key set: no kernel below")
        kernel = (self._table or dispatcher.build_table(self))[keyset.bit_length() - 1]
        return call_kernel(self, kernel, keyset, args, kwargs)

    def call_boxed(self, keyset: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``redispatch`` with the arguments as a tuple and a dict."""
        if not keyset:
            raise RuntimeError(f"{self}: redispatch with an empty key set: no kernel below")
        kernel = (self._table or dispatcher.build_table(self))[keyset.bit_length() - 1]
        return call_kernel(self, kernel, keyset, args, kwargs)

    def decompose(self, *args: Any, **kwargs: Any) -> Any:
        """Run the CompositeImplicitAutograd kernel, or return NotImplemented if none."""
        k = self._kernels.get(DispatchKey.CompositeImplicitAutograd)
        if k is None:
            return NotImplemented
        ks = self._keyset(args, kwargs) if k[1] != KIND_PLAIN else 0
        return call_kernel(self, k, ks, args, kwargs)

    def kernel_for(self, key: int) -> Callable[..., Any]:
        """The kernel that runs when ``key`` is a call's highest key, as a function of the
        op's own arguments (run with the key set of ``key`` alone).

        >>> from ember.dispatch.keys import DispatchKey
        >>> ember.ops.aten.neg.default.kernel_for(DispatchKey.CPU)(ember.ones(2))
        tensor([-1., -1.])
        """
        kernel = (self._table or dispatcher.build_table(self))[key]
        return dispatcher.as_plain(self, kernel, 1 << key)

    def entry(self, key: int) -> Kernel:
        """The ``(function, calling convention)`` that runs when ``key`` is a call's highest
        key (NOTE [kernel lookup]); call it with ``dispatcher.call_kernel``."""
        return (self._table or dispatcher.build_table(self))[key]

    def invalidate(self) -> None:
        """Drop the op's kernel table (rebuilt on next call): what a fallback's specializer
        makes for it has changed (a derivative entry was added, ...)."""
        self._table = None

    # ---------------------------------------------------------------- kernels
    def has_kernel_for_dispatch_key(self, key: DispatchKey) -> bool:
        return key in self._kernels

    def registered(self, key: DispatchKey) -> Kernel | None:
        """The ``(function, calling convention)`` registered for ``key`` itself, or None:
        not the table's entry, which may be a fallback or an alias key's kernel.

        >>> from ember.dispatch.keys import DispatchKey
        >>> ember.ops.aten.neg.default.registered(DispatchKey.CPU) is not None
        True
        >>> ember.ops.aten.neg.default.registered(DispatchKey.CompositeImplicitAutograd)
        """
        return self._kernels.get(key)

    def kernel_keys(self) -> list[DispatchKey]:
        return sorted(self._kernels, reverse=True)

    def _build_table(self) -> list[Kernel]:  # (kept for callers written before ``entry``)
        return dispatcher.build_table(self)


# --------------------------------------------------------------------------- packets


class OpOverloadPacket:
    """All overloads of one operator name, e.g. ``ember.ops.aten.add``.

    >>> ember.ops.aten.add.overloads()
    ['Tensor', 'out', 'Scalar', 'Scalar_out']

    (PyTorch lists them in another order, with TorchScript's overloads of ``add`` too:
    ``'t'``, ``'str'``, ``'int'``, ...)
    """

    def __init__(self, namespace: str, name: str) -> None:
        self._namespace = namespace
        self.__name__ = name
        self.__module__ = f"ember.ops.{namespace}"  # as PyTorch's "torch._ops.<namespace>"
        self._qualified_op_name = f"{namespace}::{name}"
        self._overloads: dict[str, OpOverload] = {}
        self._variants: set[str] = set()  # "function" / "method": the public bindings wanted

    def __getattr__(self, attr: str) -> OpOverload:
        try:
            op = self.__dict__["_overloads"][attr]
        except KeyError:
            raise AttributeError(
                f"The underlying op of '{self}' has no overload name '{attr}'"
            ) from None
        self.__dict__[attr] = op  # later lookups are plain attribute hits (undefine_op clears)
        return op

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def __iter__(self) -> Iterator[str]:
        return iter(self._overloads)

    def __str__(self) -> str:
        return f"{self._namespace}.{self.__name__}"

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._namespace}.{self.__name__}')>"

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        from ember.ops.binding import resolve  # binding imports this module

        op, args, kwargs = resolve(self, args, kwargs)
        return op(*args, **kwargs)


class _Namespace:
    """``ember.ops.aten``: attribute access gives the op packets of one namespace."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, attr: str) -> OpOverloadPacket:
        try:
            packet = self.__dict__["packets"][attr]
        except KeyError:
            raise AttributeError(
                f"'_OpNamespace' '{self.name}' object has no attribute '{attr}'"
            ) from None
        self.__dict__[attr] = packet  # cached, as in OpOverloadPacket.__getattr__
        return packet

    def __dir__(self) -> list[str]:
        return sorted(self.packets)

    def __iter__(self) -> Iterator[OpOverloadPacket]:
        return iter(list(self.packets.values()))


class _Ops:
    """``ember.ops``: one namespace object per namespace (``aten``, ``prims``, user ones)."""

    def __init__(self) -> None:
        self._namespaces: dict[str, _Namespace] = {}

    def __getattr__(self, name: str) -> _Namespace:
        if name.startswith("__"):
            raise AttributeError(name)
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _Namespace(name)
        return ns


ops = _Ops()


def impl(
    op: OpOverload,
    key: DispatchKey | str | tuple[DispatchKey | str, ...],
    func: Callable[..., Any] | None = None,
) -> Any:
    """Register ``func`` as ``op``'s plain kernel for ``key`` (a DispatchKey or its name, or a
    tuple of them); a
    decorator without ``func``: the catalogue's in-tree registration (``ember.library.impl``
    is the public one, taking names and libraries too).

    >>> from ember.ops.registry import impl, ops
    >>> from ember.dispatch.keys import DispatchKey
    >>> impl(ops.aten.neg.default, DispatchKey.CPU) is not None
    True
    """
    keys = key if isinstance(key, tuple) else (key,)
    dkeys = [k if isinstance(k, DispatchKey) else DispatchKey[k] for k in keys]

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        for k in dkeys:
            dispatcher.set_kernel(op, k, f, KIND_PLAIN)
        return f

    return register if func is None else register(func)


def _lookup(namespace: str, name: str, overload: str) -> OpOverload:
    return getattr(getattr(getattr(ops, namespace), name), overload)


def all_overloads() -> list[OpOverload]:
    """Every registered OpOverload, in definition order."""
    return list(dispatcher.all_ops)


# --------------------------------------------------------------------------- registration


def define_op(
    schema_text: str,
    namespace: str = "aten",
    tags: tuple[str, ...] = (),
    variants: tuple[str, ...] = (),
) -> OpOverload:
    schema = parse_schema(schema_text, namespace)
    ns_name, _, name = schema.name.partition("::")
    ns = getattr(ops, ns_name)
    packet = ns.packets.get(name)
    if packet is None:
        packet = ns.packets[name] = OpOverloadPacket(ns_name, name)
    overload = schema.overload_name or "default"
    if overload in packet._overloads:
        raise RuntimeError(f"{schema.name}.{overload} is already defined: {schema_text}")
    op = OpOverload(packet, schema, tuple(tags))
    packet._variants.update(variants)
    packet._overloads[overload] = op
    return op


def undefine_op(op: OpOverload) -> None:
    packet = op.overloadpacket
    del packet._overloads[op._overloadname]
    packet.__dict__.pop(op._overloadname, None)
    dispatcher.all_ops.remove(op)
    dispatcher.invalidate()
    if not packet._overloads:
        ns = getattr(ops, op.namespace)
        del ns.packets[packet.__name__]
        ns.__dict__.pop(packet.__name__, None)
