"""prune_results(): polls past RESULT_RETENTION_DAYS go, in short chunks."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest

from django.core.management import call_command
from django.db import connection

from polling.store import DatabaseResultStore
from projects.housekeeping.chunks import Pacer
from projects.housekeeping.retention import prune_results
from projects.models import HourlyRollup, HousekeepingRun, PollResult
from tests.support.outcomes import T0, outcome

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
CUTOFF = NOW - timedelta(days=30)


class Steps:
    """A clock that moves one second per reading, and a sleep that only
    counts: no test waits for a pause."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def clock(self) -> float:
        self.now += 1.0
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)


def small_pacer(steps: Steps, size: int = 10) -> Pacer:
    return Pacer(clock=steps.clock, sleep=steps.sleep, size=size, min_size=size)


@pytest.fixture
def polls_over_40_days(make_project, add_polls):
    """Two projects polled every 6 hours for 40 days up to NOW."""
    projects = [make_project(), make_project()]
    for project in projects:
        add_polls(project, "u" * 150 + "d" * 10, end=NOW, every=timedelta(hours=6))
    return projects


@pytest.mark.django_db
def test_it_removes_exactly_the_polls_older_than_the_cutoff(polls_over_40_days):
    kept = set(
        PollResult.objects.filter(polled_at__gte=CUTOFF).values_list("pk", flat=True)
    )
    old = PollResult.objects.count() - len(kept)
    rollups = HourlyRollup.objects.count()
    steps = Steps()

    pruned = prune_results(now=NOW, days=30, pacer=small_pacer(steps))

    assert pruned.rows == old > 0
    assert set(PollResult.objects.values_list("pk", flat=True)) == kept
    assert pruned.chunks >= old // 10
    assert len(steps.pauses) == pruned.chunks - 1
    assert pruned.finished is True
    assert HourlyRollup.objects.count() == rollups


@pytest.mark.django_db
def test_an_old_poll_written_late_goes_too(polls_over_40_days):
    project = polls_over_40_days[0]
    late = PollResult.objects.create(
        project=project, polled_at=CUTOFF - timedelta(minutes=1), status="down"
    )

    prune_results(now=NOW, days=30, pacer=small_pacer(Steps()))

    assert not PollResult.objects.filter(pk=late.pk).exists()
    assert not PollResult.objects.filter(polled_at__lt=CUTOFF).exists()


@pytest.mark.django_db
def test_it_stops_at_the_deadline_and_a_second_run_finishes(polls_over_40_days):
    steps = Steps()
    pacer = small_pacer(steps)

    first = prune_results(now=NOW, days=30, pacer=pacer, deadline=steps.now + 10)

    assert first.finished is False
    assert 0 < first.rows < 100
    second = prune_results(now=NOW, days=30, pacer=pacer)
    assert second.finished is True
    assert not PollResult.objects.filter(polled_at__lt=CUTOFF).exists()


@pytest.mark.django_db
def test_zero_days_keeps_every_poll(polls_over_40_days, settings):
    settings.RESULT_RETENTION_DAYS = 0
    count = PollResult.objects.count()

    pruned = prune_results(now=NOW)

    assert (pruned.cutoff, pruned.rows) == (None, 0)
    assert PollResult.objects.count() == count


@pytest.mark.django_db
def test_nothing_old_is_nothing_to_do(make_project, add_polls):
    add_polls(make_project(), "uuu", end=NOW)

    pruned = prune_results(now=NOW, days=30)

    assert (pruned.rows, pruned.chunks) == (0, 0)


@pytest.mark.parametrize(
    ("elapsed", "size"),
    [(0.0001, 2000), (0.05, 1000), (0.1, 500), (10.0, 500), (0.025, 2000)],
)
def test_chunks_are_sized_towards_the_target_time(elapsed, size):
    pacer = Pacer(size=1000)
    pacer.adjust(elapsed)
    assert pacer.size == size


def test_chunk_sizes_stay_within_their_bounds():
    pacer = Pacer(size=100, min_size=100, max_size=150)
    pacer.adjust(10.0)
    assert pacer.size == 100
    pacer.adjust(0.0001)
    assert pacer.size == 150


@pytest.mark.django_db
def test_on_sqlite_the_pause_gives_the_writer_its_turn():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's single write lock")
    steps = Steps()
    Pacer(sleep=steps.sleep).pause(0.01)
    assert steps.pauses == [0.1]


@pytest.mark.django_db
def test_the_command_prunes_and_records_the_run(polls_over_40_days, settings):
    settings.RESULT_RETENTION_DAYS = 10
    out = StringIO()

    call_command("prune_results", stdout=out)

    assert "Removed" in out.getvalue()
    run = HousekeepingRun.objects.get()
    assert run.job == HousekeepingRun.Job.PRUNE_RESULTS
    assert run.rows_removed > 0
    assert run.summary.startswith(f"Removed {run.rows_removed:,} polls")
    assert run.error == ""
    assert not PollResult.objects.filter(
        polled_at__lt=run.started_at - timedelta(days=10)
    ).exists()


@pytest.mark.django_db(transaction=True)
def test_the_writer_never_waits_long_for_pruning(make_project):
    """A writer saving batches while polls are pruned waits at most
    WRITER_LOCK_WAIT for any lock, or its save fails (a tenfold margin on
    the 100 ms aim; docs/benchmarks/2026-11-24-storage-pruning.md has the
    exact figures)."""
    projects = [make_project() for _ in range(20)]
    seed_old_polls(projects, 20_000)
    writer = ConcurrentWriter([p.pk for p in projects])
    writer.start()
    try:
        pruned = prune_results(days=30)
    finally:
        writer.stop()
    assert pruned.rows == 20_000
    assert writer.errors == []
    assert writer.batches > 0
    assert PollResult.objects.count() == writer.saved


WRITER_LOCK_WAIT_MS = 1000


def seed_old_polls(projects, count: int) -> None:
    old = datetime.now(UTC) - timedelta(days=40)
    PollResult.objects.bulk_create(
        (
            PollResult(
                project=projects[i % len(projects)],
                polled_at=old + timedelta(seconds=i),
                status="up",
                status_code=200,
                response_time_ms=50,
            )
            for i in range(count)
        ),
        batch_size=2000,
    )


class ConcurrentWriter:
    """The poller's DatabaseResultStore saving batches of 100 in a thread
    until stopped, with a lock wait bound on its own connection."""

    def __init__(self, project_ids: list[int]) -> None:
        self.project_ids = project_ids
        self.batches = self.saved = 0
        self.errors: list[Exception] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        store = DatabaseResultStore()
        try:
            bound_lock_waits()
            start = (datetime.now(UTC) - T0).total_seconds()
            while not self._stop.is_set() or not self.batches:
                # Five new windows of every project a batch, a second
                # apart: one result per project and window is stored.
                first = start + self.batches * 5
                batch = [
                    outcome(pid, at=first + window)
                    for window in range(5)
                    for pid in self.project_ids
                ]
                self.saved += store.save(batch)
                self.batches += 1
        except Exception as error:
            self.errors.append(error)
        finally:
            store.close()


def bound_lock_waits() -> None:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"SET lock_timeout = '{WRITER_LOCK_WAIT_MS}ms'")
        else:
            cursor.execute(f"PRAGMA busy_timeout = {WRITER_LOCK_WAIT_MS}")
