"""The import rules of docs/design.md, read from the source (`ast`, nothing imported): no
import circle anywhere in `src/nexmark`, and no import that runs up the layers.

Every `import` and `from ... import` counts, at module level or inside a function (a deferred
import still ties the modules together), and so do imports under `if TYPE_CHECKING:`: they never
run, but an annotation naming a type of another module is a dependency all the same, and a
circle hidden behind TYPE_CHECKING is still a circle of ideas (the protocol's was one). The
graph records which imports are guarded (`Import.type_checking`) for the messages.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

# The layers, lowest first: a module may import its own layer and the ones before it, never a
# later one. A module belongs to the longest prefix listed. docs/design.md says the same.
LAYERS: list[tuple[str, ...]] = [
    # the ground: errors, the terminal, durations, the disk, signals, settings, jar fetching,
    # ports and child processes
    (
        "nexmark",
        "nexmark.errors",
        "nexmark.console",
        "nexmark.durations",
        "nexmark.diskspace",
        "nexmark.interrupts",
        "nexmark.settings",
        "nexmark.maven",
        "nexmark.java",
        "nexmark.processes",
        "nexmark.storage",  # where datasets live (local or s3://): the writer and reader use it
    ),
    ("nexmark.workload",),  # the events, the dataset, the queries
    # the engine interface and the engines; the servers the runner starts for them
    ("nexmark.engines", "nexmark.storage.s3proxy", "nexmark.storage.local_store"),
    ("nexmark.sources",),  # sources beyond files: a Kafka broker, the loader into its topics
    ("nexmark.results",),  # the results schema, its files, its tables
    ("nexmark.metrics",),  # sampling a job, the formulas, the machine, the system check
    # the methodology, driving an engine, in layers of its own: a run's preparation and its
    # progress display, one query's phases, their scoring, the suite. failover.py lives with the
    # phases it describes, but is a leaf whose capability check the preparation runs
    (
        "nexmark.protocol",
        "nexmark.protocol.preparation",
        "nexmark.protocol.progress",
        "nexmark.protocol.query.failover",
    ),
    ("nexmark.protocol.query",),
    ("nexmark.protocol.scoring",),
    ("nexmark.protocol.suite",),
    ("nexmark.verify",),  # reference results; runs queries through the protocol
    ("nexmark.report",),  # HTML report, charts, compare
    ("nexmark.cli", "nexmark.__main__"),  # the commands
    ("nexmark.testing",),  # test suites for packages outside (may import everything)
]

# Import edges (importer, imported) allowed to sit in a circle while one is being taken apart
# on a branch; none today (the protocol's and the CLI's circles are gone, issue 30). An edge
# listed here must exist (the test below), so the list never outlives its circle.
ALLOWED_CYCLE_EDGES: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    type_checking: bool


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if package else parts), package


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in sorted((SRC / "nexmark").rglob("*.py")):
        name, package = _module_name(path)
        found[name] = (path, package)
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module `name` lives in (a module, or the package/module defining the name)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imports(module: str) -> list[Import]:
    path, package = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    guarded = _type_checking_lines(tree)
    found: list[Import] = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the importer's package
                package_parts = module.split(".") if package else module.split(".")[:-1]
                anchor = package_parts[: len(package_parts) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import mod` names the module; `from mod import name`, `mod`
            targets = [_resolve(f"{base}.{alias.name}") or base for alias in node.names]
        for target in targets:
            resolved = _resolve(target) if target.startswith("nexmark") else None
            if resolved and resolved != module:
                found.append(Import(module, resolved, node.lineno, node.lineno in guarded))
    return found


GRAPH: list[Import] = [imp for module in MODULES for imp in _imports(module)]


def layer_of(module: str) -> int:
    best, index = "", -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, index = prefix, i
    return index


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if layer_of(m) < 0] == []


def test_no_import_runs_up_the_layers() -> None:
    upward = [
        f"{i.importer} (line {i.line}) imports {i.imported}: layer {layer_of(i.imported)} "
        f"above {layer_of(i.importer)}"
        for i in GRAPH
        if layer_of(i.imported) > layer_of(i.importer)
    ]
    assert upward == []


def test_engine_packages_import_nothing_of_each_other() -> None:
    """Flink and Spark share only what lies beside them in engines/ (py4j_errors.py)."""

    def package(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 3 and parts[1] == "engines" else None

    crossing = [
        f"{i.importer} imports {i.imported}"
        for i in GRAPH
        if package(i.importer) and package(i.imported) not in (None, package(i.importer))
    ]
    assert crossing == []


def _cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    succ: dict[str, list[str]] = {}
    for a, b in sorted(edges):
        succ.setdefault(a, []).append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in succ.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(succ):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle() -> None:
    edges = {(i.importer, i.imported) for i in GRAPH}
    assert _cycles(edges - ALLOWED_CYCLE_EDGES) == []


def test_the_allowlist_names_only_edges_that_exist() -> None:
    """An allowed edge that is gone (its circle taken apart) is to be removed from the list."""
    edges = {(i.importer, i.imported) for i in GRAPH}
    assert sorted(ALLOWED_CYCLE_EDGES - edges) == []


@pytest.mark.parametrize(
    ("edges", "cycles"),
    [
        ({("a", "b"), ("b", "c")}, []),
        ({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}, [["a", "b", "c"]]),
    ],
)
def test_the_cycle_finder_finds_cycles(edges: set[tuple[str, str]], cycles: list) -> None:
    assert _cycles(edges) == cycles


def test_the_graph_sees_function_level_and_guarded_imports() -> None:
    """The reader is no stub: it finds a deferred import and a TYPE_CHECKING one where they are."""
    edges = {(i.importer, i.imported): i for i in GRAPH}
    deferred = edges[("nexmark.report.html", "nexmark.results.store")]  # inside a function
    assert not deferred.type_checking and deferred.line > 400
    guarded = edges[("nexmark.engines.base", "nexmark.workload.feed")]
    assert guarded.type_checking


def test_no_test_module_imports_another() -> None:
    """Shared test helpers live in modules of their own (tests/*.py without the test_ prefix):
    importing a test module runs its fixtures' and tests' definitions a second time, and ties
    one module's tests to another's."""
    tests = SRC.parent / "tests"
    test_modules = {p.stem for p in tests.rglob("test_*.py")}
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [f"{path.relative_to(tests)}: {n}" for n in names if n in test_modules]
    assert found == []
