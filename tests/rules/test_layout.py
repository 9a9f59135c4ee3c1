"""The layout's rules (docs/architecture.md, "Where things live"):

- `projects/` keeps at its top only the app's own modules and the one
  shim a stored task path needs; every concern is a sub-package;
- tests mirror the code in sub-folders, with shared helpers in
  `tests/support/`, and no test module imports another;
- no module imports another module's private (`_`-prefixed) name.

The checks read the source with `ast`, so nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The app's own modules, and the shim whose path django-q2 stores
# (projects/schedules.py MOVED_FUNCS).
PROJECTS_TOP = {
    "__init__.py",
    "apps.py",
    "schedules.py",
    "signals.py",
    "system_checks.py",
    "status_announcements.py",
}
CODE_PACKAGES = ("monitor", "projects", "polling", "tests", "bench")


def loose_modules(root: Path) -> list[str]:
    return sorted(
        path.name
        for path in (root / "projects").glob("*.py")
        if path.name not in PROJECTS_TOP
    )


def loose_tests(root: Path) -> list[str]:
    return sorted(path.name for path in (root / "tests").glob("test_*.py"))


def _import_froms(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node


def imports_of_test_modules(root: Path) -> list[str]:
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        for node in _import_froms(path):
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found.extend(
                f"{path.relative_to(root)} imports {name}"
                for name in names
                if name.startswith("tests.") and name.rsplit(".", 1)[-1][:5] == "test_"
            )
    return found


def private_imports(root: Path) -> list[str]:
    found = []
    for package in CODE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in _import_froms(path):
                if node.module.split(".")[0] not in CODE_PACKAGES:
                    continue
                found.extend(
                    f"{path.relative_to(root)} imports {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_")
                )
    return found


def test_projects_keeps_only_its_own_modules_at_the_top():
    assert loose_modules(ROOT) == []


def test_every_test_lives_in_the_folder_of_what_it_tests():
    assert loose_tests(ROOT) == []


def test_no_test_module_imports_another():
    assert imports_of_test_modules(ROOT) == []


def test_no_module_imports_a_private_name_of_another():
    assert private_imports(ROOT) == []


def test_the_checks_find_what_they_forbid(tmp_path):
    (tmp_path / "projects").mkdir()
    (tmp_path / "projects" / "helpers.py").write_text("")
    (tmp_path / "tests" / "engine").mkdir(parents=True)
    (tmp_path / "tests" / "test_loose.py").write_text("")
    (tmp_path / "tests" / "engine" / "test_b.py").write_text(
        "from tests.engine.test_a import helper\n"
        "from polling.engine.probe import _unexpected\n"
    )

    assert loose_modules(tmp_path) == ["helpers.py"]
    assert loose_tests(tmp_path) == ["test_loose.py"]
    assert imports_of_test_modules(tmp_path) == [
        "tests/engine/test_b.py imports tests.engine.test_a",
    ]
    assert private_imports(tmp_path) == [
        "tests/engine/test_b.py imports polling.engine.probe._unexpected",
    ]
