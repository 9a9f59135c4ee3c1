"""The monthly report e-mail: queued once per opted-in team and month
whatever the number of runs, never for a team that did not opt in, sent
through Django's mail backend (the locmem outbox here) with the report's
uptime, incidents and objectives in its text and HTML."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from django.core import mail
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from projects.latency import histogram
from projects.models import (
    AccountEmail,
    DailyRollup,
    Incident,
    MonthlyReport,
    Project,
    Role,
    ServiceLevelObjective,
    Team,
)
from projects.notifications.account_mail import deliver_account_mail
from projects.reports.mail import queue_report, send_monthly_reports
from projects.schedules import SCHEDULES
from tests.support.teams import member

pytestmark = pytest.mark.django_db

# The schedule's run on the 1st: the report is October's.
RUN = datetime(2026, 11, 1, 6, 10, tzinfo=UTC)
OCTOBER = datetime(2026, 10, 1, tzinfo=UTC)


def team_with_a_month(name: str, *, opted_in: bool, recipients: str = "") -> Team:
    """A team with one project polled every minute of October, down
    for 30 minutes once, and an objective on it."""
    team = Team.objects.create(
        name=name,
        slug=name.lower(),
        monthly_report=opted_in,
        monthly_report_recipients=recipients,
    )
    project = Project.objects.create(
        team=team, name=f"{name} api", url="http://127.0.0.1:9/"
    )
    DailyRollup.objects.bulk_create(
        DailyRollup(
            project=project,
            day=(OCTOBER + timedelta(days=n)).date(),
            polls=1440,
            failures=30 if n == 9 else 0,
            responses=1440,
            response_time_sum_ms=1440 * 120,
            histogram=histogram.of([120] * 1300 + [900] * 140),
        )
        for n in range(31)
    )
    Incident.objects.create(
        project=project,
        started_at=datetime(2026, 10, 10, 3, tzinfo=UTC),
        confirmed_at=datetime(2026, 10, 10, 3, 2, tzinfo=UTC),
        resolved_at=datetime(2026, 10, 10, 3, 30, tzinfo=UTC),
    )
    ServiceLevelObjective.objects.create(
        team=team,
        name=f"{name} availability",
        project=project,
        target_percent=99.9,
        calendar_month=True,
    )
    return team


@pytest.fixture
def teams():
    listed = team_with_a_month(
        "Listed", opted_in=True, recipients="ops@example.test, cto@example.test"
    )
    members = team_with_a_month("Members", opted_in=True)
    member(members, Role.VIEWER, "vera")
    member(members, Role.MANAGER, "mona")
    quiet = team_with_a_month("Quiet", opted_in=False)
    member(quiet, Role.MANAGER, "quinn")
    return listed, members, quiet


def test_each_opted_in_team_gets_one_report_a_month_whatever_the_runs(teams):
    assert send_monthly_reports(clock=lambda: RUN) == 2
    # A restarted tasks process, a second one, a catch-up run later.
    assert send_monthly_reports(clock=lambda: RUN) == 0
    assert send_monthly_reports(clock=lambda: RUN + timedelta(days=3)) == 0
    deliver_account_mail()
    deliver_account_mail()

    assert sorted(tuple(m.to) for m in mail.outbox) == [
        ("mona@example.test", "vera@example.test"),
        ("ops@example.test", "cto@example.test"),
    ]
    assert set(MonthlyReport.objects.values_list("team__name", "month")) == {
        ("Listed", OCTOBER.date()),
        ("Members", OCTOBER.date()),
    }


def test_a_team_that_did_not_opt_in_gets_none(teams):
    send_monthly_reports(clock=lambda: RUN)
    deliver_account_mail()

    assert all("Quiet" not in m.subject for m in mail.outbox)
    assert all("quinn@example.test" not in m.to for m in mail.outbox)


def test_the_next_month_is_another_report(teams):
    send_monthly_reports(clock=lambda: RUN)

    assert send_monthly_reports(clock=lambda: datetime(2026, 12, 1, 6, tzinfo=UTC)) == 2
    assert AccountEmail.objects.count() == 4


def test_the_message_has_the_months_uptime_incidents_and_objectives(teams):
    send_monthly_reports(clock=lambda: RUN)
    deliver_account_mail()

    (message,) = [m for m in mail.outbox if "Listed" in m.subject]
    ((html, kind),) = message.alternatives
    assert message.subject == "Listed: uptime report for October 2026"
    assert kind == "text/html"
    uptime = 100 * (31 * 1440 - 30) / (31 * 1440)
    for body in (message.body, html):
        assert f"{uptime:.3f} %" in body
        assert "30 of 44640 polls failed" in body
        assert "30.0 min" in body  # the incident's downtime
        assert "2026-10-10 03:00" in body
        assert "2026-10-10 03:30" in body
        assert "Listed availability" in body
        assert "/reports/?start=2026-10-01&amp;end=2026-11-01" in body or (
            "/reports/?start=2026-10-01&end=2026-11-01" in body
        )
    assert "Listed availability: 99.933 % against 99.9 %: met" in message.body
    # 140 of 1,440 at 900 ms: the middle of its bucket, within 4 %.
    assert "p95:        902 ms" in message.body


def test_a_second_row_for_a_team_and_month_is_refused(teams):
    listed, *_ = teams
    send_monthly_reports(clock=lambda: RUN)

    with pytest.raises(IntegrityError), transaction.atomic():
        MonthlyReport.objects.create(
            team=listed, month=OCTOBER.date(), recipients="x", queued_at=RUN
        )
    assert not queue_report(listed, OCTOBER, RUN.replace(hour=0, minute=0), RUN)


def test_recipients_that_are_not_addresses_are_a_field_error():
    team = Team(name="T", slug="t", monthly_report_recipients="ops@example.test, nope")

    with pytest.raises(ValidationError) as refused:
        team.full_clean()

    assert refused.value.message_dict["monthly_report_recipients"] == [
        "Not an e-mail address: “nope”."
    ]


def test_the_schedule_runs_on_the_first_of_the_month():
    (job,) = [j for j in SCHEDULES if j.func.endswith("send_monthly_reports")]

    assert job.first_run(datetime(2026, 11, 29, 12, tzinfo=UTC)) == datetime(
        2026, 12, 1, 6, 10, tzinfo=UTC
    )
    assert job.first_run(datetime(2026, 12, 1, 6, 11, tzinfo=UTC)) == datetime(
        2027, 1, 1, 6, 10, tzinfo=UTC
    )


def test_a_team_turns_it_on_in_the_admin(admin_client):
    team = Team.objects.create(name="Ops", slug="ops")
    from django.urls import reverse

    url = reverse("admin:projects_team_change", args=[team.pk])
    page = admin_client.get(url).content.decode()
    assert 'name="monthly_report"' in page
    assert 'name="monthly_report_recipients"' in page

    response = admin_client.post(
        url,
        {
            "name": "Ops",
            "slug": "ops",
            "monthly_report": "on",
            "monthly_report_recipients": "ops@example.test\nnot an address",
        },
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["monthly_report_recipients"]
    team.refresh_from_db()
    assert team.monthly_report is False
