"""``ember.export.save`` / ``load``: an ``ExportedProgram`` in a file, as
``torch.export.save``/``load``.

# NOTE [export files]
The file is a zip archive (PyTorch's ``.pt2`` files are too, with another layout: the two
do not read each other's). ``program.json`` holds the graph, its subgraphs (a ``cond``'s
branches), the signature and the input and output structure, as data: each node's op,
name, target (an op by its qualified name, ``ember.ops.aten.add.Tensor``; only ops,
``operator.getitem`` and ``ember._C._set_grad_enabled`` are allowed, so loading runs no
code the file names) and arguments (nodes by name, numbers, strings, lists, dtypes,
devices, memory formats). ``tensors.pt`` holds the state dict, the constants, the graph's
tensor attributes and the example inputs, written by ``ember.save`` and read back with
``weights_only=True``. ``extra_files`` go under ``extra/``. Node metadata (``meta``) is
not saved: a loaded program runs, prints and decomposes (``run_decompositions`` traces it
again) as the saved one does.
"""

from __future__ import annotations

import io
import json
import operator
import os
import zipfile
from typing import IO, Any

import ember
from ember import _C
from ember._tensor import Tensor
from ember.export.exported_program import ExportedProgram
from ember.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node, qualified_name
from ember.serialization import load as _load_tensors
from ember.serialization import save as _save_tensors
from ember.utils._pytree import LeafSpec, TreeSpec

__all__ = ["load", "save"]

_FORMAT = "ember.export/1"
#: the targets a file may name, besides ``ember.ops.*``
_OTHER_TARGETS = {
    "operator.getitem": operator.getitem,
    "ember._C._set_grad_enabled": _C._set_grad_enabled,
}


def _named_constants() -> dict[int, str]:
    """id -> name of ember's dtypes, memory formats and layouts (``ember.float32``)."""
    kinds = (type(ember.float32), type(ember.channels_last), type(ember.strided))
    return {id(v): k for k, v in vars(ember).items() if isinstance(v, kinds)}


class _Writer:
    def __init__(self) -> None:
        self.tensors: dict[str, Tensor] = {}
        self.names = _named_constants()

    def arg(self, a: Any, where: str) -> Any:
        if isinstance(a, Node):
            return {"node": a.name}
        if a is None or isinstance(a, (bool, int, str)):
            return a
        if isinstance(a, float):
            return {"float": repr(a)}  # inf and nan too
        if isinstance(a, (list, tuple)):
            return {type(a).__name__: [self.arg(v, where) for v in a]}
        if isinstance(a, dict):
            return {"dict": [[k, self.arg(v, where)] for k, v in a.items()]}
        if isinstance(a, ember.device):
            return {"device": str(a)}
        name = self.names.get(id(a))
        if name is not None:
            return {"ember": name}
        raise RuntimeError(
            f"ember.export.save: {where} takes a {type(a).__name__} ({a!r}), which a saved "
            "program cannot hold (numbers, strings, lists, dtypes, devices and memory "
            "formats can be saved)"
        )

    def graph(self, gm: GraphModule, prefix: str) -> dict[str, Any]:
        nodes, subgraphs = [], {}
        for n in gm.graph.nodes:
            entry: dict[str, Any] = {"op": n.op, "name": n.name}
            if n.op == "call_function":
                entry["target"] = self.target(n)
            elif n.op == "get_attr":
                entry["target"] = str(n.target)
                value = gm
                for part in str(n.target).split("."):
                    value = getattr(value, part)
                if isinstance(value, GraphModule):
                    subgraphs[str(n.target)] = self.graph(value, f"{prefix}{n.target}.")
                elif isinstance(value, Tensor):
                    self.tensors[f"attr/{prefix}{n.target}"] = value
                else:
                    raise RuntimeError(
                        f"ember.export.save: the graph attribute {n.target!r} is a "
                        f"{type(value).__name__}; only tensors and subgraphs can be saved"
                    )
            elif n.op not in ("placeholder", "output"):
                raise RuntimeError(f"ember.export.save: cannot save a {n.op} node ({n.name})")
            entry["args"] = self.arg(tuple(n.args), f"node {n.name}")
            entry["kwargs"] = self.arg(dict(n.kwargs), f"node {n.name}")
            nodes.append(entry)
        return {"nodes": nodes, "subgraphs": subgraphs}

    def target(self, n: Node) -> str:
        name = qualified_name(n.target)
        if name.startswith("ember.ops.") or name in _OTHER_TARGETS:
            return name
        raise RuntimeError(
            f"ember.export.save: node {n.name} calls {name}, which a saved program cannot "
            "name (only ops, operator.getitem and ember._C._set_grad_enabled)"
        )


def _spec(spec: TreeSpec) -> Any:
    if spec.is_leaf():
        return None
    kinds = {tuple: "tuple", list: "list", dict: "dict"}
    kind = kinds.get(spec.type)
    if kind is None:
        raise RuntimeError(
            f"ember.export.save: the program's inputs or outputs hold a {spec.type}; only "
            "tuples, lists, dicts and tensors can be saved"
        )
    return {
        "type": kind,
        "context": spec.context,
        "children": [_spec(c) for c in spec.children_specs],
    }


def _unspec(data: Any) -> TreeSpec:
    if data is None:
        return LeafSpec()
    kind = {"tuple": tuple, "list": list, "dict": dict}[data["type"]]
    return TreeSpec(kind, data["context"], [_unspec(c) for c in data["children"]])


def save(
    ep: ExportedProgram,
    f: str | os.PathLike[str] | IO[bytes],
    *,
    extra_files: dict[str, Any] | None = None,
    opset_version: dict[str, int] | None = None,
    pickle_protocol: int = 2,
) -> None:
    """Write ``ep`` to ``f`` (a path or a binary file) (NOTE [export files]).

    >>> import io
    >>> ep = ember.export.export(ember.nn.Linear(3, 2), (ember.ones(1, 3),))
    >>> buf = io.BytesIO()
    >>> ember.export.save(ep, buf)
    >>> back = ember.export.load(io.BytesIO(buf.getvalue()))
    >>> ember.equal(back.module()(ember.ones(1, 3)), ep.module()(ember.ones(1, 3)))
    True
    """
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"ember.export.save: expected an ExportedProgram, got {type(ep).__name__}")
    w = _Writer()
    sig = ep.graph_signature
    (args, kwargs) = ep.example_inputs
    example, example_spec = ember.utils._pytree.tree_flatten((args, kwargs))
    program = {
        "format": _FORMAT,
        "graph": w.graph(ep.graph_module, ""),
        "inputs": [[s.kind.name, s.arg.name, s.target, s.persistent] for s in sig.input_specs],
        "outputs": [[s.kind.name, s.arg.name, s.target] for s in sig.output_specs],
        "in_spec": _spec(ep._in_spec),
        "out_spec": _spec(ep._out_spec),
        "example_spec": _spec(example_spec),
        "example": [
            {"tensor": i} if isinstance(v, Tensor) else w.arg(v, "the example inputs")
            for i, v in enumerate(example)
        ],
    }
    for i, v in enumerate(example):
        if isinstance(v, Tensor):
            w.tensors[f"example/{i}"] = v
    for k, v in ep.state_dict.items():
        w.tensors[f"state/{k}"] = v
    for k, v in ep.constants.items():
        if not isinstance(v, Tensor):
            raise RuntimeError(f"ember.export.save: the constant {k!r} is not a tensor")
        w.tensors[f"constant/{k}"] = v
    tensors = io.BytesIO()
    _save_tensors({k: v.detach() for k, v in w.tensors.items()}, tensors)
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("program.json", json.dumps(program))
        z.writestr("tensors.pt", tensors.getvalue())
        for name, content in (extra_files or {}).items():
            z.writestr(f"extra/{name}", content)


class _Reader:
    def __init__(self, tensors: dict[str, Tensor]) -> None:
        self.tensors = tensors

    def arg(self, a: Any, env: dict[str, Node]) -> Any:
        if not isinstance(a, dict):
            return a
        ((kind, v),) = a.items()
        if kind == "node":
            return env[v]
        if kind == "float":
            return float(v)
        if kind in ("list", "tuple"):
            out = [self.arg(x, env) for x in v]
            return out if kind == "list" else tuple(out)
        if kind == "dict":
            return {k: self.arg(x, env) for k, x in v}
        if kind == "device":
            return ember.device(v)
        if kind == "ember":
            return getattr(ember, v)
        raise RuntimeError(f"ember.export.load: unknown argument kind {kind!r}")

    def graph(self, data: dict[str, Any], prefix: str) -> GraphModule:
        g = Graph()
        env: dict[str, Node] = {}
        root: dict[str, Any] = {}
        for e in data["nodes"]:
            op, name = e["op"], e["name"]
            if op == "placeholder":
                env[name] = g.placeholder(name)
            elif op == "get_attr":
                target = e["target"]
                sub = data["subgraphs"].get(target)
                root[target] = (
                    self.graph(sub, f"{prefix}{target}.")
                    if sub is not None
                    else self.tensors[f"attr/{prefix}{target}"]
                )
                env[name] = g.get_attr(target)
            elif op == "call_function":
                args = self.arg(e["args"], env)
                kwargs = self.arg(e["kwargs"], env)
                env[name] = g.call_function(_target(e["target"]), args, kwargs, name=name)
            elif op == "output":
                g.output(self.arg(e["args"], env)[0])
        return GraphModule(root, g)


def _target(name: str) -> Any:
    """The function a saved node names: an op (``ember.ops.aten.add.Tensor``) or one of
    ``_OTHER_TARGETS``; nothing else is looked up."""
    if name in _OTHER_TARGETS:
        return _OTHER_TARGETS[name]
    if not name.startswith("ember.ops."):
        raise RuntimeError(f"ember.export.load: the file names {name!r}, which is not an op")
    value: Any = ember.ops
    for part in name[len("ember.ops.") :].split("."):
        value = getattr(value, part)
    return value


def load(
    f: str | os.PathLike[str] | IO[bytes],
    *,
    extra_files: dict[str, Any] | None = None,
    expected_opset_version: dict[str, int] | None = None,
) -> ExportedProgram:
    """Read a program ``save`` wrote (NOTE [export files]); the names in ``extra_files``
    get the contents of the extra files saved under them."""
    with zipfile.ZipFile(f) as z:
        program = json.loads(z.read("program.json"))
        if program.get("format") != _FORMAT:
            raise RuntimeError(
                f"ember.export.load: not a file ember.export.save wrote (format "
                f"{program.get('format')!r}; PyTorch's .pt2 files are not read)"
            )
        tensors = _load_tensors(io.BytesIO(z.read("tensors.pt")), weights_only=True)
        for name in extra_files or {}:
            extra_files[name] = z.read(f"extra/{name}").decode()  # type: ignore[index]
    r = _Reader(tensors)
    gm = r.graph(program["graph"], "")
    sig = ExportGraphSignature(
        [InputSpec(InputKind[k], TensorArgument(a), t, p) for k, a, t, p in program["inputs"]],
        [OutputSpec(OutputKind[k], TensorArgument(a), t) for k, a, t in program["outputs"]],
    )
    example = [
        tensors[f"example/{v['tensor']}"] if isinstance(v, dict) and "tensor" in v
        else r.arg(v, {})
        for v in program["example"]
    ]  # fmt: skip
    args, kwargs = ember.utils._pytree.tree_unflatten(example, _unspec(program["example_spec"]))
    state = {k[len("state/") :]: v for k, v in tensors.items() if k.startswith("state/")}
    constants = {k[len("constant/") :]: v for k, v in tensors.items() if k.startswith("constant/")}
    return ExportedProgram(
        gm, sig, state, (tuple(args), dict(kwargs)),
        _unspec(program["in_spec"]), _unspec(program["out_spec"]), constants,
    )  # fmt: skip
