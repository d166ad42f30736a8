"""Schema parsing and printing, checked against PyTorch's own parser where installed."""

from __future__ import annotations

import pytest

from ember.ops.registry import all_overloads
from ember.ops.schema import parse_schema

from .conftest import requires_torch, torch

CASES = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"
    " -> Tensor",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1) -> Tensor",
    "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    '_foo(Tensor[] x, float eps=1e-05, str s="mean") -> ()',
]


@pytest.mark.parametrize("text", CASES)
def test_round_trip(text: str) -> None:
    schema = parse_schema(text)
    assert str(schema) == "aten::" + text
    assert parse_schema(str(schema)) == schema


def test_facts_derived_from_schema() -> None:
    add_ = parse_schema(CASES[1])
    assert add_.is_inplace and add_.is_mutable and not add_.is_out
    out = parse_schema(CASES[2])
    assert out.is_out and not out.is_inplace and out.mutated_indices == (3,)
    view = parse_schema(CASES[9])
    assert view.view_of == 0 and not view.is_mutable
    conv = parse_schema(CASES[7])
    assert conv.arguments[3].default_value == (1, 1)  # int[2] stride=1 means [1, 1]
    s = parse_schema(CASES[5])
    assert [a.name for a in s.kwarg_only] == ["dtype"]
    assert s.arguments[1].type.optional and s.arguments[1].type.list_size == 1
    assert [r.name for r in parse_schema(CASES[3]).returns] == ["values", "indices"]


@pytest.mark.parametrize(
    "bad",
    [
        "add(Tensor self",  # unbalanced
        "add(Tensr self) -> Tensor",  # unknown type
        "add(Tensor self, Tensor self) -> Tensor",  # duplicate name
        "add Tensor self -> Tensor",
    ],
)
def test_malformed_schemas_raise(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_schema(bad)


@requires_torch
def test_every_aten_schema_matches_pytorch() -> None:
    """Each op ember declares in ``aten`` has PyTorch's schema: same arguments, types,
    defaults, kwarg-only markers and alias annotations (so subclass code sees the same op)."""
    mismatches = []
    for op in all_overloads():
        if op.namespace != "aten":
            continue
        packet = getattr(torch.ops.aten, op.overloadpacket.__name__, None)
        theirs = getattr(packet, op._overloadname, None) if packet is not None else None
        if theirs is None:
            mismatches.append(f"{op}: not an overload in PyTorch")
            continue
        mine = parse_schema(str(theirs._schema).replace("aten::", ""))
        if _normalise(op._schema) != _normalise(mine):
            mismatches.append(f"{op}:\n  ember: {op._schema}\n  torch: {theirs._schema}")
    assert not mismatches, "\n".join(mismatches)


#: enum defaults PyTorch prints as their integer codes (ScalarType::Long, MemoryFormat::Contiguous)
_ENUM_CODES = {"long": 4, "contiguous_format": 0}


def _normalise(schema: object) -> tuple[object, ...]:
    s = schema  # compare what callers and subclasses rely on, not spelling (SymInt vs int)

    def arg(a: object) -> tuple[object, ...]:
        t = a.type  # type: ignore[attr-defined]
        base = "int" if t.base == "SymInt" else t.base
        return (a.name, base, t.list_size is not None, t.optional, a.kwarg_only,  # type: ignore[attr-defined]
                _ENUM_CODES.get(a.default_value, a.default_value)  # type: ignore[attr-defined]
                if isinstance(a.default_value, str) else a.default_value,  # type: ignore[attr-defined]
                a.alias_info)  # type: ignore[attr-defined]  # fmt: skip

    return (
        s.name,  # type: ignore[attr-defined]
        s.overload_name,  # type: ignore[attr-defined]
        tuple(arg(a) for a in s.arguments),  # type: ignore[attr-defined]
        tuple((r.type.base, r.alias_info) for r in s.returns),  # type: ignore[attr-defined]
    )
