"""The outbox's writing side: who gets a row, once."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.utils import timezone

from projects.models import Incident, MonitorOutage, Notification, Region, Team
from projects.notifications import outbox
from tests.support.alerting import make_channel, queued
from tests.support.outcomes import T0

pytestmark = pytest.mark.django_db

OPENED = Notification.Event.OPENED
RESOLVED = Notification.Event.RESOLVED


@pytest.fixture
def incident(make_project):
    project = make_project()
    return Incident.objects.create(project=project, started_at=T0, confirmed_at=T0)


def message(incident, event=OPENED) -> outbox.Message:
    return outbox.Message(
        event=event,
        key=outbox.message_key(event, incident.pk),
        payload={"event": event},
        project_id=incident.project_id,
        incident_id=incident.pk,
    )


def test_an_event_is_queued_once_per_channel_however_often_it_is_offered(incident):
    first, second = make_channel(), make_channel()
    incident.project.channels.add(first, second)

    for _ in range(3):
        outbox.queue_for_projects([message(incident)])

    rows = Notification.objects.order_by("channel_id")
    assert [(r.channel_id, r.event, r.state) for r in rows] == [
        (first.pk, "incident.opened", "pending"),
        (second.pk, "incident.opened", "pending"),
    ]
    assert rows[0].key == f"incident.opened:{incident.pk}:{first.pk}"
    assert rows[0].payload == {"event": "incident.opened"}


def test_disabled_channels_and_other_projects_channels_get_nothing(
    incident, make_project
):
    incident.project.channels.add(make_channel(enabled=False))
    make_project().channels.add(make_channel())

    assert outbox.queue_for_projects([message(incident)]) == 0
    assert Notification.objects.count() == 0


def test_resolved_goes_only_to_channels_told_it_opened_that_want_it(incident):
    told, quiet, later = (
        make_channel(),
        make_channel(send_resolved=False),
        make_channel(),
    )
    incident.project.channels.add(told, quiet)
    outbox.queue_for_projects([message(incident)])
    incident.project.channels.add(later)

    outbox.queue_for_audience([message(incident, RESOLVED)])

    resolved = Notification.objects.filter(event=RESOLVED)
    assert list(resolved.values_list("channel_id", flat=True)) == [told.pk]


def monitor_news(outage: MonitorOutage) -> set[str]:
    """The names of the channels that hear of `outage`."""
    event = Notification.Event.POLLER_SILENT
    outbox.queue_monitor_event(event, outage, T0, "Region us has no live poller")
    return set(Notification.objects.values_list("channel__name", flat=True))


def test_monitor_events_go_to_the_default_channels(make_project):
    make_project()
    make_channel(is_default=True, name="default")
    make_channel(name="not a default")
    make_channel(is_default=True, enabled=False, name="disabled")
    outage = MonitorOutage.objects.create(kind="unreachable", started_at=T0)

    assert monitor_news(outage) == {"default"}


def untrusted(*teams) -> None:
    """Teams an operator hosts (make_team's are trusted, for their polls)."""
    Team.objects.filter(pk__in=[t.team.pk for t in teams]).update(trusted=False)


def test_a_regions_outage_is_news_only_to_teams_it_polls_for(a, b):
    untrusted(a, b)
    us, eu = Region.objects.create(name="us"), Region.objects.create(name="eu")
    a.project.regions.add(us)
    b.project.regions.add(eu)
    outage = MonitorOutage.objects.create(kind="region_dark", region=us, started_at=T0)

    assert monitor_news(outage) == {"alpha-hook"}


def test_a_project_of_every_region_hears_of_any_regions_outage(a, b):
    untrusted(a, b)
    us = Region.objects.create(name="us")
    a.project.regions.add(us)
    outage = MonitorOutage.objects.create(kind="region_dark", region=us, started_at=T0)

    assert monitor_news(outage) == {"alpha-hook", "bravo-hook"}


def test_the_whole_monitors_outage_is_news_to_teams_with_enabled_projects(a, b):
    untrusted(a, b)
    b.project.enabled = False
    b.project.save()
    outage = MonitorOutage.objects.create(kind="poller_silent", started_at=T0)

    assert monitor_news(outage) == {"alpha-hook"}


def test_a_trusted_team_hears_of_every_outage(a, b):
    untrusted(a, b)
    operators = Team.objects.create(name="Operators", slug="ops", trusted=True)
    make_channel(team=operators, name="pager", is_default=True)
    us = Region.objects.create(name="us")
    a.project.regions.add(us)
    b.project.regions.add(Region.objects.create(name="eu"))
    outage = MonitorOutage.objects.create(kind="region_dark", region=us, started_at=T0)

    assert monitor_news(outage) == {"alpha-hook", "pager"}


def test_only_a_trusted_team_reads_the_installs_totals(a):
    untrusted(a)
    operators = Team.objects.create(name="Operators", slug="ops", trusted=True)
    make_channel(team=operators, name="pager", is_default=True)
    outage = MonitorOutage.objects.create(
        kind="unreachable", started_at=T0, detail={"failing": 40, "enabled": 50}
    )

    outbox.queue_monitor_event(
        Notification.Event.MONITOR_UNREACHABLE,
        outage,
        T0,
        f"Most projects are failing{outbox.TOTALS}.",
        totals=" (40 of 50 projects)",
    )

    told = {
        row.channel.name: row.payload
        for row in Notification.objects.select_related("channel")
    }
    assert told["pager"]["message"] == "Most projects are failing (40 of 50 projects)."
    assert told["pager"]["outage"]["enabled"] == 50
    assert told["alpha-hook"]["message"] == "Most projects are failing."
    assert "enabled" not in told["alpha-hook"]["outage"]
    assert "failing" not in told["alpha-hook"]["outage"]


def test_held_rows_are_released_or_dropped(incident, make_project):
    incident.project.channels.add(make_channel())
    other_project = make_project()
    other_project.channels.add(make_channel())
    other = Incident.objects.create(
        project=other_project, started_at=T0, confirmed_at=T0
    )
    outbox.queue_for_projects([message(incident), message(other)], held=True)
    assert queued() == [("incident.opened", "held")] * 2

    assert outbox.drop_held([other.pk]) == 1
    assert outbox.release_held() == 1

    assert queued(incident=incident) == [("incident.opened", "pending")]
    assert queued(incident=other) == [("incident.opened", "dropped")]


def test_only_untouched_recent_openings_are_held(incident):
    channels = [make_channel() for _ in range(4)]
    incident.project.channels.add(*channels)
    outbox.queue_for_projects([message(incident)])
    now = timezone.now()
    rows = Notification.objects.order_by("channel_id")
    Notification.objects.filter(pk=rows[1].pk).update(
        claimed_until=now + timedelta(seconds=30)
    )
    Notification.objects.filter(pk=rows[2].pk).update(attempts=1)
    Notification.objects.filter(pk=rows[3].pk).update(
        created_at=now - timedelta(minutes=5)
    )

    assert outbox.hold_unsent_openings(since=now - timedelta(minutes=1)) == 1
    assert list(rows.values_list("state", flat=True)) == [
        "held",
        "pending",
        "pending",
        "pending",
    ]
