"""``ember.library.custom_op``: a Python function as an op of the registry, with its schema
inferred from its type hints, as ``torch.library.custom_op``; ``register_fake`` (its Meta
rule), ``register_autograd`` (its derivative) and ``opcheck``.

>>> from ember.library import custom_op
>>> @custom_op("demo_doc::scale", mutates_args=())
... def scale(x: ember.Tensor, k: float = 2.0) -> ember.Tensor:
...     return x * k
>>> scale(ember.ones(2))
tensor([2., 2.])
>>> str(scale._opoverload._schema)
'demo_doc::scale(Tensor x, float k=2.) -> Tensor'

A custom op stays defined for the rest of the process, as in PyTorch; ember's registry can
take it back (here, so the example can run again):

>>> from ember.ops.registry import undefine_op
>>> undefine_op(scale._opoverload)
>>> hasattr(ember.ops.demo_doc, "scale")
False

# NOTE [custom ops]
A custom op is an ordinary registry op: ``define`` with the inferred schema, the function as
its CompositeExplicitAutograd kernel (every backend, below autograd, so its inner ops are not
recorded), the fake function as its Meta kernel, and ``register_autograd`` as its Autograd
kernel (an ``autograd.Function`` around the op below the key). So the override protocols,
the fake mode and the tracers see it as they see ``aten`` ops.
"""

from __future__ import annotations

import inspect
import itertools
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ember import library
from ember._subclasses.fake_tensor import FakeTensorMode
from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_KEYSET, KIND_PLAIN
from ember.dispatch.keys import DispatchKey, below
from ember.dtypes import dtype as _dtype
from ember.ops import registry

__all__ = ["CustomOpDef", "custom_op", "opcheck", "register_autograd", "register_fake"]

_BELOW_AUTOGRAD = below(DispatchKey.Autograd)

_SCALARS: dict[Any, str] = {
    int: "SymInt", float: "float", bool: "bool", str: "str", _dtype: "ScalarType",
}  # fmt: skip


def _type_string(hint: Any, name: str, qualname: str) -> str:
    """The schema type of a parameter annotated ``hint``."""
    if hint is Tensor:
        return "Tensor"
    if hint in _SCALARS:
        return _SCALARS[hint]
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _type_string(inner[0], name, qualname) + "?"
    if origin in (list, Sequence, tuple, typing.Sequence) and args:
        return _type_string(args[0], name, qualname) + "[]"
    raise ValueError(
        f"custom_op({qualname!r}): cannot infer a schema type for parameter {name!r} "
        f"annotated {hint!r}; use Tensor, int, float, bool, str, a dtype, a list or an "
        "Optional of those"
    )


def _default_string(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        text = repr(value)
        return text[:-1] if text.endswith(".0") else text
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_default_string(v) for v in value) + "]"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def infer_schema(fn: Callable[..., Any], qualname: str, mutates_args: Iterable[str]) -> str:
    """The schema string of ``fn`` from its type hints (without the namespace)."""
    mutated = set(mutates_args)
    hints = typing.get_type_hints(fn)
    sig = inspect.signature(fn)
    parts: list[str] = []
    letters = (f"a{i}" for i in itertools.count(1))  # PyTorch's alias names: a1, a2, ...
    star = False
    for p in sig.parameters.values():
        if p.name not in hints:
            raise ValueError(f"custom_op({qualname!r}): parameter {p.name!r} needs a type hint")
        t = _type_string(hints[p.name], p.name, qualname)
        if p.name in mutated:
            if not t.startswith("Tensor"):
                raise ValueError(f"custom_op({qualname!r}): {p.name!r} is mutated but no Tensor")
            t = t.replace("Tensor", f"Tensor({next(letters)}!)", 1)
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        text = f"{t} {p.name}"
        if p.default is not inspect.Parameter.empty:
            text += f"={_default_string(p.default)}"
        parts.append(text)
    unknown = mutated - set(sig.parameters)
    if unknown:
        raise ValueError(f"custom_op({qualname!r}): mutates_args names {sorted(unknown)}")
    ret = hints.get("return", type(None))
    if ret is type(None) or ret is None:
        returns = "()"
    elif typing.get_origin(ret) is tuple:
        returns = (
            "(" + ", ".join(_type_string(a, "return", qualname) for a in typing.get_args(ret)) + ")"
        )
    else:
        returns = _type_string(ret, "return", qualname)
    name = qualname.split("::", 1)[1]
    return f"{name}({', '.join(parts)}) -> {returns}"


class CustomOpDef:
    """A custom op: callable like its function, with ``register_fake``,
    ``register_autograd`` and ``register_kernel``."""

    def __init__(self, qualname: str, fn: Callable[..., Any], mutates_args: Iterable[str]):
        if "::" not in qualname:
            raise ValueError(f"custom_op: name {qualname!r} must be 'namespace::name'")
        ns = qualname.split("::", 1)[0]
        self._qualname = qualname
        self._init_fn = fn
        schema = infer_schema(fn, qualname, mutates_args)
        self._opoverload = registry.define_op(schema, ns, ())
        dispatcher.set_kernel(
            self._opoverload, DispatchKey.CompositeExplicitAutograd, fn, KIND_PLAIN
        )
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._opoverload(*args, **kwargs)

    def register_fake(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``fn`` as the op's Meta rule: shapes and dtypes, no data."""
        dispatcher.set_kernel(self._opoverload, DispatchKey.Meta, fn, KIND_PLAIN)
        return fn

    def register_kernel(self, device_types: str | Sequence[str], fn: Any = None) -> Any:
        """Register ``fn`` as the op's kernel for ``device_types`` ("cpu", ...)."""

        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            types = [device_types] if isinstance(device_types, str) else list(device_types)
            for d in types:
                key = {"cpu": DispatchKey.CPU, "meta": DispatchKey.Meta}[d]
                dispatcher.set_kernel(self._opoverload, key, f, KIND_PLAIN)
            return f

        return register if fn is None else register(fn)

    def register_autograd(
        self, backward: Callable[..., Any], *, setup_context: Callable[..., Any] | None = None
    ) -> None:
        """Make the op differentiable: ``setup_context(ctx, inputs, output)`` saves what
        ``backward(ctx, *grads)`` needs; backward returns one gradient per input."""
        op = self._opoverload

        class _Fn(Function):
            @staticmethod
            def forward(ctx: Any, ks: int, *args: Any) -> Any:
                # the function sees its inputs as autograd's would leave them: detached
                plain = tuple(a.detach() if isinstance(a, Tensor) else a for a in args)
                out = op.redispatch(ks & _BELOW_AUTOGRAD, *plain)
                if setup_context is not None:
                    setup_context(ctx, args, out)
                return out

            @staticmethod
            def backward(ctx: Any, *grads: Any) -> Any:
                result = backward(ctx, *grads)
                return (None, *(result if isinstance(result, tuple) else (result,)))

        _Fn.__name__ = op.overloadpacket.__name__.capitalize()

        def autograd_kernel(ks: int, *args: Any, **kwargs: Any) -> Any:
            full = _positional(op, args, kwargs)
            return _Fn.apply(ks, *full)

        dispatcher.set_kernel(op, DispatchKey.Autograd, autograd_kernel, KIND_KEYSET)


def _positional(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Every argument positionally, defaults filled in (custom ops' functions take them so)."""
    out = list(args)
    for p in op._schema.arguments[len(args) :]:
        out.append(kwargs[p.name] if p.name in kwargs else p.default_value)
    return tuple(out)


def custom_op(
    name: str,
    fn: Callable[..., Any] | None = None,
    /,
    *,
    mutates_args: Iterable[str] | str,
    device_types: Any = None,
    schema: str | None = None,
) -> Any:
    """Make ``fn`` an op ``name`` ("ns::op") of the registry; usable as a decorator."""
    if isinstance(mutates_args, str):
        raise ValueError(
            f"custom_op({name!r}): mutates_args must name the mutated parameters "
            "(mutates_args=() when none is)"
        )

    def wrap(f: Callable[..., Any]) -> CustomOpDef:
        return CustomOpDef(name, f, mutates_args)

    return wrap if fn is None else wrap(fn)


def _target(op: Any) -> CustomOpDef | Any:
    if isinstance(op, CustomOpDef):
        return op
    raise TypeError(f"expected a custom op made by ember.library.custom_op, got {op!r}")


def register_fake(op: Any, fn: Callable[..., Any] | None = None) -> Any:
    """``op.register_fake(fn)``, as a function (usable as a decorator)."""
    target = _target(op)
    return target.register_fake if fn is None else target.register_fake(fn)


def register_autograd(
    op: Any, backward: Callable[..., Any], *, setup_context: Callable[..., Any] | None = None
) -> None:
    """``op.register_autograd(backward, setup_context=...)``, as a function."""
    _target(op).register_autograd(backward, setup_context=setup_context)


class OpCheckError(Exception):
    """``opcheck`` found the op's registrations inconsistent with a real run."""


def opcheck(
    op: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    test_utils: Any = None,
    raise_exception: bool = True,
) -> dict[str, str]:
    """Check a custom op against a real run: the schema's mutations, the autograd
    registration, and the fake (Meta) rule's shapes and dtypes."""
    target = op._opoverload if isinstance(op, CustomOpDef) else op
    kwargs = kwargs or {}
    results: dict[str, str] = {}

    def clones(x: Any) -> Any:
        return x.clone() if isinstance(x, Tensor) else x

    def check(name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
            results[name] = "SUCCESS"
        except Exception as exc:  # noqa: BLE001 - collected, raised below if asked
            results[name] = f"FAILED: {exc}"
            if raise_exception:
                raise OpCheckError(f"opcheck({target}): {name} failed: {exc}") from exc

    def schema() -> None:
        before = [clones(a) for a in args]
        after = [clones(a) for a in args]
        target(*after, **kwargs)
        for a, (b, c) in zip(
            target._schema.positional, zip(before, after, strict=False), strict=False
        ):
            if isinstance(b, Tensor) and not a.is_write and not bool((b == c).all()):
                raise OpCheckError(f"argument {a.name!r} was mutated but the schema says not")

    def autograd() -> None:
        needs = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        if needs and not target.has_kernel_for_dispatch_key(DispatchKey.Autograd):
            raise OpCheckError("inputs require grad but the op has no register_autograd")

    def fake() -> None:
        real = target(*[clones(a) for a in args], **kwargs)
        mode = FakeTensorMode()
        with mode:
            out = target(
                *[mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args], **kwargs
            )
        reals = real if isinstance(real, (list, tuple)) else (real,)
        fakes = out if isinstance(out, (list, tuple)) else (out,)
        for r, f in zip(reals, fakes, strict=True):
            if isinstance(r, Tensor):
                if tuple(r.shape) != tuple(f.shape) or r.dtype != f.dtype:
                    raise OpCheckError(
                        f"fake rule gives {tuple(f.shape)} {f.dtype}, real {tuple(r.shape)} "
                        f"{r.dtype}"
                    )

    check("test_schema", schema)
    check("test_autograd_registration", autograd)
    check("test_faketensor", fake)
    return results


library.custom_op = custom_op  # type: ignore[attr-defined]
library.register_fake = register_fake  # type: ignore[attr-defined]
library.register_autograd = register_autograd  # type: ignore[attr-defined]
library.opcheck = opcheck  # type: ignore[attr-defined]
library.CustomOpDef = CustomOpDef  # type: ignore[attr-defined]
