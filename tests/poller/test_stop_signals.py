from __future__ import annotations

import os
import signal
import subprocess
import sys

from polling.run.stop_signals import StopSignals
from tests.support.processes import ROOT, process_env


def test_a_signal_while_entered_asks_for_a_stop_and_the_old_handlers_come_back():
    received = []

    def previous(signum, frame):
        received.append(signum)

    old = signal.signal(signal.SIGTERM, previous)
    try:
        with StopSignals() as stop:
            assert stop.is_set() is False
            os.kill(os.getpid(), signal.SIGTERM)
            assert stop.is_set() is True
        assert signal.getsignal(signal.SIGTERM) is previous
        assert received == []  # the stop handler took it, not the old one
    finally:
        signal.signal(signal.SIGTERM, old)


def test_sigint_asks_for_a_stop_too():
    with StopSignals() as stop:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.is_set() is True
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


SECOND_SIGNAL = """
import os, signal
from polling.run.stop_signals import StopSignals
with StopSignals() as stop:
    os.kill(os.getpid(), signal.SIGTERM)
    print("asked to stop:", stop.is_set(), flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
    print("still running")
"""


def test_a_second_signal_exits_at_once_with_status_1():
    ended = subprocess.run(
        [sys.executable, "-c", SECOND_SIGNAL],
        cwd=ROOT,
        env=process_env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ended.returncode == 1, ended.stderr
    assert ended.stdout == "asked to stop: True\n"
