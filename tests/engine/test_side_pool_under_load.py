"""Hanging database checks never cost an HTTP poll its window: 50
PostgreSQL checks against a server that accepts and never speaks run
beside 1,000 HTTP projects at 5 s, and every HTTP window is polled."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise

from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from polling.engine.types import Target
from tests.support.engine_fakes import ListSource, RecordingStore
from tests.support.silent_server import SilentServer
from tests.support.waiting import wait_until

HTTP_PROJECTS = 1000
HANGING_CHECKS = 50
INTERVAL = 5
ROUNDS = 3


def test_fifty_hanging_database_checks_cost_the_http_polls_no_window(target_server):
    with SilentServer() as silent:
        http = [
            Target(
                project_id=i,
                url=target_server.url("/ok"),
                interval_seconds=INTERVAL,
                timeout_seconds=4,
            )
            for i in range(HTTP_PROJECTS)
        ]
        hanging = [
            Target(
                project_id=HTTP_PROJECTS + i,
                url=f"postgres://monitor@127.0.0.1:{silent.port}/app?query=SELECT%201",
                interval_seconds=INTERVAL,
                timeout_seconds=2,
            )
            for i in range(HANGING_CHECKS)
        ]
        store = RecordingStore()
        poller = Coordinator(
            PollerConfig(
                max_concurrent_http=200,
                service_check_concurrency=HANGING_CHECKS,
                spread_seconds=INTERVAL,
                write_batch_seconds=0.1,
            ),
            source=ListSource(http + hanging),
            store=store,
        )
        poller.start()
        try:
            wait_until(
                lambda: all(
                    len(store.of(t.project_id)) >= ROUNDS for t in http + hanging
                ),
                timeout=120,
            )
            status = poller.status()
        finally:
            poller.stop(timeout=30)

    print(
        f"lag p50/p99/max {status.lag_p50_ms}/{status.lag_p99_ms}/"
        f"{status.lag_max_ms} ms; service checks timed out "
        f"{status.service_checks_timed_out}"
    )
    assert status.skipped_ticks == 0
    for target in http:
        windows = sorted(o.due_at for o in store.of(target.project_id))
        assert all(o.up for o in store.of(target.project_id))
        # Every window from the first to the last, none missed.
        steps = {b - a for a, b in pairwise(windows)}
        assert steps == {timedelta(seconds=INTERVAL)}, target.project_id
    for target in hanging:
        outcomes = store.of(target.project_id)
        assert {o.error for o in outcomes} == {"timed out after 2 s"}
    assert silent.accepted >= HANGING_CHECKS
