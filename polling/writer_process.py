"""Saving results in a process of the poller's own: a ResultStore whose
save() runs in a child.

A CPython process runs one thread of Python at a time (the GIL). In the
poller, the writer's Python (about 50 µs a row) waited for the GIL behind
the workers': under load a 500-row batch took 300 µs a row of wall time
for 50 µs of CPU, and the writer, not the network or the database, set the
poller's pace. In a child the writer has a GIL of its own; the poller only
sends each batch down a pipe and waits, without the GIL, for the answer.

The poller's ResultWriter keeps its batching, retries and set-aside rows
unchanged: to it this is one more store. The child saves each batch with
DatabaseResultStore, in one transaction, as the poller would.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields
from multiprocessing.connection import Connection
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from django.db import connection

from polling.database_probe import database_answers
from polling.engine.types import Outcome, StepRun
from polling.engine.writer import StoreUnavailable

if TYPE_CHECKING:
    from polling.leases import LeaseFence

logger = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# How long close() waits for the child to finish its last batch.
CLOSE_SECONDS = 30.0
# What the child says once Django is set up and it can save.
READY = "ready"
# An outcome travels as the tuple of its fields: pickling the dataclass
# runs Python code for every field, a fifth of the poller's GIL under load.
# So do a flow's step runs, each the tuple of its fields in the `steps`
# field (empty for every other poll).
_fields_of = attrgetter(*(field.name for field in fields(Outcome)))
_run_fields = attrgetter(*(field.name for field in fields(StepRun)))
_STEPS = [field.name for field in fields(Outcome)].index("steps")


def _as_tuple(outcome: Outcome) -> tuple:
    row = _fields_of(outcome)
    if not outcome.steps:
        return row
    steps = tuple(map(_run_fields, outcome.steps))
    return (*row[:_STEPS], steps, *row[_STEPS + 1 :])


def _from_tuple(row: tuple) -> Outcome:
    if not row[_STEPS]:
        return Outcome(*row)
    steps = tuple(StepRun(*run) for run in row[_STEPS])
    return Outcome(*row[:_STEPS], steps, *row[_STEPS + 1 :])


class StoreRefused(Exception):
    """The child's store refused the batch for its data (the message names
    the error); the writer then saves it one outcome at a time."""


@dataclass(frozen=True, slots=True)
class HeldLeases:
    """The leases the poller held when it sent a batch, for the child's
    LeaseFence (it reads them as it would a LeaseKeeper's)."""

    node_id: int
    shard_count: int
    held: dict[int, int]  # shard -> token
    region_id: int = 1  # the poller's region: its leases are of it

    def tokens(self) -> dict[int, int]:
        return self.held


class ProcessStore:
    """A ResultStore that saves in a child process, started on the first
    save and again after it dies.

    With a fence (several pollers), each batch goes with the leases held at
    that moment and the child checks them in its transaction as the fence
    would; the fence's counters are kept up to date here."""

    def __init__(self, *, fence: LeaseFence | None = None) -> None:
        self._fence = fence
        self._child: _Child | None = None

    @property
    def child_pid(self) -> int | None:
        return None if self._child is None else self._child.process.pid

    def open(self) -> None:
        """Start the child now and wait until it can save. The writer calls
        this as it starts, so a poller's start() returns with a writer that
        saves at once: setting Django up in the child takes 1.5 s of CPU,
        which on a loaded machine (a load of 12 on 2 cores) was 20 s of
        wall time, all of it spent inside the first save. A child that
        fails to start is only logged: save() starts another."""
        try:
            self._child or self._start()
        except (EOFError, OSError) as error:
            self._forget_child()
            logger.warning("The writer process did not start (%r)", error)

    def save(self, outcomes: Sequence[Outcome]) -> int:
        try:
            child = self._child or self._start()
            child.send(([_as_tuple(o) for o in outcomes], self._held_leases()))
            verdict, value, statements, dropped = child.recv()
        except (EOFError, OSError) as error:
            self._forget_child()
            raise StoreUnavailable(f"the writer process ended ({error!r})") from None
        if self._fence is not None:
            self._fence.statements += statements
            self._fence.dropped += dropped
        if verdict == "saved":
            return value
        if verdict == "unavailable":
            raise StoreUnavailable(value)
        raise StoreRefused(value)

    def reachable(self) -> bool:
        """Whether the database answers, asked from this process: the
        child, if it is still there, saves on the same database."""
        return database_answers()

    def close(self) -> None:
        """End the child once it has saved what it was given."""
        if self._child is not None:
            with contextlib.suppress(OSError):
                self._child.send(None)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._child.process.wait(CLOSE_SECONDS)
        self._forget_child()

    def _held_leases(self) -> HeldLeases | None:
        if self._fence is None:
            return None
        keeper = self._fence.keeper
        return HeldLeases(
            keeper.node_id,
            keeper.shard_count,
            keeper.tokens(),
            getattr(keeper, "region_id", 1),
        )

    def _start(self) -> _Child:
        self._child = _Child.start(dict(connection.settings_dict))
        return self._child

    def _forget_child(self) -> None:
        if self._child is not None:
            self._child.end()
            self._child = None


class _Child:
    """`python -m polling.writer_process`, with a pipe each way."""

    def __init__(self, process: subprocess.Popen, out: Connection, in_: Connection):
        self.process = process
        self._out = out
        self._in = in_

    @classmethod
    def start(cls, database: dict) -> _Child:
        from_parent, to_child = os.pipe()  # (read end, write end)
        from_child, to_parent = os.pipe()
        env = {**os.environ, "PYTHONPATH": _python_path()}
        process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(from_parent), str(to_parent)],
            pass_fds=(from_parent, to_parent),
            env=env,
        )
        os.close(from_parent)
        os.close(to_parent)
        child = cls(
            process,
            Connection(to_child, readable=False),
            Connection(from_child, writable=False),
        )
        # The poller's own database, which may be a test database whose
        # name the settings module does not know.
        try:
            child.send(database)
            child.recv()  # READY: Django is set up (EOFError: it died)
        except BaseException:
            child.end()
            raise
        return child

    def send(self, message: object) -> None:
        self._out.send(message)

    def recv(self) -> object:
        return self._in.recv()

    def end(self) -> None:
        self._out.close()
        self._in.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def _python_path() -> str:
    # The child imports this module by name, wherever the poller was
    # started from.
    return os.pathsep.join(
        filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")])
    )


def serve(receive: Connection, answer: Connection) -> None:
    """The child: save each batch received and say how it went, until the
    poller says stop or goes away."""
    # A signal to the poller's process group (Ctrl-C, a supervisor's
    # SIGTERM) is the poller's to handle: it sends what is left, then
    # closes the pipe, and that ends this process.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    import django
    from django.conf import settings

    settings.DATABASES["default"] = receive.recv()
    django.setup()
    from polling.leases import LeaseFence
    from polling.store import DatabaseResultStore, close_connection

    try:
        answer.send(READY)
        while (message := _next(receive)) is not None:
            rows, leases = message
            fence = None if leases is None else LeaseFence(leases)
            outcomes = [_from_tuple(row) for row in rows]
            answer.send(_save(DatabaseResultStore(fence=fence), outcomes, fence))
    except OSError:
        pass  # the poller is gone; what was saved stays saved
    finally:
        close_connection()


def _next(receive: Connection) -> object | None:
    try:
        return receive.recv()
    except EOFError:
        return None


def _save(store, outcomes: list[Outcome], fence) -> tuple[str, object, int, int]:
    try:
        verdict, value = "saved", store.save(outcomes)
    except StoreUnavailable as error:
        verdict, value = "unavailable", str(error)
    except Exception as error:
        # The traceback is only here: the poller hears the error's name and
        # message.
        logger.exception("The store refused a batch of %d results", len(outcomes))
        verdict, value = "refused", f"{type(error).__name__}: {error}"
    if fence is None:
        return verdict, value, 0, 0
    return verdict, value, fence.statements, fence.dropped


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    serve(
        Connection(int(sys.argv[1]), writable=False),
        Connection(int(sys.argv[2]), readable=False),
    )
