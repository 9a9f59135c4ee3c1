"""No import circles inside `projects` and `polling`.

The graph is read from the source with `ast`, so nothing is imported. It
counts every import a module makes: at the top, inside functions, and
under `if TYPE_CHECKING:`. The circles this rule was written against hid
exactly there (a function-level import of the tasks module, a type-only
import of a result class), and a function-level import is a circle
postponed, not one broken: the two modules still cannot be understood,
tested or moved one without the other.

Two graphs are checked: modules, and the sub-packages of `projects` and
`polling` taken whole (`projects.incidents` and `projects.notifications`
must not need each other both ways, whichever modules carry the edges).
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("projects", "polling")
# Generated code, never imported by the code under the rule.
SKIPPED_PARTS = {"migrations"}

Graph = dict[str, set[str]]


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """{dotted module name: file} for every module of PACKAGES."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if SKIPPED_PARTS & set(parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imported_modules(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` this module imports, anywhere in it. `from a
    import b` points at a.b when that is a module, else at a."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node.module, node.level, is_package)
            for alias in node.names:
                name = f"{base}.{alias.name}"
                found.add(name if name in known else base)
    # A package's __init__ also runs when one of its modules is imported;
    # that edge is left out: an __init__ importing its own modules is how
    # packages work, not a circle.
    return (found & known) - {module}


def _absolute(module: str, name: str | None, level: int, is_package: bool) -> str:
    """The absolute name of a (possibly relative) `from` import's module."""
    if level == 0:
        return name or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, name] if name else parts)


def import_graph(files: dict[str, Path]) -> Graph:
    """{module: the modules of `files` it imports}."""
    known = set(files)
    return {
        module: imported_modules(module, path, known) for module, path in files.items()
    }


def package_graph(graph: Graph) -> Graph:
    """The module graph with each sub-package taken whole: `projects.
    incidents.links` becomes `projects.incidents`. Top-level modules of a
    package stay themselves."""

    def owner(module: str) -> str:
        parts = module.split(".")
        return ".".join(parts[:2])

    packages: Graph = {}
    for module, targets in graph.items():
        node = owner(module)
        packages.setdefault(node, set()).update(
            owner(t) for t in targets if owner(t) != node
        )
    return packages


def cycles(graph: Graph) -> list[list[str]]:
    """One circle per strongly connected component (Tarjan), each as the
    path round it, e.g. [a, b, a]."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(set(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_circle_in(component, graph) for component in components]


def _circle_in(component: set[str], graph: Graph) -> list[str]:
    """A shortest path from the component's first member back to itself."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & component):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"no circle through {start}")


def describe(circles: list[list[str]]) -> str:
    return "\n".join(" -> ".join(circle) for circle in circles)


def carriers(circles: list[list[str]], graph: Graph) -> str:
    """The module imports behind each step of package circles."""
    lines = []
    for circle in circles:
        for source, target in itertools.pairwise(circle):
            lines += [
                f"  {module} imports {imported}"
                for module, imported in sorted(_edges(graph, source, target))
            ]
    return "\n".join(lines)


def _edges(graph: Graph, source: str, target: str):
    for module, imported in graph.items():
        for name in imported:
            if _within(module, source) and _within(name, target):
                yield module, name


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_module_imports_itself_round_a_circle():
    graph = import_graph(module_files())
    assert "projects.notifications.delivery" in graph  # the walk found the code

    circles = cycles(graph)

    assert circles == [], f"import circles:\n{describe(circles)}"


def test_no_two_sub_packages_need_each_other():
    modules = import_graph(module_files())
    graph = package_graph(modules)
    assert "projects.incidents" in graph

    circles = cycles(graph)

    assert circles == [], (
        f"import circles between packages:\n{describe(circles)}\n"
        f"through:\n{carriers(circles, modules)}"
    )


def test_a_circle_hidden_in_a_function_is_found(tmp_path):
    package = tmp_path / "projects"
    (package / "alerts").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "alerts" / "__init__.py").write_text("")
    (package / "alerts" / "sending.py").write_text(
        "from projects.alerts.asking import ask\n"
    )
    (package / "alerts" / "asking.py").write_text(
        "def ask():\n    from . import sending\n"
    )
    (tmp_path / "polling").mkdir()

    circles = cycles(import_graph(module_files(tmp_path)))

    assert circles == [
        [
            "projects.alerts.asking",
            "projects.alerts.sending",
            "projects.alerts.asking",
        ]
    ]


def test_a_circle_between_packages_is_found_through_any_module():
    graph = {
        "projects.incidents.recorder": {"projects.notifications.outbox"},
        "projects.notifications.outbox": set(),
        "projects.notifications.payloads": {"projects.incidents.links"},
        "projects.incidents.links": set(),
    }

    assert cycles(graph) == []
    assert cycles(package_graph(graph)) == [
        ["projects.incidents", "projects.notifications", "projects.incidents"]
    ]
