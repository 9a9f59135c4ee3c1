"""One log format (monitor/log_format.py) for every line the product's
processes print, from start to a Ctrl-C: `make run`'s stack (Procfile.dev
under monitor/run_procfile.py) is started, stopped with SIGINT to its
process group as a terminal does, and each line of web, worker and tasks
is read; the runner's prefix ("12:00:01 web.1 | ") and its own lines
("system") aside."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from monitor.log_format import as_log_line
from tests.support.processes import ROOT, process_env
from tests.support.waiting import wait_until
from tests.support.web_process import free_port

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
# Three processes importing Django side by side start slowly on a loaded
# 2-core machine; the waits below give each step up to STARTUP_SECONDS.
STARTUP_SECONDS = 180

ONE_FORMAT = re.compile(
    r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} "
    r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.\-]+: \S"
)
STACK_LINE = re.compile(r"\d{2}:\d{2}:\d{2} (?P<process>\S+?)\.1\s+\| (?P<text>.*)")


def test_as_log_line_writes_the_format_of_the_log():
    assert ONE_FORMAT.match(as_log_line("polling", "Stopped."))


class Stack:
    """Procfile.dev under its runner, as `make run` starts it, on free
    ports and the test's database; every line it prints is kept."""

    def __init__(self, folder: Path) -> None:
        self.web, control = free_port(), free_port()
        procfile = folder / "Procfile"
        text = (ROOT / "Procfile.dev").read_text()
        procfile.write_text(text.replace("127.0.0.1:8000", f"127.0.0.1:{self.web}"))
        bin_folder = Path(sys.executable).parent
        env = process_env(
            POLLER_CONTROL_BIND=f"127.0.0.1:{control}",
            POLLER_CONTROL_URL=f"http://127.0.0.1:{control}",
            # django-q2's INFO lines too ("MainProcess ready for work").
            LOG_LEVEL="INFO",
            PATH=f"{bin_folder}{os.pathsep}{os.environ['PATH']}",
        )
        # As `make run` does first: without collected static files the
        # web process warns (in Python's format) and cannot render a page.
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        self.process = subprocess.Popen(
            [sys.executable, "-m", "monitor.run_procfile", procfile],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def said(self, process: str, text: str) -> bool:
        return any(
            (m := STACK_LINE.fullmatch(line))
            and m["process"] == process
            and text in m["text"]
            for line in list(self.lines)
        )

    def page_answers(self) -> bool:
        """The web process answers (a ping for no project: 404)."""
        url = f"http://127.0.0.1:{self.web}/ping/{uuid.uuid4()}"
        try:
            with urllib.request.urlopen(url, timeout=5):
                return True
        except urllib.error.HTTPError:
            return True
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def interrupt(self) -> None:
        """Ctrl-C: SIGINT to every process of the group."""
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=120)
        finally:
            self.kill()
        self.reader.join(timeout=10)

    def kill(self) -> None:
        """The runner starts each process in a session of its own: killing
        the runner's group alone would leave them polling the next test's
        database, so every descendant goes too."""
        if self.process.poll() is not None:
            return
        for pid in [*_descendants(self.process.pid), self.process.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=10)


def _descendants(pid: int) -> list[int]:
    """Every process under `pid`, children first read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # The parent is the field after the state, which follows the
            # command name's closing parenthesis.
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@pytest.mark.timeout(4 * STARTUP_SECONDS)
def test_every_process_logs_in_one_format_up_to_its_stop(tmp_path):
    stack = Stack(tmp_path)
    try:
        wait_until(stack.page_answers, timeout=STARTUP_SECONDS)
        wait_until(
            lambda: stack.said("worker", "Poller started"), timeout=STARTUP_SECONDS
        )
        wait_until(
            lambda: stack.said("tasks", "Started: running tasks"),
            timeout=STARTUP_SECONDS,
        )
    except BaseException:
        stack.kill()
        print("\n".join(stack.lines))  # what the stack said, for the report
        raise
    stack.interrupt()

    products = [
        m
        for line in stack.lines
        if (m := STACK_LINE.fullmatch(line)) and m["process"] != "system"
    ]
    odd = [m.group(0) for m in products if not ONE_FORMAT.match(m["text"])]
    assert odd == [], "\n".join(stack.lines)
    # The stop was seen by each process, in the same format.
    assert stack.said("web", "Shutting down")
    assert stack.said("worker", "Stopping: finishing polls in flight")
    assert stack.said("tasks", "finishing tasks in hand")
