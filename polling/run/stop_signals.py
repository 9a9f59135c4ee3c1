from __future__ import annotations

import os
import signal
import threading

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

# The stop signals noted since catch_early(), in order, until a handler of
# its own takes over (take_over()); None while nothing is noting them.
_noted: list[int] | None = None


def catch_early() -> None:
    """From now on SIGTERM and SIGINT are noted, not the end of the process.
    manage.py calls this for runpoller before Django is set up (about a
    second of CPU, much more on a loaded machine), so that a signal during
    start-up is a request to stop like any later one, not an exit with
    -15; the handlers installed afterwards (StopSignals, the parent's
    forwarding) take over what was noted."""
    global _noted
    if _noted is None:
        _noted = []
        for signum in STOP_SIGNALS:
            signal.signal(signum, _note)


def _note(signum, frame) -> None:
    if _noted is not None:
        _noted.append(signum)


def install(handler) -> dict[int, object]:
    """Install `handler` for the stop signals; the handlers to restore
    afterwards (the default where catch_early()'s was)."""
    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    return {
        signum: signal.SIG_DFL if old is _note else old
        for signum, old in previous.items()
    }


def take_over() -> list[int]:
    """The stop signals noted since catch_early(), once; noting ends. Call
    it after install(), so that no signal falls between the two."""
    global _noted
    noted, _noted = _noted or [], None
    return noted


class StopSignals:
    """While entered, SIGTERM or SIGINT asks for a graceful stop (sets
    `requested`); a second one exits at once with status 1. On exit, the
    handlers it replaced are back.

    Enter it before anything slow or anything that must be undone (the
    SQLite lock, the writer process, threads). Signals noted since
    catch_early() count as received first."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._previous: dict[int, object] = {}

    def __enter__(self) -> threading.Event:
        self._previous = install(self._on_signal)
        for signum in take_over():
            self._on_signal(signum, None)
        return self.requested

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _on_signal(self, signum, frame) -> None:
        # Only a flag: the main thread does the stopping.
        if self.requested.is_set():
            os._exit(1)
        self.requested.set()


class SignalsToForward:
    """While entered, every SIGTERM and SIGINT (a second one too) is noted
    for the children, and so is each one noted since catch_early(); on exit
    the handlers before are back."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.arrived = threading.Event()
        self._previous: dict[int, object] = {}

    def __enter__(self) -> SignalsToForward:
        self._previous = install(self._on_signal)
        for signum in take_over():
            self._on_signal(signum, None)
        return self

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _on_signal(self, signum, frame) -> None:
        # Noted only: the main thread forwards them (run_children).
        self.received.append(signum)
        self.arrived.set()
