"""Pages and the admin are an edge: nothing outside them imports them.

The models, the alerting code, the housekeeping, the engine and the writer
must work with every page removed, so a page can change (or a new one, such
as an API or a status page, can land) without touching what stores results
or decides incidents. The check reads the source, so an import inside a
function counts as much as one at the top of a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Packages whose modules serve pages. A new page package is added here.
# The admin is a surface too: the API and the YAML import share its rules
# through projects/checks, projects/maintenance and projects/teams forms.
PAGE_PACKAGES = (
    "projects.admin",
    "projects.dashboard",
    "projects.api",
    "projects.status_pages",
)
CHECKED_PACKAGES = ("projects", "polling")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    """Every module a file names in an import, `from x import y` as x.y too
    (y may be a module)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def is_within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def page_imports(root: Path) -> list[str]:
    found = []
    for package in CHECKED_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            importer = module_name(path)
            if is_within(importer, PAGE_PACKAGES):
                continue
            found.extend(
                f"{importer} imports {name}"
                for name in sorted(imported_modules(path))
                if is_within(name, PAGE_PACKAGES)
            )
    return found


def test_nothing_outside_the_pages_imports_them():
    assert page_imports(ROOT) == []


def test_the_check_finds_a_model_that_imports_a_page(tmp_path, monkeypatch):
    models = tmp_path / "projects" / "models"
    models.mkdir(parents=True)
    (models / "thing.py").write_text(
        "def f():\n    from projects.dashboard.queries import uptime\n"
    )
    (tmp_path / "polling").mkdir()
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)

    assert page_imports(tmp_path) == [
        "projects.models.thing imports projects.dashboard.queries",
        "projects.models.thing imports projects.dashboard.queries.uptime",
    ]
