"""`make run`'s process manager: starts every line of a Procfile, prints
their output line by line behind their names, and stops them all when one
ends or on Ctrl-C.

    python -m monitor.run_procfile Procfile.dev

honcho did this in four Python processes (one per line besides its own,
about 5 MiB each, docs/benchmarks.md#make-run-footprint); this is one,
reading every pipe with a selector. It keeps honcho's conventions: each
line runs in `sh -c` in a session of its own (so a terminal's Ctrl-C
reaches only this process, which passes one SIGTERM to each group), its
lines read `HH:MM:SS name.1 | text`, and the exit code is 130 after
SIGINT, 143 after SIGTERM, else the first process's that ended. Unlike
honcho, the processes get STOP_SECONDS, not 5, to finish their work
before SIGKILL (the poller saves every result first); a second Ctrl-C
kills them at once. From `.env` (or ENV_FILE) it takes only the
variables the Procfile's commands expand, such as `${WEB_CONCURRENCY:-1}`,
where the environment does not set them: the product's processes read the
whole file themselves (monitor/settings.py), with django-environ, which is
not imported here to keep this process small.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

# gunicorn's graceful timeout; the poller's and the tasks' stops are shorter.
STOP_SECONDS = 30
# How often exits are looked for when no process prints anything.
POLL_SECONDS = 0.5
# After the last process ended, how long its descendants may keep its
# output open (and print) before they are no longer waited for.
OUTPUT_SECONDS = 2
PROCFILE_LINE = re.compile(r"^(?P<name>[A-Za-z0-9_-]+):\s*(?P<command>.+)$")
EXPANDED = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
ENV_LINE = re.compile(
    r"^\s*(?:export\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>.*?)\s*$"
)
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
SYSTEM = "system"


def read_procfile(path: Path) -> dict[str, str]:
    """The Procfile's commands by name, in its order."""
    commands = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = PROCFILE_LINE.match(line)
        if not match:
            raise ValueError(f"{path}:{number}: expected 'name: command'")
        commands[match["name"]] = match["command"]
    return commands


def expanded_from_env_file(commands: dict[str, str], path: Path) -> dict[str, str]:
    """The variables the commands expand, as `path` sets them (a value may
    be quoted), unless the environment already does."""
    wanted = {
        name for command in commands.values() for name in EXPANDED.findall(command)
    }
    found = {}
    for line in path.read_text().splitlines():
        match = ENV_LINE.match(line)
        if match and match["name"] in wanted and match["name"] not in os.environ:
            value = match["value"]
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            found[match["name"]] = value
    return found


class Running:
    """One Procfile line's process. (Not a dataclass: importing dataclasses
    would cost this small process 1.4 MiB; socket, 0.8, is not used for
    the same reason.)"""

    __slots__ = ("name", "output_open", "process", "unfinished_line")

    def __init__(self, name: str, process: subprocess.Popen) -> None:
        self.name = name
        self.process = process
        self.unfinished_line = b""
        self.output_open = True

    @property
    def ended(self) -> bool:
        """Seen to end by reap() (only it polls the process)."""
        return self.process.returncode is not None


class Stack:
    def __init__(self, commands: dict[str, str], out=sys.stdout) -> None:
        self.commands = commands
        self.out = out
        names = [f"{name}.1" for name in commands]
        self.width = max(len(SYSTEM), *map(len, names))
        self.running: dict[int, Running] = {}  # by the output pipe's fd
        self.selector = selectors.DefaultSelector()
        self.returncode: int | None = None
        self.kill_at: float | None = None
        self.all_ended_at: float | None = None

    def run(self) -> int:
        woken, wake_up = os.pipe()
        for end in (woken, wake_up):
            os.set_blocking(end, False)
        signal.set_wakeup_fd(wake_up)
        self.selector.register(woken, selectors.EVENT_READ)
        received: list[int] = []
        for signum in EXIT_CODES:
            signal.signal(signum, lambda signum, frame: received.append(signum))
        for name, command in self.commands.items():
            self.start(name, command)
        while self.waiting():
            for key, _ in self.selector.select(POLL_SECONDS):
                if key.fd == woken:
                    os.read(woken, 4096)
                else:
                    self.read(self.running[key.fd])
            while received:
                self.on_signal(received.pop(0))
            self.reap()
            if self.kill_at is not None and time.monotonic() >= self.kill_at:
                self.stop_all(signal.SIGKILL)
                self.kill_at = float("inf")  # once
        return self.returncode or 0

    def waiting(self) -> bool:
        if not all(r.ended for r in self.running.values()):
            self.all_ended_at = None
            return True
        if self.all_ended_at is None:
            self.all_ended_at = time.monotonic()
        return any(r.output_open for r in self.running.values()) and (
            time.monotonic() < self.all_ended_at + OUTPUT_SECONDS
        )

    def start(self, name: str, command: str) -> None:
        process = subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        os.set_blocking(process.stdout.fileno(), False)
        self.running[process.stdout.fileno()] = Running(f"{name}.1", process)
        self.selector.register(process.stdout, selectors.EVENT_READ)
        self.say(SYSTEM, f"{name}.1 started (pid={process.pid})")

    def read(self, running: Running) -> None:
        try:
            data = os.read(running.process.stdout.fileno(), 65536)
        except BlockingIOError:
            return
        if not data:  # every process of its group closed the pipe
            self.selector.unregister(running.process.stdout)
            running.process.stdout.close()
            running.output_open = False
            data = b"\n" if running.unfinished_line else b""
        *lines, running.unfinished_line = (running.unfinished_line + data).split(b"\n")
        for line in lines:
            self.say(running.name, line.decode(errors="replace"))

    def reap(self) -> None:
        for running in self.running.values():
            if not running.ended and running.process.poll() is not None:
                returncode = running.process.returncode
                self.say(SYSTEM, f"{running.name} stopped (rc={returncode})")
                if self.returncode is None:
                    self.returncode = returncode
                self.begin_stop()

    def on_signal(self, signum: int) -> None:
        self.say(SYSTEM, f"{signal.Signals(signum).name} received")
        if self.kill_at is not None:  # asked twice: no more waiting
            self.stop_all(signal.SIGKILL)
            return
        if self.returncode is None:
            self.returncode = EXIT_CODES[signum]
        self.begin_stop()

    def begin_stop(self) -> None:
        if self.kill_at is None:
            self.kill_at = time.monotonic() + STOP_SECONDS
            self.stop_all(signal.SIGTERM)

    def stop_all(self, signum: int) -> None:
        """To each process's whole group: what it started goes with it."""
        for running in self.running.values():
            if running.ended:
                continue
            pid = running.process.pid
            self.say(
                SYSTEM,
                f"sending {signal.Signals(signum).name} to {running.name} (pid {pid})",
            )
            # It may have just ended: reap() says so.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signum)

    def say(self, name: str, text: str) -> None:
        self.out.write(f"{time.strftime('%H:%M:%S')} {name:<{self.width}} | {text}\n")
        self.out.flush()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m monitor.run_procfile PROCFILE", file=sys.stderr)
        return 2
    try:
        commands = read_procfile(Path(argv[0]))
    except (OSError, ValueError) as error:
        print(error, file=sys.stderr)
        return 2
    if not commands:
        print(f"{argv[0]}: no processes to run", file=sys.stderr)
        return 2
    env_file = Path(os.environ.get("ENV_FILE", ".env"))
    if env_file.is_file():
        os.environ.update(expanded_from_env_file(commands, env_file))
    return Stack(commands).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
