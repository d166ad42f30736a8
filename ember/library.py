"""Defining ops and registering kernels: the API ember's own layers and users share.

>>> lib = ember.library.Library("demo", "DEF")
>>> lib.define("twice(Tensor x) -> Tensor")
'twice'
>>> lib.impl("twice", lambda x: x * 2, "CPU")
>>> ember.ops.demo.twice(ember.ones(2))
tensor([2., 2.])
>>> lib._destroy()  # undo the definition (the op is gone from ember.ops.demo)

Kernel conventions (see NOTE [kernel lookup] in ``ember/dispatch/dispatcher.py``): an op
kernel takes the op's own arguments (with ``with_keyset=True``, the call's key set first,
to redispatch below itself); a fallback takes ``(op, keyset, args, kwargs)`` and serves every
op that has no kernel of its own for that key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any

from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_BOXED, KIND_KEYSET, KIND_PLAIN
from ember.dispatch.keys import DispatchKey
from ember.ops import registry
from ember.ops.registry import OpOverload

__all__ = ["Library", "impl", "define", "fallthrough_kernel", "dispatch_key", "get_op"]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_DEVICE_KEYS = {
    "cpu": DispatchKey.CPU,
    "meta": DispatchKey.Meta,
    "lazy": DispatchKey.Lazy,
    "default": DispatchKey.CompositeExplicitAutograd,
    "AutogradCPU": DispatchKey.Autograd,
    "AutogradMeta": DispatchKey.Autograd,
    "AutogradLazy": DispatchKey.Autograd,
    "": DispatchKey.CompositeImplicitAutograd,
}


def fallthrough_kernel() -> None:
    """Pass to ``Library.fallback`` or ``impl`` to make a key transparent."""
    raise AssertionError("fallthrough_kernel is a marker and is never called")


def dispatch_key(key: DispatchKey | str) -> DispatchKey:
    """A DispatchKey from its name (``"CPU"``), a device type (``"cpu"``) or itself.

    >>> ember.library.dispatch_key("meta")
    <DispatchKey.Meta: 2>
    """
    if isinstance(key, DispatchKey):
        return key
    found = _DEVICE_KEYS.get(key)
    if found is not None:
        return found
    try:
        return DispatchKey[key]
    except KeyError:
        names = ", ".join(k.name for k in DispatchKey)
        raise ValueError(f"unknown dispatch key {key!r}; expected one of: {names}") from None


def get_op(name: str | OpOverload, namespace: str = "aten") -> OpOverload:
    """The OpOverload for ``"add.Tensor"``, ``"aten::add.Tensor"`` or ``"ns::op"``.

    >>> ember.library.get_op("aten::add.Tensor")
    <OpOverload(op='aten.add', overload='Tensor')>
    """
    if isinstance(name, OpOverload):
        return name
    if isinstance(name, registry.OpOverloadPacket):
        return name.default
    if "::" in name:
        namespace, name = name.split("::", 1)
    base, _, overload = name.partition(".")
    packet = getattr(getattr(registry.ops, namespace), base, None)
    if packet is None:
        raise ValueError(f"operator {namespace}::{base} is not defined; define() it first")
    return getattr(packet, overload or "default")


def _own_rules_first(key: DispatchKey) -> None:
    """ember's own batching rules load on first use (NOTE [loaded on first use] in
    ember/__init__.py): they are registered before a library's kernel on their keys, so
    theirs never replaces the library's later."""
    if key in (DispatchKey.FuncTorchBatched, DispatchKey.FuncTorchVmapMode):
        import_module("ember._batched.rules")


class Library:
    """A group of op definitions and kernel registrations, undone together by ``_destroy``.

    >>> with ember.library.Library("demo", "DEF") as lib:
    ...     lib.define("twice(Tensor x) -> Tensor")
    ...     lib.impl("twice", lambda x: x * 2, "CPU")
    ...     ember.ops.demo.twice(ember.ones(2))
    'twice'
    tensor([2., 2.])

    Used with ``with`` (an ember addition: PyTorch's ``Library`` is no context manager), a
    library is destroyed at the end of the block.

    ``kind`` is ``"DEF"`` (define new ops in namespace ``ns``), ``"IMPL"`` (register kernels
    for existing ops) or ``"FRAGMENT"`` (both, in a namespace defined elsewhere).
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in _KINDS:
            raise ValueError(f"Library kind must be one of {_KINDS}, got {kind!r}")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined: list[OpOverload] = []
        self._impls: list[tuple[OpOverload, DispatchKey, dispatcher.Kernel | None]] = []
        #: (key, the fallback and its specializer before this library's registration)
        self._fallbacks: list[tuple[DispatchKey, dispatcher.Kernel | None, Any]] = []

    def define(self, schema: str, alias_analysis: str = "", *, tags: Any = ()) -> str:
        """Declare an op by its schema string; returns its name, without the namespace and
        the overload (as PyTorch's)."""
        if self.kind == "IMPL":
            raise RuntimeError(f"Library('{self.ns}', 'IMPL') cannot define ops; use 'DEF'")
        if isinstance(tags, str):
            tags = (tags,)
        op = registry.define_op(schema, self.ns, tuple(str(t) for t in tags))
        self._defined.append(op)
        return op.overloadpacket.__name__

    def impl(
        self,
        op_name: str | OpOverload,
        fn: Callable[..., Any],
        dispatch_key: str | DispatchKey = "",
        *,
        with_keyset: bool = False,
    ) -> None:
        """Register ``fn`` as ``op_name``'s kernel for ``dispatch_key``."""
        op = get_op(op_name, self.ns)
        key = dispatch_key_of(dispatch_key or self.dispatch_key)
        _own_rules_first(key)
        self._impls.append((op, key, op.registered(key)))
        if fn is fallthrough_kernel:
            dispatcher.set_kernel(op, key, dispatcher.fallthrough_entry(key)[0], KIND_BOXED)
        else:
            dispatcher.set_kernel(op, key, fn, KIND_KEYSET if with_keyset else KIND_PLAIN)

    def fallback(
        self,
        fn: Callable[..., Any],
        dispatch_key: str | DispatchKey = "",
        *,
        with_keyset: bool = True,
    ) -> None:
        """Register a boxed fallback ``fn(op, keyset, args, kwargs)`` for every op on a key."""
        key = dispatch_key_of(dispatch_key or self.dispatch_key)
        _own_rules_first(key)
        old = (key, dispatcher.fallbacks.get(key), dispatcher.specializers.get(key))
        self._fallbacks.append(old)
        if fn is fallthrough_kernel:
            dispatcher.set_fallthrough(key)
        else:
            dispatcher.set_fallback(key, fn, KIND_BOXED)

    def _destroy(self) -> None:
        """Undo every definition and registration this library made, newest first."""
        for op, key, old in reversed(self._impls):
            dispatcher.set_kernel(op, key, old[0] if old else None, old[1] if old else 0)
        for key, old_fb, old_special in reversed(self._fallbacks):
            fn, kind = old_fb if old_fb is not None else (None, KIND_BOXED)
            dispatcher.set_fallback(key, fn, kind, specialize=old_special)
        for op in reversed(self._defined):
            registry.undefine_op(op)
        self._impls.clear()
        self._fallbacks.clear()
        self._defined.clear()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._destroy()


dispatch_key_of = dispatch_key


def impl(
    qualname: str | OpOverload | Library,
    types: str | DispatchKey | Sequence[str | DispatchKey] = "",
    func: Callable[..., Any] | None = None,
    *,
    lib: Library | None = None,
) -> Any:
    """Register ``func`` as the op's kernel for each device type or dispatch key in ``types``;
    a decorator without ``func``. With ``lib``, the registrations end with it (its
    ``_destroy``); without, they are for good.

    >>> lib = ember.library.Library("demo", "DEF")
    >>> lib.define("twice(Tensor x) -> Tensor")
    'twice'
    >>> @ember.library.impl("demo::twice", "Meta", lib=lib)
    ... def twice_meta(x): return ember.empty_like(x)
    >>> ember.ops.demo.twice(ember.ones(2, device="meta"))
    tensor(..., device='meta', size=(2,))
    >>> lib._destroy()

    PyTorch's legacy form is accepted too: ``@impl(lib, "op", "CPU")`` registers through
    ``lib.impl`` (an empty key is the library's own).
    """
    if isinstance(qualname, Library):  # impl(lib, name, dispatch_key="")
        legacy, name, key = qualname, types, func if func is not None else ""

        def register_in(f: Callable[..., Any]) -> Callable[..., Any]:
            legacy.impl(name, f, key)  # type: ignore[arg-type]
            return f

        return register_in
    target = get_op(qualname)
    keys = [types] if isinstance(types, (str, DispatchKey)) else list(types)

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        for k in keys:
            if lib is not None:
                lib.impl(target, f, k)
            else:
                dispatcher.set_kernel(target, dispatch_key(k), f, KIND_PLAIN)
        return f

    if func is None:
        return register
    register(func)  # PyTorch's impl returns None when given the kernel
    return None


def define(
    qualname: str | Library,
    schema: str,
    *,
    lib: Library | None = None,
    tags: Any = (),
    alias_analysis: str = "",
) -> Any:
    """Declare the op ``qualname`` (``"ns::name"`` or ``"ns::name.overload"``) with
    ``schema``, its arguments and returns (``"(Tensor x) -> Tensor"``); with ``lib``, the op
    is removed with it.

    >>> with ember.library.Library("demo", "FRAGMENT") as lib:
    ...     ember.library.define("demo::thrice", "(Tensor x) -> Tensor", lib=lib)
    ...     ember.library.impl("demo::thrice", "cpu", lambda x: x * 3, lib=lib)
    ...     ember.ops.demo.thrice(ember.ones(2))
    tensor([3., 3.])

    PyTorch's legacy form is accepted too: ``@define(lib, "op(Tensor x) -> Tensor")``
    declares the op in the library and registers the decorated function as its kernel.
    """
    if isinstance(qualname, Library):  # define(lib, schema, alias_analysis="")
        legacy = qualname

        def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
            name = legacy.define(schema, alias_analysis)
            legacy.impl(name, f)
            return f

        return wrap
    if not isinstance(qualname, str):
        raise ValueError(
            f"define(qualname, schema): expected qualname to be instance of str, got "
            f"{type(qualname)}"
        )
    namespace, sep, name = qualname.partition("::")
    if not sep or not namespace or not name:
        raise ValueError(
            f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. The '
            "qualname passed to the ember.library APIs must consist of a namespace and a name, "
            "e.g. aten::sin"
        )
    target = lib if lib is not None else Library(namespace, "FRAGMENT")
    if target.ns != namespace:
        raise ValueError(
            f"define: the library's namespace is {target.ns!r}, the op's {namespace!r}"
        )
    target.define(name + schema, alias_analysis, tags=tags)
    return None
