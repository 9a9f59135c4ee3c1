from __future__ import annotations

import dataclasses
import os
import signal

import pytest

from polling.engine.status import PollerStatus
from polling.run import parts, poller
from polling.run.options import CannotRun, RunOptions
from projects.models import PollResult
from tests.support.factories import quick_projects
from tests.support.threads import poller_threads

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_stop_asked_for_during_start_up_starts_nothing(
    threads_before, target_server, monkeypatch
):
    quick_projects(target_server, 3, timeout=5)
    take_lock = parts.single_poller_lock

    def lock_then_sigterm():
        lock = take_lock()
        os.kill(os.getpid(), signal.SIGTERM)
        return lock

    monkeypatch.setattr(parts, "single_poller_lock", lock_then_sigterm)
    said = []
    summary = poller.run_poller(RunOptions(no_control=True), said.append)
    assert summary.startswith("Stopped. ")
    assert said[0] == "Stopping: finishing polls in flight, saving results."
    assert '"state": "stopped"' in said[1]
    assert target_server.count("/ok") == 0
    assert PollResult.objects.count() == 0
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert poller_threads(threads_before) == []


def stopped_status(**changes) -> PollerStatus:
    fields = {field.name: 0 for field in dataclasses.fields(PollerStatus) if field.init}
    fields.update(state="stopped", lag_p50_ms=None, lag_p99_ms=None)
    fields.update(lag_max_ms=None, last_reload_at=None)
    return PollerStatus(**{**fields, **changes})


def test_the_summary_says_the_status_as_json_then_in_words():
    said = []
    status = stopped_status(active_projects=4, dropped_at_stop=2)
    line = poller.summary(status, said.append)
    assert said[0].startswith('{"event": "stopped", "state": "stopped"')
    assert line.startswith("Stopped. ")
    assert line.endswith("; 2 queued polls were not started")


def test_results_left_unsaved_make_the_summary_an_error():
    said = []
    with pytest.raises(CannotRun, match="Stopped with 7 results unsaved"):
        poller.summary(stopped_status(results_unsaved=7), said.append)
    assert len(said) == 1  # the JSON line still went out
