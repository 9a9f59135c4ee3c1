"""One log format (monitor/log_format.py) for every line the product's
processes print, from start to a Ctrl-C: `make run`'s stack (Procfile.dev
under honcho) is started, stopped with SIGINT to its process group as a
terminal does, and each line of web, worker and tasks is read; honcho's
own prefix ("12:00:01 web.1 | ") and its own lines ("system") aside."""

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
from pathlib import Path

import pytest

from monitor.log_format import as_log_line
from tests.support.processes import ROOT, process_env
from tests.support.waiting import wait_until
from tests.support.web_process import free_port

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ONE_FORMAT = re.compile(
    r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} "
    r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.\-]+: \S"
)
HONCHO_LINE = re.compile(r"\d{2}:\d{2}:\d{2} (?P<process>\S+?)\.1\s+\| (?P<text>.*)")


def test_as_log_line_writes_the_format_of_the_log():
    assert ONE_FORMAT.match(as_log_line("polling", "Stopped."))


class Stack:
    """Procfile.dev under honcho, on free ports and the test's database;
    every line it prints is kept."""

    def __init__(self, folder: Path) -> None:
        self.web, control = free_port(), free_port()
        procfile = folder / "Procfile"
        text = (ROOT / "Procfile.dev").read_text()
        procfile.write_text(text.replace("127.0.0.1:8000", f"127.0.0.1:{self.web}"))
        bin_folder = Path(sys.executable).parent
        env = process_env(
            POLLER_CONTROL_BIND=f"127.0.0.1:{control}",
            POLLER_CONTROL_URL=f"http://127.0.0.1:{control}",
            # django-q2's INFO lines too ("Q Cluster ... starting").
            LOG_LEVEL="INFO",
            PATH=f"{bin_folder}{os.pathsep}{os.environ['PATH']}",
        )
        self.process = subprocess.Popen(
            [
                bin_folder / "honcho",
                "--procfile",
                procfile,
                "--app-root",
                ROOT,
                "start",
            ],
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
            (m := HONCHO_LINE.fullmatch(line))
            and m["process"] == process
            and text in m["text"]
            for line in list(self.lines)
        )

    def page_answers(self) -> bool:
        url = f"http://127.0.0.1:{self.web}/accounts/login/"
        try:
            with urllib.request.urlopen(url, timeout=5):
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
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


def test_every_process_logs_in_one_format_up_to_its_stop(tmp_path):
    stack = Stack(tmp_path)
    try:
        wait_until(stack.page_answers, timeout=180)
        wait_until(lambda: stack.said("worker", "Poller started"), timeout=180)
        wait_until(lambda: stack.said("tasks", "Q Cluster"), timeout=180)
    except BaseException:
        stack.kill()
        raise
    stack.interrupt()

    products = [
        m
        for line in stack.lines
        if (m := HONCHO_LINE.fullmatch(line)) and m["process"] != "system"
    ]
    odd = [m.group(0) for m in products if not ONE_FORMAT.match(m["text"])]
    assert odd == [], "\n".join(stack.lines)
    # The stop was seen by each process, in the same format.
    assert stack.said("web", "Shutting down")
    assert stack.said("worker", "Stopping: finishing polls in flight")
    assert stack.said("tasks", "finishing tasks in hand")
