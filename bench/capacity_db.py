"""The database side of the capacity benchmark, one step per call.

    python bench/capacity_db.py prepare --projects N --interval S --url URL
    python bench/capacity_db.py readback --started T --stopped T
    python bench/capacity_db.py writer-ceiling --seconds S

DATABASE_URL names the database. Each step runs in its own process, so the
harness can move from one fresh database to the next, and prints one JSON
line. The times are Unix timestamps of the poller's start and its SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness import percentile_ms, setup_django
from scenarios import kind_of_url

from polling.engine.config import PollerConfig
from polling.engine.scheduler import first_poll_offset

SPREAD_SECONDS = PollerConfig().spread_seconds
# Ticks due in the last seconds before SIGTERM may still sit in the task
# queue, which stop() drops on purpose; they are not counted as missed.
STOP_MARGIN_SECONDS = 5
WRITE_BATCH = 500
LAG_TOLERANCE_SECONDS = 0.5
SHOWN_REASONS = 3  # failure reasons kept per kind


@dataclass(frozen=True, slots=True)
class Plan:
    """When a project's ticks are due: t0 + offset + k * interval."""

    offset: float
    interval: float
    timeout: float

    def ticks_before(self, t0: float, moment: float) -> int:
        return max(math.ceil((moment - t0 - self.offset) / self.interval), 0)

    def tick(self, t0: float, polled: float) -> tuple[int, float]:
        """Which tick a poll served, and how late it started (seconds).

        t0 is an estimate a little late, so a poll may seem to start just
        before its tick: the tolerance keeps that from reading as one
        interval late. A poll more than an interval late is counted
        against a later tick, so trust this only while nothing is missed.
        """
        since_first = polled - t0 - self.offset
        tolerance = min(LAG_TOLERANCE_SECONDS, self.interval / 10)
        tick = max(math.floor((since_first + tolerance) / self.interval), 0)
        return tick, max(since_first - tick * self.interval, 0.0)


@dataclass
class Tally:
    """What the rows of one run add up to."""

    rows: int = 0
    in_window: int = 0
    missed: int = 0
    extra: int = 0
    late_first: int = 0
    last_first_done: float = 0.0
    lags: list[float] = field(default_factory=list)


def prepare(args: argparse.Namespace) -> dict:
    from projects.models import Project

    listed = Path(args.urls_file).read_text().split() if args.urls_file else []

    def url_for(i: int) -> str:
        if listed:
            return listed[i % len(listed)]
        if args.hang_url and args.hang_every and i % args.hang_every == 0:
            return f"{args.hang_url}?p={i}"
        return f"{args.url}?p={i}"

    # Saved a day ago, as in a monitor that has run a while: the periodic
    # reload reads only projects saved since the last load (and right
    # after a bulk import, all of them). Stamped as they are inserted: an
    # UPDATE of every row afterwards leaves a dead copy of each on
    # PostgreSQL, and the table bigger than a monitor's would be.
    a_day_ago = datetime.now(UTC) - timedelta(days=1)
    with _timestamps_as_given(Project):
        Project.objects.bulk_create(
            (
                Project(
                    name=f"bench {i}",
                    url=url_for(i),
                    interval=args.interval,
                    interval_unit=Project.IntervalUnit.SECONDS,
                    timeout_seconds=args.timeout,
                    created_at=a_day_ago,
                    updated_at=a_day_ago,
                )
                for i in range(args.projects)
            ),
            batch_size=5000,
        )
    _vacuum_analyze()
    return {"projects": Project.objects.count()}


@contextmanager
def _timestamps_as_given(model):
    """Let bulk_create() write the created_at and updated_at it is given
    instead of the time now."""
    stamps = [model._meta.get_field(name) for name in ("created_at", "updated_at")]
    automatic = [(stamp.auto_now, stamp.auto_now_add) for stamp in stamps]
    for stamp in stamps:
        stamp.auto_now = stamp.auto_now_add = False
    try:
        yield
    finally:
        for stamp, (now, now_add) in zip(stamps, automatic, strict=True):
            stamp.auto_now, stamp.auto_now_add = now, now_add


def _vacuum_analyze() -> None:
    """As autovacuum would soon after the projects arrive: a freshly filled
    table has no statistics for the planner (PostgreSQL then guesses its
    size from its pages) and no hint bits on its rows."""
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("VACUUM ANALYZE")
        else:
            cursor.execute("ANALYZE")


def readback(started: float, stopped: float) -> dict:
    """Polls/s, missed ticks, lag and first polls, from the rows alone."""
    from django.db.models import Min

    from projects.models import PollResult

    plans = _plans()
    firsts = dict(
        PollResult.objects.values_list("project_id").annotate(Min("polled_at"))
    )
    t0 = min(
        (first.timestamp() - plans[pid].offset for pid, first in firsts.items()),
        default=started,
    )
    window_start = t0 + max(
        (min(p.interval, SPREAD_SECONDS) for p in plans.values()), default=0
    )
    tally = _tally(plans, t0, window_start, stopped)
    window = stopped - window_start
    lags = sorted(tally.lags)
    return {
        "rows": tally.rows,
        "rows_down": PollResult.objects.filter(status="down").count(),
        "scheduled_s": t0 - started,
        "polls_per_s": tally.in_window / window if window > 0 else None,
        "window_s": window,
        "missed": tally.missed,
        "extra": tally.extra,
        "lag_p50_ms": percentile_ms(lags, 0.50),
        "lag_p99_ms": percentile_ms(lags, 0.99),
        "lag_max_ms": percentile_ms(lags, 1.0),
        "first_polls_done_s": tally.last_first_done - started if firsts else None,
        "late_first": tally.late_first,
        "never_polled": len(plans) - len(firsts),
        "by_kind": by_kind(window_start, stopped),
    }


def by_kind(window_start: float, stopped: float) -> dict[str, dict]:
    """For each check kind (bench/kinds.py): its rows and polls/s in the
    window, its failed rows, and a few of their reasons."""
    from projects.models import PollResult, Project

    kinds = {
        pk: kind_of_url(url) for pk, url in Project.objects.values_list("pk", "url")
    }
    window = stopped - window_start
    found: dict[str, dict] = {
        kind: {"rows": 0, "in_window": 0, "down": 0, "reasons": {}}
        for kind in sorted(set(kinds.values()))
    }
    rows = PollResult.objects.values_list(
        "project_id", "polled_at", "status", "error_message"
    )
    for project_id, polled_at, status, reason in rows.iterator(chunk_size=10000):
        counts = found[kinds[project_id]]
        counts["rows"] += 1
        counts["in_window"] += window_start <= polled_at.timestamp() < stopped
        if status == "down":
            counts["down"] += 1
            shown = counts["reasons"]
            if reason in shown or len(shown) < SHOWN_REASONS:
                shown[reason] = shown.get(reason, 0) + 1
    for counts in found.values():
        counts["polls_per_s"] = counts["in_window"] / window if window > 0 else None
    return found


def _plans() -> dict[int, Plan]:
    """Each enabled project's spread offset, as the scheduler gives it."""
    from projects.models import Project

    projects = Project.objects.filter(enabled=True).order_by("pk")
    projects = list(projects.only("pk", "interval", "interval_unit", "timeout_seconds"))
    plans = {}
    for rank, project in enumerate(projects):
        interval = project.interval_seconds
        offset = first_poll_offset(rank, len(projects), interval, SPREAD_SECONDS)
        plans[project.pk] = Plan(offset, interval, project.timeout_seconds)
    return plans


def _tally(plans: dict[int, Plan], t0: float, window_start: float, stopped: float):
    """Add up the rows, project by project. A tick due before the stop
    margin with no poll serving it is missed; a second poll of one tick is
    extra."""
    from projects.models import PollResult

    tally = Tally()
    rows = PollResult.objects.order_by("project_id", "polled_at").values_list(
        "project_id", "polled_at", "response_time_ms"
    )
    served: dict[int, set[int]] = {project_id: set() for project_id in plans}
    for project_id, polled_at, response_ms in rows.iterator(chunk_size=10000):
        plan, polled = plans[project_id], polled_at.timestamp()
        if not served[project_id]:
            _count_first(tally, plan, t0, polled, response_ms)
        tick, lag = plan.tick(t0, polled)
        tally.extra += tick in served[project_id]
        served[project_id].add(tick)
        tally.rows += 1
        tally.in_window += window_start <= polled < stopped
        tally.lags.append(lag)
    for project_id, plan in plans.items():
        due = plan.ticks_before(t0, stopped - STOP_MARGIN_SECONDS)
        tally.missed += sum(1 for tick in range(due) if tick not in served[project_id])
    return tally


def _count_first(tally: Tally, plan: Plan, t0: float, polled: float, response_ms):
    # A poll with no response time (a timeout) counts as taking all of it.
    took = plan.timeout if response_ms is None else response_ms / 1000
    done = polled + took
    tally.last_first_done = max(tally.last_first_done, done)
    tally.late_first += done > t0 + plan.offset + plan.interval


def writer_ceiling(seconds: float) -> dict:
    """Drive DatabaseResultStore.save() alone with batches of 500 synthetic
    outcomes (one in 20 a timeout) for `seconds`; rows/s over save() time."""
    from polling.store import DatabaseResultStore
    from projects.models import Project

    store = DatabaseResultStore()
    ids = list(Project.objects.order_by("pk").values_list("pk", flat=True))
    durations = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        first = len(durations) * WRITE_BATCH
        batch = [
            _outcome(ids[(first + i) % len(ids)], first + i) for i in range(WRITE_BATCH)
        ]
        begin = time.perf_counter()
        store.save(batch)
        durations.append(time.perf_counter() - begin)
    store.close()
    durations.sort()
    return {
        "projects": len(ids),
        "rows": WRITE_BATCH * len(durations),
        "rows_per_s": WRITE_BATCH * len(durations) / sum(durations),
        "batch_p50_ms": percentile_ms(durations, 0.5),
        "batch_p99_ms": percentile_ms(durations, 0.99),
    }


def _outcome(project_id: int, n: int):
    from polling.engine.types import Outcome

    now = datetime.now(UTC)
    if n % 20 == 0:
        return Outcome(project_id, False, now, now, error="timed out after 10 s")
    return Outcome(
        project_id, True, now, now, status_code=200, response_time_ms=1 + n % 5
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    step = steps.add_parser("prepare", help="create the projects")
    step.add_argument("--projects", type=int, required=True)
    step.add_argument("--interval", type=int, required=True, help="seconds")
    step.add_argument("--timeout", type=int, required=True, help="seconds")
    step.add_argument("--url", default="")
    step.add_argument("--urls-file", default="", help="one URL a project, in order")
    step.add_argument("--hang-url", default="")
    step.add_argument("--hang-every", type=int, default=0, help="every Nth project")
    step = steps.add_parser("readback", help="measure a finished run")
    step.add_argument("--started", type=float, required=True)
    step.add_argument("--stopped", type=float, required=True)
    step = steps.add_parser("writer-ceiling", help="time the result store alone")
    step.add_argument("--seconds", type=float, required=True)
    args = parser.parse_args()
    setup_django(os.environ["DATABASE_URL"])
    if args.step == "prepare":
        result = prepare(args)
    elif args.step == "readback":
        result = readback(args.started, args.stopped)
    else:
        result = writer_ceiling(args.seconds)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
