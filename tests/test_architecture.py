"""The contracts of ARCHITECTURE.md section 4 that the source itself can show, read with
``ast`` (no import of ember needed):

- nothing outside ``ember/dispatch/`` reads or resets an op's kernel table (``_table``), in
  code or in the templates of generated code (``OpOverload``'s own methods, in
  ``ops/registry.py``, are the dispatcher's per-op state and may);
- no import cycle between folders (module-level imports; the top-level ``ember/__init__.py``
  is the public facade over everything, so its own imports are left out);
- the core (``ops/``, ``dispatch/``, ``backends/`` and the ``torch.backends`` switches it
  registers, the autograd engine) never imports the top-level ``ember`` package;
- generated code has one ``exec`` site, ``ember/dispatch/codegen.py`` (which registers the
  source with ``linecache``, so tracebacks show it).
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
        if isinstance(node, ast.Attribute) and node.attr == "_table":
            out.append(f"{_rel(path)}:{node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "._table" in node.value:  # a template of generated code
                out.append(f"{_rel(path)}:{node.lineno} (generated code)")
    return out


def test_only_dispatch_reads_kernel_tables() -> None:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if not _rel(path).startswith(TABLE_OWNERS):
            found += _table_uses(path)
    assert not found, (
        "only ember/dispatch/ reads or resets an op's _table; use OpOverload.entry/"
        f"kernel_for/redispatch/call_boxed/invalidate instead: {found}"
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
