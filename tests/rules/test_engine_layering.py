"""The engine stays free of Django: its modules import with Django gone."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import polling.engine

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: Django is already imported in this one. A
# meta path finder refuses `django` and `projects`, so an import of either
# anywhere in the engine, however indirect, fails the check.
GUARD = """
import importlib, sys

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("django", "projects"):
            raise ImportError(f"the engine must not import {name}")
        return None

sys.meta_path.insert(0, Refuse())
for module in sys.argv[1:]:
    importlib.import_module(module)
print("ok", len(sys.argv) - 1)
"""


def engine_modules() -> list[str]:
    return [
        module.name
        for module in pkgutil.walk_packages(
            polling.engine.__path__, prefix="polling.engine."
        )
    ]


def import_without_django(modules: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", GUARD, *modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_every_engine_module_imports_without_django():
    modules = engine_modules()
    assert "polling.engine.coordinator" in modules
    assert "polling.engine.probe" in modules

    result = import_without_django(modules)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"ok {len(modules)}"


def test_the_guard_catches_an_engine_module_that_imports_django(tmp_path):
    package = tmp_path / "polling_engine_probe_guard"
    package.mkdir()
    (package / "__init__.py").write_text("from django.db import models\n")

    result = subprocess.run(
        [sys.executable, "-c", GUARD, "polling_engine_probe_guard"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "ImportError: the engine must not import django" in result.stderr
