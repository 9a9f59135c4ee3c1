"""Escalation: after a step's minutes without an acknowledgement, its
channels are told, once; an acknowledgement stops the steps, and the
recovery reaches every channel that was told. The clock is injected."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.urls import reverse

from projects.incidents.acknowledge import acknowledge
from projects.models import (
    Escalation,
    EscalationStep,
    Incident,
    MaintenanceWindow,
    Notification,
)
from projects.notifications import outbox
from projects.notifications.escalation import fire, queue_escalations
from projects.notifications.messages import render
from tests.support.alerting import make_channel
from tests.support.outcomes import T0

pytestmark = pytest.mark.django_db

ESCALATED = "incident.escalated"


@pytest.fixture
def incident(make_project):
    """An open incident confirmed at T0 whose opening went to the project's
    channel; steps: after 10 min the on-call channel, after 30 min the
    lead's."""
    project = make_project(name="shop")
    project.channels.add(make_channel(name="team"))
    incident = Incident.objects.create(
        project=project, started_at=T0, confirmed_at=T0, first_error="refused"
    )
    outbox.queue_for_projects([message("incident.opened", incident)])
    incident.on_call = step(project, 10, "on-call", position=1)
    incident.lead = step(project, 30, "lead", position=2)
    return incident


def step(project, minutes: int, channel: str, *, position: int) -> EscalationStep:
    created = EscalationStep.objects.create(
        project=project, delay_minutes=minutes, position=position
    )
    created.channels.add(make_channel(name=channel))
    return created


def message(event: str, incident: Incident) -> outbox.Message:
    return outbox.Message(
        event=event,
        key=outbox.message_key(event, incident.pk),
        payload={"event": event},
        project_id=incident.project_id,
        incident_id=incident.pk,
    )


def at(minutes: float):
    return lambda: T0 + timedelta(minutes=minutes)


def told(event: str) -> list[str]:
    rows = Notification.objects.filter(event=event).order_by("pk")
    return [row.channel.name for row in rows.select_related("channel")]


def test_no_step_fires_before_its_delay(incident):
    assert queue_escalations(now=at(9.99)) == 0

    assert told(ESCALATED) == []
    assert not Escalation.objects.exists()


def test_a_step_fires_once_after_its_delay(incident):
    assert queue_escalations(now=at(10)) == 1
    assert queue_escalations(now=at(11)) == 0

    assert told(ESCALATED) == ["on-call"]
    fired = Escalation.objects.get()
    assert (fired.step, fired.fired_at) == (incident.on_call, at(10)())


def test_later_steps_fire_in_turn_and_late_ones_all_at_once(incident):
    assert queue_escalations(now=at(45)) == 2

    assert sorted(told(ESCALATED)) == ["lead", "on-call"]


def test_an_acknowledged_incident_is_never_escalated(incident, admin_user):
    acknowledge(incident.pk, by=admin_user, at=at(5)())

    assert queue_escalations(now=at(60)) == 0

    assert told(ESCALATED) == []


def test_an_acknowledgement_stops_the_next_steps_and_reaches_the_escalated(
    incident, admin_user
):
    queue_escalations(now=at(10))
    acknowledge(incident.pk, by=admin_user, at=at(15)())

    assert queue_escalations(now=at(60)) == 0

    assert told(ESCALATED) == ["on-call"]
    assert sorted(told("incident.acknowledged")) == ["on-call", "team"]


def test_the_recovery_reaches_every_channel_that_was_told(incident):
    queue_escalations(now=at(10))
    Incident.objects.filter(pk=incident.pk).update(resolved_at=at(20)())
    outbox.queue_for_audience([message("incident.resolved", incident)])

    assert queue_escalations(now=at(60)) == 0

    assert sorted(told("incident.resolved")) == ["on-call", "team"]


def test_a_step_fired_already_is_not_fired_again(incident):
    assert fire(incident, incident.on_call, at(10)()) == 1
    assert fire(incident, incident.on_call, at(10)()) == 0

    assert told(ESCALATED) == ["on-call"]


def test_a_project_under_maintenance_escalates_when_it_ends(incident):
    window = MaintenanceWindow.objects.create(
        name="upgrade", starts_at=at(0)(), ends_at=at(20)(), all_projects=True
    )

    assert queue_escalations(now=at(15)) == 0
    window.delete()
    assert queue_escalations(now=at(20)) == 1


def test_an_incident_whose_opening_is_held_is_not_escalated(incident):
    # The monitor itself is cut off: nobody hears of this outage yet.
    Notification.objects.filter(incident=incident).update(state="held")

    assert queue_escalations(now=at(60)) == 0


def test_certificate_warnings_are_not_escalated(incident):
    Incident.objects.filter(pk=incident.pk).update(kind=Incident.Kind.CERTIFICATE)

    assert queue_escalations(now=at(60)) == 0


def test_the_message_says_nobody_answered_and_offers_the_acknowledge_link(
    incident,
):
    queue_escalations(now=at(10))

    payload = Notification.objects.get(event=ESCALATED).payload
    assert payload["event"] == ESCALATED
    assert payload["escalation"]["delay_minutes"] == 10
    assert "acknowledge" in payload["links"]
    rendered = render(payload)
    assert rendered.subject == "DOWN, nobody has acknowledged: shop"
    assert "Nobody has acknowledged this incident in 10 min." in rendered.text


def test_the_incidents_page_shows_when_each_step_fired(incident, admin_client):
    queue_escalations(now=at(10))

    response = admin_client.get(reverse("incidents:list"))

    assert response.status_code == 200
    page = response.content.decode()
    assert "escalated after 10 min to on-call at" in page
    assert at(10)().strftime("%Y-%m-%d %H:%M") in page
    assert "escalated after 30 min" not in page


def test_the_incidents_page_costs_the_same_queries_for_more_escalations(
    incident, admin_client, make_project, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    queue_escalations(now=at(10))
    with CaptureQueriesContext(connection) as one:
        admin_client.get(reverse("incidents:list"))
    for number in range(3):
        project = make_project(name=f"more {number}")
        more = Incident.objects.create(project=project, started_at=T0, confirmed_at=T0)
        step(project, 10, f"on-call {number}", position=0)
        fire(more, project.escalation_steps.get(), at(10)())

    with django_assert_max_num_queries(len(one)):
        admin_client.get(reverse("incidents:list"))


def test_steps_are_edited_inline_on_the_project_admin(incident, admin_client):
    project = incident.project
    url = reverse("admin:projects_project_change", args=[project.pk])
    assert "Escalation: after so many minutes" in admin_client.get(url).text
    form = {
        "name": project.name,
        "url": project.url,
        "method": "GET",
        "headers": "{}",
        "body": "",
        "expected_status": "200",
        "interval": "5",
        "interval_unit": "minutes",
        "timeout_seconds": "10",
        "enabled": "on",
        "escalation_steps-TOTAL_FORMS": "1",
        "escalation_steps-INITIAL_FORMS": "0",
        "escalation_steps-0-position": "3",
        "escalation_steps-0-delay_minutes": "0",
        "escalation_steps-0-channels": [str(incident.on_call.channels.get().pk)],
    }

    refused = admin_client.post(url, form)
    accepted = admin_client.post(
        url, {**form, "escalation_steps-0-delay_minutes": "60"}
    )

    assert refused.status_code == 200
    assert "Ensure this value is greater than or equal to 1." in refused.text
    assert accepted.status_code == 302
    assert project.escalation_steps.filter(position=3, delay_minutes=60).exists()


def test_escalations_are_scheduled_every_minute():
    from pydoc import locate

    from django_q.models import Schedule

    schedule = Schedule.objects.get(name="queue escalations")

    assert (schedule.schedule_type, schedule.minutes) == (Schedule.MINUTES, 1)
    assert locate(schedule.func) is queue_escalations
