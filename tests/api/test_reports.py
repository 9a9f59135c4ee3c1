"""reports/: a range's uptime, downtime, incidents, MTTR, MTBF, p95 and
objectives, as JSON and as CSV, against the raw polls and incidents."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from projects.housekeeping.rollups import rebuild_rollups
from projects.latency import histogram
from projects.models import Incident, PollResult, ServiceLevelObjective, Status
from projects.reports.summary import last_calendar_month

URL = "/api/v1/reports/"
OCTOBER = datetime(2026, 10, 1, tzinfo=UTC)
NOVEMBER = datetime(2026, 11, 1, tzinfo=UTC)
OUTAGES = [
    (datetime(2026, 9, 30, 23, tzinfo=UTC), datetime(2026, 10, 1, 1, tzinfo=UTC)),
    (datetime(2026, 10, 5, 10, tzinfo=UTC), datetime(2026, 10, 5, 10, 30, tzinfo=UTC)),
]


def down(at: datetime) -> bool:
    return any(start <= at < end for start, end in OUTAGES)


@pytest.fixture
def october(make_project):
    project = make_project(name="shop")
    at, polls = OCTOBER - timedelta(days=2), []
    while at < NOVEMBER + timedelta(days=1):
        polls.append(
            PollResult(
                project=project,
                polled_at=at,
                status=Status.DOWN if down(at) else Status.UP,
                response_time_ms=100 + (at.minute * 7) % 400,
            )
        )
        at += timedelta(minutes=10)
    PollResult.objects.bulk_create(polls)
    rebuild_rollups()
    for start, end in OUTAGES:
        Incident.objects.create(
            project=project, started_at=start, confirmed_at=start, resolved_at=end
        )
    ServiceLevelObjective.objects.create(
        name="shop up", project=project, target_percent=99.9, window_days=30
    )
    return project


def test_a_report_adds_up_the_raw_polls_and_incidents(read_api, october):
    body = read_api.get(
        URL,
        {
            "project": october.pk,
            "start": OCTOBER.isoformat(),
            "end": NOVEMBER.isoformat(),
        },
    ).json()

    polls = PollResult.objects.filter(polled_at__gte=OCTOBER, polled_at__lt=NOVEMBER)
    bad = polls.filter(status=Status.DOWN).count()
    assert body["polls"] == polls.count() == 31 * 144
    assert body["failures"] == bad == 6 + 3
    assert body["uptime_percent"] == pytest.approx(100 * (31 * 144 - 9) / (31 * 144))
    assert body["downtime_minutes"] == pytest.approx(60 + 30)
    assert body["incident_count"] == 2
    assert body["mttr_seconds"] == pytest.approx((120 + 30) * 60 / 2)
    assert body["mtbf_seconds"] == pytest.approx((31 * 86400 - 90 * 60) / 2)
    exact = histogram.exact_percentile(
        polls.values_list("response_time_ms", flat=True), 95
    )
    assert body["p95_ms"] == pytest.approx(exact, rel=0.04)
    [objective] = body["objectives"]
    assert objective["attainment_percent"] == pytest.approx(
        100 * (31 * 144 - 9) / (31 * 144)
    )
    assert objective["met"] is False


def test_the_csv_holds_the_summary_and_one_line_per_incident(read_api, october):
    response = read_api.get(
        URL,
        {
            "project": october.pk,
            "start": OCTOBER.isoformat(),
            "end": NOVEMBER.isoformat(),
            "format": "csv",
        },
    )

    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    summary = {row[0]: row[1] for row in rows if row[0].startswith("#")}
    assert summary["# incident_count"] == "2"
    assert summary["# objective shop up"].startswith("99.79")
    table = [row for row in rows if not row[0].startswith("#")]
    assert table[0] == ["project", "started_at", "resolved_at", "duration_seconds"]
    assert [row[3] for row in table[1:]] == ["3600.0", "1800.0"]


def test_the_default_range_is_last_calendar_month():
    assert last_calendar_month(datetime(2026, 11, 20, 8, tzinfo=UTC)) == (
        OCTOBER,
        NOVEMBER,
    )
    assert last_calendar_month(datetime(2026, 1, 3, tzinfo=UTC))[0] == datetime(
        2025, 12, 1, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"project": "x"}, "project"),
        ({"start": "soon"}, "start"),
        ({"start": "2026-10-02T00:00:00Z", "end": "2026-10-01T00:00:00Z"}, "end"),
    ],
)
def test_bad_parameters_are_a_400_naming_them(read_api, query, field):
    response = read_api.get(URL, query)

    assert response.status_code == 400
    assert list(response.json()) == [field]
