"""`make run`'s process manager (monitor/run_procfile.py), run as `make run`
runs it, on Procfiles of small shell commands: each line's output behind
its name, one ending stops the rest, Ctrl-C lets each finish its work, a
second Ctrl-C does not wait."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.processes import ROOT

LINE = re.compile(r"\d{2}:\d{2}:\d{2} (?P<name>\S+)\s+\| (?P<text>.*)")


def start(folder: Path, procfile: str, **env: str) -> subprocess.Popen:
    (folder / "Procfile").write_text(procfile)
    return subprocess.Popen(
        [sys.executable, "-m", "monitor.run_procfile", "Procfile"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def start_trapping(
    folder: Path, name: str, on_term: str
) -> tuple[subprocess.Popen, list[str]]:
    """One process that runs `on_term` on SIGTERM, and what was printed
    until it was ready for it."""
    stack = start(
        folder,
        f"{name}: trap '{on_term}' TERM; echo ready; while true; do sleep 0.1; done\n",
    )
    return stack, read_until(stack, "ready")


def said(lines: list[str]) -> list[tuple[str, str]]:
    return [(m["name"], m["text"]) for line in lines if (m := LINE.fullmatch(line))]


def read_until(stack: subprocess.Popen, text: str) -> list[str]:
    """Lines up to and including the first that ends with `text`."""
    lines = []
    for line in stack.stdout:
        lines.append(line.rstrip("\n"))
        if lines[-1].endswith(text):
            return lines
    raise AssertionError(f"never said {text!r}: {lines}")


def finish(stack: subprocess.Popen) -> list[str]:
    out, _ = stack.communicate(timeout=30)
    return out.splitlines()


def test_one_process_ending_stops_the_others_with_its_exit_code(tmp_path):
    stack = start(
        tmp_path,
        "long: exec sleep 60\nshort: echo first; printf 'no newline'; exit 3\n",
    )
    lines = finish(stack)

    assert stack.returncode == 3
    printed = said(lines)
    assert ("short.1", "first") in printed
    assert ("short.1", "no newline") in printed
    assert ("system", "short.1 stopped (rc=3)") in printed
    assert ("system", "long.1 stopped (rc=-15)") in printed  # SIGTERM


def test_ctrl_c_gives_each_process_one_sigterm_and_waits_for_its_work(tmp_path):
    stack, lines = start_trapping(tmp_path, "careful", "sleep 1; echo saved; exit 0")
    os.kill(stack.pid, signal.SIGINT)
    lines += finish(stack)

    assert stack.returncode == 130
    printed = said(lines)
    assert ("careful.1", "saved") in printed
    assert ("system", "careful.1 stopped (rc=0)") in printed
    assert [text for _, text in printed].count(
        f"sending SIGTERM to careful.1 (pid {pid_of(printed, 'careful.1')})"
    ) == 1


def test_a_second_ctrl_c_kills_without_waiting(tmp_path):
    stack, lines = start_trapping(tmp_path, "stubborn", "echo not yet")
    os.kill(stack.pid, signal.SIGINT)
    lines += read_until(stack, "not yet")
    os.kill(stack.pid, signal.SIGINT)
    lines += finish(stack)

    assert stack.returncode == 130
    assert ("system", "stubborn.1 stopped (rc=-9)") in said(lines)


def test_the_procfiles_variables_come_from_dot_env_unless_the_environment_sets_them(
    tmp_path,
):
    (tmp_path / ".env").write_text(
        "FROM_FILE='file'\nexport BOTH=file\nNOT_EXPANDED=file\n"
    )
    stack = start(
        tmp_path,
        'show: echo "${FROM_FILE:-none} $BOTH"; printenv NOT_EXPANDED || echo absent\n',
        BOTH="environment",
    )
    lines = finish(stack)

    printed = said(lines)
    assert ("show.1", "file environment") in printed
    # The product reads the rest of the file itself.
    assert ("show.1", "absent") in printed


def test_a_line_that_is_not_a_process_is_refused(tmp_path):
    stack = start(tmp_path, "web gunicorn\n")
    lines = finish(stack)

    assert stack.returncode == 2
    assert lines == ["Procfile:1: expected 'name: command'"]


def pid_of(printed: list[tuple[str, str]], name: str) -> str:
    started = next(t for n, t in printed if t.startswith(f"{name} started"))
    return re.search(r"pid=(\d+)", started)[1]
