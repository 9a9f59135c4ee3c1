"""Percentiles of a range read from the rollups the writer keeps (hourly,
then compacted days), against the exact values of the raw polls."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from polling.store import DatabaseResultStore
from projects.housekeeping.compaction import compact_day
from projects.housekeeping.rollups import rebuild_rollups
from projects.latency import histogram
from projects.latency.ranges import range_sums
from projects.models import DailyRollup, HourlyRollup, PollResult
from tests.support.outcomes import T0, outcome

pytestmark = pytest.mark.django_db

EVERY = 300  # seconds between seeded polls: 12 an hour


def seed_polls(project_id: int, hours: int, seed: int = 1) -> None:
    """Polls every 5 minutes for `hours` from T0, through the writer, in
    batches of a few, with log-normal response times and a few failures."""
    rng = random.Random(seed)
    store = DatabaseResultStore()
    batch = []
    for i in range(hours * 3600 // EVERY):
        up = rng.random() > 0.05
        ms = int(rng.lognormvariate(5, 1)) if up or rng.random() < 0.5 else None
        batch.append(outcome(project_id, at=i * EVERY, up=up, ms=ms, code=200))
        if len(batch) == 7:
            store.save(batch)
            batch = []
    store.save(batch)


def exact(project_id: int, start) -> dict[str, int | None]:
    times = PollResult.objects.filter(
        project_id=project_id, polled_at__gte=start, response_time_ms__isnull=False
    ).values_list("response_time_ms", flat=True)
    return {f"p{p}_ms": histogram.exact_percentile(times, p) for p in histogram.SHOWN}


def assert_close(found: dict, wanted: dict) -> None:
    assert found.keys() == wanted.keys()
    for name, value in wanted.items():
        assert found[name] == pytest.approx(value, rel=0.04), name


def test_the_writers_histograms_equal_a_rebuild_from_raw_polls(make_project):
    project = make_project()
    seed_polls(project.pk, hours=3)
    kept = dict(HourlyRollup.objects.values_list("hour", "histogram"))

    rebuild_rollups()

    assert dict(HourlyRollup.objects.values_list("hour", "histogram")) == kept
    assert (
        sum(sum(h.values()) for h in kept.values())
        == PollResult.objects.filter(response_time_ms__isnull=False).count()
    )


@pytest.mark.parametrize("hours_before_end", [1, 5, 30, 47])
def test_range_percentiles_are_within_4_percent_of_the_raw_polls(
    make_project, hours_before_end
):
    project = make_project()
    other = make_project()
    seed_polls(project.pk, hours=48)
    seed_polls(other.pk, hours=2, seed=2)
    # Both days compacted: a range from the first day reads its raw polls,
    # then its hours, the second day whole, then the hours after it.
    compact_day(T0.date())
    compact_day(T0.date() + timedelta(days=1))
    assert DailyRollup.objects.filter(project=project).count() == 2
    start = T0 + timedelta(hours=48 - hours_before_end, minutes=17)

    found = range_sums([project.pk], start)[project.pk]

    assert_close(found.percentiles(), exact(project.pk, start))
    assert (
        found.polls
        == PollResult.objects.filter(project=project, polled_at__gte=start).count()
    )


def test_a_range_of_the_whole_history_reads_the_compacted_day(make_project):
    project = make_project()
    seed_polls(project.pk, hours=30)
    compact_day(T0.date())

    HourlyRollup.objects.filter(hour__lt=T0 + timedelta(hours=12)).delete()
    midnight = T0 - timedelta(hours=12)

    found = range_sums([project.pk], midnight)[project.pk]

    assert_close(found.percentiles(), exact(project.pk, midnight))


def test_a_project_without_responses_has_no_percentiles(make_project):
    project = make_project()
    DatabaseResultStore().save([outcome(project.pk, up=False, ms=None)])

    found = range_sums([project.pk], T0 - timedelta(hours=1))[project.pk]

    assert found.polls == 1
    assert found.percentiles()["p95_ms"] is None


@pytest.mark.parametrize(
    ("from_hours", "to_hours"),
    [(0, 48), (1.3, 47.6), (12, 36), (13.2, 13.9), (5.5, 30.25), (30, 40)],
)
def test_a_range_with_an_end_counts_only_the_polls_before_it(
    make_project, from_hours, to_hours
):
    project = make_project()
    seed_polls(project.pk, hours=48)
    compact_day(T0.date())
    compact_day(T0.date() + timedelta(days=1))
    start = T0 + timedelta(hours=from_hours)
    end = T0 + timedelta(hours=to_hours)

    found = range_sums([project.pk], start, end)[project.pk]

    polls = PollResult.objects.filter(
        project=project, polled_at__gte=start, polled_at__lt=end
    )
    assert found.polls == polls.count()
    assert found.failures == polls.filter(status="down").count()
    times = polls.exclude(response_time_ms=None).values_list(
        "response_time_ms", flat=True
    )
    assert sum(found.histogram.values()) == len(times)
