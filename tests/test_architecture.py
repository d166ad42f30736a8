"""The contracts of ARCHITECTURE.md section 4 that the source itself can show, read with
``ast`` (no import of ember needed):

- nothing outside ``ember/dispatch/`` reads or resets an op's kernel table (``_table``) or
  its registered kernels (``_kernels``), in code or in the templates of generated code
  (``OpOverload``'s own methods, in ``ops/registry.py``, are the dispatcher's per-op state
  and may);
- no import cycle between folders (module-level imports; the top-level ``ember/__init__.py``
  is the public facade over everything, so its own imports are left out);
- the core (``ops/``, ``dispatch/``, ``backends/`` and the ``torch.backends`` switches it
  registers, the autograd engine) never imports the top-level ``ember`` package;
- generated code has one ``exec`` site, ``ember/dispatch/codegen.py`` (which registers the
  source with ``linecache``, so tracebacks show it);
- every function-local import carries a comment naming the load-order cycle or the reason
  for the lazy load;
- a tensor's key bits (``_ekeys``) are read and set through ``ember/dispatch/marks.py``
  outside ``dispatch/``, but for an allow-list of hot paths, each with its reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

nx = pytest.importorskip("networkx", reason="the import graph is built with networkx")

ROOT = Path(__file__).resolve().parent.parent / "ember"
#: files allowed to touch ``_table``: the dispatcher, and OpOverload (its per-op state)
TABLE_OWNERS = ("dispatch/", "ops/registry.py")
#: folders (and files) that must not import the top-level package
CORE = (
    "ops/",
    "dispatch/",
    "backends/",
    "_backend_settings/",  # public as ember.backends.<name>
    "autograd/engine.py",
    "autograd/kernel.py",
    "autograd/recorder.py",
    "autograd/graph.py",
    "autograd/function_table.py",
    "autograd/derivatives",
)  # every formula file (NOTE [formulas on the public functions])


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _module_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """Statements run when the module loads: the body, into ``if``/``try`` blocks, not into
    functions or classes, and not into ``if TYPE_CHECKING:``."""
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If):
            test = node.test
            if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                stack.extend(node.orelse)
                continue
            stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody)
            for h in node.handlers:
                stack.extend(h.body)


def _imports(name: str, path: Path, mods: dict[str, Path]) -> Iterator[str]:
    """The ember modules ``name`` imports at load time."""
    for node in _module_level(ast.parse(path.read_text(encoding="utf-8"))):
        found: list[str] = []
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            found = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]
        for target in found:
            while target not in mods and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in mods and target != name and target.startswith("ember"):
                yield target


def _folder(module: str) -> str:
    """A module's node in the folder graph: its top folder under ember/ (or its own name for
    a file directly in ember/)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "ember"


def folder_graph() -> nx.DiGraph:
    """Folder -> folders it imports at load time (the edges from ember/__init__.py left out)."""
    mods = _modules()
    graph = nx.DiGraph()
    for name, path in mods.items():
        src = _folder(name)
        if src == "ember":
            continue
        graph.add_node(src)
        for target in _imports(name, path, mods):
            dst = _folder(target)
            if dst != src:
                graph.add_edge(src, dst, example=(name, target))
    return graph


def test_no_folder_import_cycle() -> None:
    graph = folder_graph()
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    detail = []
    for c in cycles:
        for a, b in graph.subgraph(c).edges:
            detail.append(f"{a} -> {b} ({' imports '.join(graph.edges[a, b]['example'])})")
    assert not cycles, f"folders import each other: {cycles}\n" + "\n".join(detail)


def test_folder_graph_sees_imports() -> None:
    """The graph is not vacuous: known edges are found (the catalogue imports dispatch/)."""
    graph = folder_graph()
    assert graph.has_edge("ops", "dispatch") and graph.has_edge("backends", "ops")


def _table_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("_table", "_kernels"):
            out.append(f"{_rel(path)}:{node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "._table" in node.value or "._kernels" in node.value:  # generated code
                out.append(f"{_rel(path)}:{node.lineno} (generated code)")
    return out


def test_only_dispatch_reads_kernel_tables() -> None:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if not _rel(path).startswith(TABLE_OWNERS):
            found += _table_uses(path)
    assert not found, (
        "only ember/dispatch/ reads or resets an op's _table or _kernels; use OpOverload."
        f"entry/registered/kernel_for/redispatch/call_boxed/invalidate instead: {found}"
    )


def test_table_check_sees_reads() -> None:
    """The check is not vacuous: the dispatcher's own reads are found."""
    assert _table_uses(ROOT / "dispatch" / "dispatcher.py")


def _imports_top_package(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name == "ember" for a in node.names):
            out.append(f"{_rel(path)}:{node.lineno}")
        elif isinstance(node, ast.ImportFrom) and node.module == "ember" and not node.level:
            mods = {p.stem for p in ROOT.glob("*.py")} | {p.name for p in ROOT.iterdir()}
            if any(a.name not in mods for a in node.names):  # a name, not a submodule
                out.append(f"{_rel(path)}:{node.lineno}")
    return out


def test_core_never_imports_the_top_package() -> None:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if _rel(path).startswith(CORE):
            found += _imports_top_package(path)
    assert not found, f"the core imports the top-level ember package: {found}"


def test_top_package_check_sees_imports() -> None:
    """The check is not vacuous: a user-facing module that does import ember is found."""
    assert _imports_top_package(ROOT / "autograd" / "functional.py")


#: the one module that turns source text into code (``define``)
EXEC_SITE = "dispatch/codegen.py"


def _exec_calls(path: Path) -> list[str]:
    """Calls of the builtins ``exec``/``eval``/``compile`` on source text in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        name = node.func.id
        # compile(source, filename, mode): the builtin (ember.compile takes no mode string)
        mode = node.args[2] if name == "compile" and len(node.args) > 2 else None
        if name in ("exec", "eval") or (
            isinstance(mode, ast.Constant) and mode.value in ("exec", "eval", "single")
        ):
            out.append(f"{_rel(path)}:{node.lineno}")
    return out


def test_one_exec_site() -> None:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if _rel(path) != EXEC_SITE:
            found += _exec_calls(path)
    assert not found, f"generated code goes through ember.dispatch.codegen.define: {found}"


def test_exec_check_sees_calls() -> None:
    """The check is not vacuous: codegen's own exec is found."""
    assert _exec_calls(ROOT / "dispatch" / "codegen.py")


def _local_imports(path: Path) -> list[tuple[int, bool]]:
    """Each import inside a function in ``path``: (line, whether a comment says why). A
    comment counts on the import's line, on the comment lines right above it, on the ``try:``
    the import opens (an optional dependency), or on the first of a run of imports."""
    src = path.read_text(encoding="utf-8")
    lines = src.splitlines()

    def commented(lineno: int) -> bool:
        if "#" in lines[lineno - 1]:
            return True
        above = lines[lineno - 2].strip() if lineno > 1 else ""
        return above.startswith("#")

    found: list[tuple[int, bool]] = []

    def visit(node: ast.AST, in_function: bool, run_ok: bool = False) -> None:
        prev_ok: bool | None = None  # the previous statement was an import, with its verdict
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, True)
                prev_ok = None
            elif isinstance(child, (ast.Import, ast.ImportFrom)) and in_function:
                ok = commented(child.lineno) or bool(prev_ok) or (prev_ok is None and run_ok)
                found.append((child.lineno, ok))
                prev_ok = ok
            else:
                try_ok = isinstance(child, ast.Try) and commented(child.lineno)
                visit(child, in_function, try_ok)
                prev_ok = None

    visit(ast.parse(src), False)
    return found


def test_function_local_imports_say_why() -> None:
    """An import inside a function breaks a load-order cycle or defers a costly or optional
    module; a comment next to it says which (issue 19), else it belongs at module level."""
    bare = []
    for path in sorted(ROOT.rglob("*.py")):
        bare += [f"{_rel(path)}:{n}" for n, ok in _local_imports(path) if not ok]
    assert not bare, (
        "function-local imports without a comment naming the cycle or the lazy-load reason "
        f"(move them to module level, or say why): {bare}"
    )


def test_local_import_check_sees_imports(tmp_path: Path) -> None:
    """The check is not vacuous: it finds bare and commented local imports, and leaves
    module-level ones alone."""
    f = tmp_path / "m.py"
    f.write_text(
        "import os\n\n\ndef f():\n    import json\n\n\ndef g():\n"
        "    import re  # cycle: re imports this\n\n\ndef h():\n"
        "    try:  # optional dependency\n        import numpy\n        import numpy.linalg\n"
        "    except ImportError:\n        pass\n"
    )
    assert _local_imports(f) == [(5, False), (9, True), (14, True), (15, True)]


#: modules outside ``dispatch/`` that may still touch a tensor's key bits (``_ekeys``), with
#: how many sites each may have (None: any) and why; everything else asks
#: ``ember.dispatch.marks`` ("mark as batched/dual", "which backend", ...)
KEY_BIT_OWNERS: dict[str, tuple[int | None, str]] = {
    "_tensor.py": (None, "the Tensor class owns the slot: constructors, wrap_*, properties"),
    "_python_key.py": (3, "the Python key's argument walk on every __torch_dispatch__ call"),
    "autograd/kernel.py": (4, "the recording hot path marks each differentiable output"),
    "autograd/recorder.py": (4, "generated recording code tests and sets the bit inline"),
    "overrides/__init__.py": (3, "the TorchFunction test on every Tensor method call"),
    "overrides/_subclass.py": (8, "classifies subclasses (NOTE [torch function keys])"),
}


def _key_bit_uses(path: Path) -> list[str]:
    """Reads and writes of a tensor's key set (``._ekeys``), in code or in templates of
    generated code."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "_ekeys":
            out.append(f"{_rel(path)}:{node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "._ekeys" in node.value:
                out.append(f"{_rel(path)}:{node.lineno} (generated code)")
    return out


def test_key_bits_only_through_dispatch() -> None:
    """Outside ``dispatch/`` a layer asks ``ember.dispatch.marks`` about a tensor's keys or
    to set them (issue 19); the allow-listed hot paths keep their counts."""
    found, over = [], []
    for path in sorted(ROOT.rglob("*.py")):
        rel = _rel(path)
        if rel.startswith("dispatch/"):
            continue
        uses = _key_bit_uses(path)
        if rel in KEY_BIT_OWNERS:
            limit = KEY_BIT_OWNERS[rel][0]
            if limit is not None and len(uses) > limit:
                over.append(f"{rel}: {len(uses)} sites, allowed {limit}: {uses}")
        else:
            found += uses
    assert not found and not over, (
        "tensor key bits (_ekeys) read or written outside ember/dispatch/; use "
        f"ember.dispatch.marks: {found} {over}"
    )


def test_key_bit_check_sees_uses() -> None:
    """The check is not vacuous: the Tensor class's own uses and the helpers' are found."""
    assert _key_bit_uses(ROOT / "_tensor.py")
    assert _key_bit_uses(ROOT / "dispatch" / "marks.py")


def _folder_map() -> str:
    doc = (ROOT.parent / "docs" / "design.md").read_text(encoding="utf-8")
    start = doc.index("## Folders and the keys they serve")
    return doc[start : doc.index("\n## ", start + 1)]


def test_design_maps_every_folder() -> None:
    """docs/design.md's folder map names every folder of ember/ that holds code, so a new
    layer's home is written down where its key is."""
    table = _folder_map()
    folders = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and any(p.rglob("*.py")))
    missing = [f for f in folders if f"`{f}/" not in table]
    assert folders and not missing, f"docs/design.md's folder map lacks {missing}"
