"""The README's two commands: `make run` installs what running needs, and
`make test` everything, also right after a `make run` (the two stamps in
.venv). Checked with `make -n` on a copy: nothing is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / ".env").write_text("SECRET_KEY=x\n")
    return tmp_path


def plan(folder: Path, target: str) -> str:
    return subprocess.run(
        ["make", "-n", target],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def stamp(folder: Path, name: str) -> None:
    venv = folder / ".venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    (venv / "bin" / "python").touch()
    (venv / name).touch()
    later = (folder / "pyproject.toml").stat().st_mtime + 10
    os.utime(venv / name, (later, later))


def test_make_run_installs_no_dev_or_test_tools(checkout):
    steps = plan(checkout, "run")
    assert "--editable '.[run]'" in steps
    assert ".[dev]" not in steps
    assert "python -m monitor.run_procfile Procfile.dev" in steps


def test_make_test_after_make_run_adds_the_dev_extras(checkout):
    stamp(checkout, ".installed-run")
    assert "pip install" not in plan(checkout, "run")

    steps = plan(checkout, "test")
    assert "--editable '.[dev]'" in steps
    assert "pytest" in steps


def test_make_run_after_make_test_has_what_it_needs(checkout):
    stamp(checkout, ".installed")
    assert "pip install" not in plan(checkout, "test")
    # Installing the run extra on top is quick: pip finds it there.
    assert "--editable '.[run]'" in plan(checkout, "run")
