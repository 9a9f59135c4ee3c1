from __future__ import annotations

import time

import pytest

from django.db import OperationalError, connection
from django.db.models import Max

from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator, NotRunning
from polling.engine.types import RunState
from polling.store import target_from_project
from polling.wiring import database_coordinator
from projects.models import PollResult, Project
from tests.support.factories import quick_projects
from tests.support.threads import poller_threads
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def make_projects(server, count: int, *, path: str = "/ok", interval: int = 1):
    quick_projects(server, count, path=path, interval=interval)
    return list(Project.objects.order_by("pk"))


@pytest.fixture
def coordinator():
    made = []

    def make(**config) -> Coordinator:
        config.setdefault("spread_seconds", 1)
        made.append(database_coordinator(PollerConfig(**config)))
        return made[-1]

    yield make
    for each in made:
        each.stop()  # all of it: nothing of this poller may reach the next test


def test_every_poll_gets_its_row_and_the_current_state_matches(
    target_server, coordinator
):
    projects = make_projects(target_server, 300)
    poller = coordinator(max_concurrent_http=50)
    poller.start()
    wait_until(lambda: target_server.count("/ok") >= 600)  # three rounds
    poller.stop(timeout=10)

    polls = target_server.count("/ok")
    assert PollResult.objects.count() == polls
    assert poller.status().results_written == polls
    latest = dict(
        PollResult.objects.values("project")
        .annotate(latest=Max("polled_at"))
        .values_list("project", "latest")
    )
    for project in Project.objects.all():
        assert project.last_polled_at == latest[project.pk]
        assert project.last_status == "up"
        assert project.last_status_code == 200
        assert project.consecutive_failures == 0
    assert len(latest) == len(projects)


def test_status_reports_the_engine(target_server, coordinator):
    make_projects(target_server, 3, path="/status/500")
    poller = coordinator(max_concurrent_http=7)
    poller.start()
    wait_until(lambda: poller.status().results_written >= 3)
    status = poller.status()
    assert status.state == "running"
    assert status.active_projects == 3
    assert status.polls_down >= 3
    assert status.polls_total == status.polls_up + status.polls_down
    assert status.max_concurrent_http == 7
    assert status.lag_p50_ms is not None
    assert status.lag_p99_ms >= status.lag_p50_ms
    assert status.last_reload_at is not None
    assert status.uptime_seconds > 0
    assert status.results_rejected == status.results_unsaved == 0

    poller.stop(timeout=10)
    stopped = poller.status()
    assert stopped.state == "stopped"
    assert stopped.polls_in_flight == stopped.results_pending_write == 0
    assert stopped.results_written == stopped.polls_total


def test_a_slow_project_is_never_polled_twice_at_once(target_server, coordinator):
    make_projects(target_server, 1, path="/delay/2200", interval=1)
    Project.objects.update(timeout_seconds=5)
    poller = coordinator()
    poller.start()
    wait_until(lambda: poller.status().skipped_busy >= 2)
    poller.stop(timeout=10)
    status = poller.status()
    # Each 1 s tick either polls or is skipped while the 2.2 s poll runs:
    # a second poll at once would leave fewer skips than that.
    assert target_server.count("/delay") == status.polls_total
    assert status.skipped_busy >= 2 * status.polls_total - 2


def test_projects_added_updated_and_removed_while_running(target_server, coordinator):
    poller = coordinator()
    poller.start()
    [project] = make_projects(target_server, 1, interval=3600)
    assert poller.sync_project(project.pk) == "added"
    wait_until(lambda: PollResult.objects.filter(project=project).exists())

    Project.objects.filter(pk=project.pk).update(
        url=target_server.url("/status/204"), expected_status="204"
    )
    assert poller.sync_project(project.pk) == "updated"
    assert poller.target(project.pk).url.endswith("/status/204")

    Project.objects.filter(pk=project.pk).update(enabled=False)
    assert poller.sync_project(project.pk) == "removed"
    assert poller.status().active_projects == 0
    project.delete()
    assert poller.sync_project(project.pk) == "absent"


def test_reload_follows_the_database(target_server, coordinator):
    first, second = make_projects(target_server, 2, interval=3600)
    poller = coordinator()
    poller.start()
    assert poller.status().active_projects == 2
    Project.objects.filter(pk=first.pk).update(enabled=False)
    Project.objects.filter(pk=second.pk).update(url=target_server.url("/changed"))
    summary = poller.reload_projects()
    assert (summary.added, summary.updated, summary.removed) == (0, 1, 1)
    assert poller.target(second.pk) == target_from_project(
        Project.objects.get(pk=second.pk)
    )


def test_it_reloads_on_its_own(target_server, coordinator):
    poller = coordinator(reload_interval=0.2)
    poller.start()
    make_projects(target_server, 2, interval=3600)
    wait_until(lambda: poller.status().active_projects == 2)


def test_stop_is_idempotent_and_final(threads_before, target_server, coordinator):
    make_projects(target_server, 5)
    poller = coordinator()
    poller.start()
    # No timeout: one that passes leaves the writer ending its child
    # process, as documented (a loaded machine took longer than 5 s).
    # test_stop_returns_on_time_during_a_database_outage bounds a stop.
    poller.stop()
    poller.stop()
    assert poller.state is RunState.STOPPED
    # Nothing is left that could poll or write.
    assert poller_threads(threads_before) == []
    with pytest.raises(RuntimeError, match="cannot start"):
        poller.start()
    with pytest.raises(NotRunning, match="the poller is stopped"):
        poller.add_project(target_from_project(Project.objects.first()))
    with pytest.raises(NotRunning):
        poller.reload_projects()
    with pytest.raises(NotRunning):
        poller.scale_to(3)


def test_stop_saves_the_results_of_polls_in_flight(target_server, coordinator):
    make_projects(target_server, 20, path="/delay/800")
    poller = coordinator(max_concurrent_http=20)
    poller.start()
    wait_until(lambda: poller.status().polls_in_flight >= 10)
    poller.stop(timeout=10)
    assert target_server.count("/delay") == PollResult.objects.count() >= 10


@pytest.mark.slow
def test_a_database_outage_delays_results_but_loses_none(target_server, coordinator):
    make_projects(target_server, 20, interval=1)
    poller = coordinator(max_concurrent_http=10)
    poller.start()
    wait_until(lambda: poller.status().results_written >= 20)
    with database_outage():
        polls_before = target_server.count("/ok")
        # Polling goes on while nothing can be written.
        wait_until(lambda: target_server.count("/ok") >= polls_before + 20)
        assert poller.status().results_pending_write > 0
    wait_until(lambda: poller.status().results_pending_write == 0, timeout=40)
    poller.stop(timeout=10)
    assert PollResult.objects.count() == target_server.count("/ok")
    if connection.vendor == "postgresql":
        assert poller.status().failed_writes >= 1  # the retry path ran


class database_outage:
    """Make the database refuse the poller's writes for a while.

    PostgreSQL: refuse new connections and cut every open one, from a
    session on the maintenance database. SQLite: hold the write lock, as a
    long transaction in another process would.
    """

    def __enter__(self):
        if connection.vendor == "postgresql":
            self._admin(
                f"ALTER DATABASE {self._name} WITH ALLOW_CONNECTIONS false",
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                f"WHERE datname = '{self._name}'",
            )
        else:
            with connection.cursor() as cursor:
                cursor.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, *exc_info):
        if connection.vendor == "postgresql":
            self._admin(f"ALTER DATABASE {self._name} WITH ALLOW_CONNECTIONS true")
            connection.close()  # the test's own session was cut too
        else:
            with connection.cursor() as cursor:
                cursor.execute("COMMIT")

    @property
    def _name(self) -> str:
        return connection.settings_dict["NAME"]

    def _admin(self, *statements: str) -> None:
        import psycopg

        params = connection.get_connection_params()
        params["dbname"] = "postgres"
        with psycopg.connect(**params, autocommit=True) as admin:
            for statement in statements:
                admin.execute(statement)


class FailingSource:
    """A source whose database is down: load_all() raises."""

    closed = False

    def load_all(self, pause=None):
        raise OperationalError("connection refused")

    def load_changes(self, since, known, pause=None):
        raise OperationalError("connection refused")

    def load_some(self, project_ids):
        raise OperationalError("connection refused")

    def close(self) -> None:
        self.closed = True


def test_a_start_that_fails_leaves_nothing_running(threads_before):
    from polling.store import DatabaseResultStore

    poller = Coordinator(
        PollerConfig(stop_timeout=5),
        source=FailingSource(),
        store=DatabaseResultStore(),
    )
    with pytest.raises(OperationalError):
        poller.start()
    assert poller.state is RunState.STOPPED
    assert poller_threads(threads_before) == []
    with pytest.raises(RuntimeError, match="cannot start"):
        poller.start()


class EmptySource(FailingSource):
    """A source with no projects."""

    def load_all(self, pause=None):
        return []


def test_the_scheduler_runs_before_the_first_load_goes_in(monkeypatch):
    # The first projects of a load are due at once: they must not wait for
    # the rest to be scheduled (300,000 take about a second).
    from polling.store import DatabaseResultStore

    poller = Coordinator(
        PollerConfig(stop_timeout=5), source=EmptySource(), store=DatabaseResultStore()
    )
    scheduler = poller._scheduler
    running_when_loaded = []
    replace_all = scheduler.replace_all

    def recording(targets):
        running_when_loaded.append(scheduler._thread is not None)
        return replace_all(targets)

    monkeypatch.setattr(scheduler, "replace_all", recording)
    poller.start()
    poller.stop()
    assert running_when_loaded == [True]


@pytest.mark.slow
def test_stop_returns_on_time_during_a_database_outage(
    threads_before, target_server, coordinator
):
    make_projects(target_server, 20, interval=1)
    poller = coordinator(max_concurrent_http=10)
    poller.start()
    wait_until(lambda: poller.status().results_written >= 20)
    with database_outage():
        wait_until(lambda: poller.status().results_pending_write >= 20)
        started = time.monotonic()
        poller.stop(timeout=2)
        took = time.monotonic() - started
        at_stop = poller.status()
    assert took < 3.5
    assert at_stop.state == "stopped"
    assert at_stop.results_unsaved >= 20
    # On SQLite the writer may still be waiting for the lock inside the
    # store; once it returns, every poll is either saved or counted unsaved.
    wait_until(lambda: poller_threads(threads_before) == [], timeout=15)
    status = poller.status()
    assert PollResult.objects.count() == status.results_written
    assert status.results_written + status.results_unsaved == status.polls_total
