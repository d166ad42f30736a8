"""PyTorch-style function schemas: parse, print, and the facts the dispatcher derives.

``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` parses into a
:class:`FunctionSchema` whose arguments carry type, default, kwarg-only flag and alias
annotation (``Tensor(a!)`` = writes alias set ``a``; ``Tensor(a)`` = returns a view of it).
Printing gives the string back (with the ``aten::`` namespace), as ``str(op._schema)`` does
in PyTorch.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace
from typing import Any

__all__ = ["AliasInfo", "Argument", "FunctionSchema", "SchemaType", "parse_schema"]


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()

#: base types a schema may name; ``SymInt`` reads as ``int`` here (no symbolic shapes)
BASE_TYPES = frozenset(
    "Tensor Scalar int SymInt float bool str ScalarType Layout Device MemoryFormat Generator "
    "Dimname Storage Any complex".split()
)


@dataclass(frozen=True)
class AliasInfo:
    """``(a!)`` → before_set {"a"}, is_write; ``(a -> *)`` → after_set {"*"}."""

    before_set: frozenset[str]
    after_set: frozenset[str]
    is_write: bool

    def __str__(self) -> str:
        s = "|".join(sorted(self.before_set))
        if self.after_set != self.before_set:
            s += " -> " + "|".join(sorted(self.after_set))
        return f"({s}{'!' if self.is_write else ''})"


@dataclass(frozen=True)
class SchemaType:
    """A schema type: base name, list size (None: not a list, -1: any length), optional."""

    base: str
    list_size: int | None = None
    optional: bool = False
    elem_optional: bool = False  # Tensor?[]: a list whose items may be None

    @property
    def is_list(self) -> bool:
        return self.list_size is not None

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and self.list_size is None

    @property
    def is_tensor_list(self) -> bool:
        return self.base == "Tensor" and self.list_size is not None

    def render(self, alias: AliasInfo | None = None) -> str:
        s = self.base + (str(alias) if alias else "")
        if self.elem_optional:
            s += "?"
        if self.list_size is not None:
            s += "[]" if self.list_size < 0 else f"[{self.list_size}]"
        return s + ("?" if self.optional else "")

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class Argument:
    name: str
    type: SchemaType
    default_value: Any = NO_DEFAULT
    kwarg_only: bool = False
    alias_info: AliasInfo | None = None
    default_text: str = ""

    def has_default_value(self) -> bool:
        return self.default_value is not NO_DEFAULT

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.is_write

    def __str__(self) -> str:
        s = f"{self.type.render(self.alias_info)} {self.name}" if self.name else ""
        if not self.name:
            s = self.type.render(self.alias_info)
        if self.has_default_value():
            s += f"={self.default_text}"
        return s


@dataclass(frozen=True)
class FunctionSchema:
    name: str  # "aten::add"
    overload_name: str  # "Tensor" ("" for the default overload)
    arguments: tuple[Argument, ...]
    returns: tuple[Argument, ...]
    _text: str = field(default="", compare=False, repr=False)

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments)

    @cached_property
    def positional(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @cached_property
    def kwarg_only(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.kwarg_only)

    @cached_property
    def mutated_indices(self) -> tuple[int, ...]:
        return tuple(i for i, a in enumerate(self.arguments) if a.is_write)

    @cached_property
    def is_out(self) -> bool:
        """An ``out=`` overload: writes kwarg-only tensors and returns them."""
        return any(a.is_write and a.kwarg_only for a in self.arguments)

    @cached_property
    def is_inplace(self) -> bool:
        """An in-place overload: writes ``self`` and returns it (``add_.Tensor``)."""
        return bool(self.arguments) and self.arguments[0].is_write and not self.is_out

    @cached_property
    def view_of(self) -> int | None:
        """Index of the argument whose storage a (non-mutating) return aliases, if any."""
        if not self.returns or self.returns[0].alias_info is None or self.is_mutable:
            return None
        sets = self.returns[0].alias_info.before_set
        for i, a in enumerate(self.arguments):
            if a.alias_info is not None and a.alias_info.before_set & sets:
                return i
        return None

    def __str__(self) -> str:
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        parts: list[str] = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        if len(self.returns) == 1:  # named or not, as c10 prints it: -> Tensor[] self_out
            ret = str(self.returns[0])
        else:
            ret = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{name}({', '.join(parts)}) -> {ret}"

    def normalize(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        normalize_to_only_use_kwargs: bool = False,
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The call's arguments with every default filled in: parameters without a default
        positional, the rest keywords (all keywords with ``normalize_to_only_use_kwargs``,
        ``self`` spelled ``input``), as ``torch.fx.operator_schemas`` arranges them.

        >>> from ember.ops.schema import parse_schema
        >>> s = parse_schema("aten::sum.dim_IntList(Tensor self, int[1]? dim, "
        ...                  "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
        >>> s.normalize(("x", [0]), {})
        (('x', [0]), {'keepdim': False, 'dtype': None})
        """
        given = dict(kwargs)
        if "input" in given and all(a.name != "input" for a in self.arguments):
            given["self"] = given.pop("input")
        out_args: list[Any] = []
        out_kwargs: dict[str, Any] = {}
        for i, p in enumerate(self.positional):
            if i < len(args):
                value = args[i]
            elif p.name in given:
                value = given.pop(p.name)
            elif p.has_default_value():
                value = _as_python(p.default_value)
            else:
                raise TypeError(f"{self.name}: missing required argument '{p.name}'")
            if normalize_to_only_use_kwargs or p.has_default_value():
                out_kwargs["input" if p.name == "self" else p.name] = value
            else:
                out_args.append(value)
        for p in self.kwarg_only:
            if p.name in given:
                out_kwargs[p.name] = given.pop(p.name)
            elif p.has_default_value():
                out_kwargs[p.name] = _as_python(p.default_value)
            elif p.type.optional:
                out_kwargs[p.name] = None
        if given:
            raise TypeError(f"{self.name}: unexpected keyword argument(s) {sorted(given)}")
        return tuple(out_args), out_kwargs

    def named(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> SimpleNamespace:
        """The call's arguments by their schema names, defaults filled in, for a kernel
        written once for several overloads or a geometry function (NOTE [geometry
        functions] in ``ember/backends/meta/_derive.py``), so it does not repeat the op's
        signature.

        >>> from ember.ops.schema import parse_schema
        >>> s = parse_schema("aten::sum.dim_IntList(Tensor self, int[1]? dim, "
        ...                  "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
        >>> s.named(("x", [0]), {"keepdim": True})
        namespace(self='x', dim=[0], keepdim=True, dtype=None)
        """
        _, named = self.normalize(args, kwargs, normalize_to_only_use_kwargs=True)
        if "input" in named and all(a.name != "input" for a in self.arguments):
            # normalize spells self as input
            named = {("self" if k == "input" else k): v for k, v in named.items()}
        return SimpleNamespace(**named)


def _as_python(default: Any) -> Any:
    """A schema default as a caller writes it (int-list defaults are kept as tuples)."""
    return list(default) if type(default) is tuple else default


# --------------------------------------------------------------------------- parsing

_TYPE_RE = re.compile(
    r"^(?P<base>[A-Za-z_]\w*)(?P<alias>\([^)]*\))?(?P<elemopt>\?)?"
    r"(?:\[(?P<size>\d*)\])?(?P<opt>\?)?$"
)


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets and parentheses (a trailing empty piece dropped)."""
    out: list[str] = []
    cur: str | None = None
    depth = 0
    for piece in text.split(sep):  # pieces joined back while a bracket is open
        cur = piece if cur is None else f"{cur}{sep}{piece}"
        depth += piece.count("(") + piece.count("[") - piece.count(")") - piece.count("]")
        if depth == 0:
            out.append(cur.strip())
            cur = None
    if cur is not None:
        out.append(cur.strip())
    if out and not out[-1]:
        out.pop()
    return out


def _parse_alias(text: str) -> AliasInfo:
    body = text[1:-1].strip()
    write = body.endswith("!")
    body = body.rstrip("!").strip()
    before, _, after = body.partition("->")
    b = frozenset(s.strip() for s in before.split("|") if s.strip())
    a = frozenset(s.strip() for s in after.split("|") if s.strip()) if after else b
    return AliasInfo(b, a, write)


@functools.cache  # a few dozen distinct types across the whole catalogue
def _parse_type(text: str) -> tuple[SchemaType, AliasInfo | None]:
    m = _TYPE_RE.match(text.replace(" ", ""))
    if m is None or m["base"] not in BASE_TYPES:
        raise ValueError(f"unknown schema type {text!r}")
    size = m["size"]
    list_size = None if size is None else (int(size) if size else -1)
    elem_opt = bool(m["elemopt"]) and list_size is not None
    optional = bool(m["opt"]) or (bool(m["elemopt"]) and list_size is None)
    alias = _parse_alias(m["alias"]) if m["alias"] else None
    return SchemaType(m["base"], list_size, optional, elem_opt), alias


_NAMED_DEFAULTS: dict[str, Any] = {
    "True": True,
    "False": False,
    "None": None,
    "Mean": 1,
    "Sum": 2,
    "Nothing": 0,
}
_NAMED_DEFAULTS |= {"contiguous_format": "contiguous_format", "long": "long", "inf": float("inf")}


def _parse_default(text: str, typ: SchemaType) -> Any:
    text = text.strip()
    value: Any
    if text in _NAMED_DEFAULTS:
        value = _NAMED_DEFAULTS[text]
    elif text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        value = [_parse_default(x, SchemaType(typ.base)) for x in inner.split(",")] if inner else []
    elif text[:1] in "\"'":
        value = text[1:-1]
    else:
        try:
            value = int(text)
        except ValueError:
            value = float(text)
    if typ.list_size is not None and typ.list_size > 0 and isinstance(value, int):
        value = [value] * typ.list_size  # int[2] stride=1 means [1, 1]
    if isinstance(value, list):
        value = tuple(value)  # defaults are shared, so keep them immutable
    return value


def _parse_argument(text: str, kwarg_only: bool, is_return: bool) -> Argument:
    default_text = ""
    if "=" in text and not is_return:
        text, default_text = (s.strip() for s in text.split("=", 1))
    parts = text.rsplit(" ", 1)
    if is_return and (len(parts) == 1 or text.endswith((")", "]", "?"))):
        type_text, name = text, ""
    else:
        if len(parts) != 2:
            raise ValueError(f"schema argument {text!r} needs a type and a name")
        type_text, name = parts
    typ, alias = _parse_type(type_text)
    default = _parse_default(default_text, typ) if default_text else NO_DEFAULT
    return Argument(name, typ, default, kwarg_only, alias, default_text)


def parse_schema(text: str, namespace: str = "aten") -> FunctionSchema:
    """Parse ``"name.overload(args) -> returns"``.

    >>> from ember.ops.schema import parse_schema
    >>> str(parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"))
    'aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor'
    """
    m = re.match(r"^\s*([\w:]+)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*$", text, re.S)
    if m is None:
        raise ValueError(f"malformed schema {text!r}: expected 'name.overload(args) -> returns'")
    name, overload, args_text, ret_text = m.groups()
    if "::" not in name:
        name = f"{namespace}::{name}"
    arguments: list[Argument] = []
    kwarg_only = False
    seen: set[str] = set()
    for piece in _split_top(args_text):
        if piece == "*":
            kwarg_only = True
            continue
        arg = _parse_argument(piece, kwarg_only, is_return=False)
        if arg.name in seen:
            raise ValueError(f"schema {text!r}: argument {arg.name!r} appears twice")
        seen.add(arg.name)
        arguments.append(arg)
    ret_text = ret_text.strip()
    if ret_text.startswith("(") and ret_text.endswith(")"):
        rets = tuple(_parse_argument(p, False, True) for p in _split_top(ret_text[1:-1]))
    else:
        rets = (_parse_argument(ret_text, False, True),)
    return FunctionSchema(name, overload or "", tuple(arguments), rets, text)
