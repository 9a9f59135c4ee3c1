"""The engine's threads name themselves to the system (engine/threads.py):
the comm the kernel keeps, 15 bytes, without the "poller-" prefix."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from polling.engine.threads import named_thread, os_name


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("poller-worker-2", "worker-2"),
        ("poller-scheduler", "scheduler"),
        ("poller-side-check-12345", "side-check-1234"),
        ("web-sync-to-pollers", "web-sync-to-pol"),
        ("poller-", "poller-"),
        ("poller-é-thread-names", "é-thread-names"),
        ("poller-éééééééé", "ééééééé"),  # 16 bytes: the broken last one goes
    ],
)
def test_the_system_name_drops_the_prefix_and_keeps_15_bytes(name, shown):
    assert os_name(name) == shown


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_a_named_thread_names_itself_before_its_target_runs():
    seen = []

    def target(word, *, mark):
        comm = Path(f"/proc/self/task/{threading.get_native_id()}/comm")
        seen.append(
            (comm.read_text().strip(), threading.current_thread().name, word, mark)
        )

    thread = named_thread(
        target, name="poller-writer", args=("a",), kwargs={"mark": 1}, daemon=True
    )
    thread.start()
    thread.join(5)
    assert seen == [("writer", "poller-writer", "a", 1)]
    assert thread.daemon is True
