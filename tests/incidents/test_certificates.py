"""Certificate incidents: one per certificate that expires soon, resolved
when a renewed certificate is seen, told through the outbox."""

from __future__ import annotations

from datetime import timedelta

import pytest

from projects.incidents.certificates import Sighting, expiry_text, record_certificates
from projects.models import Incident, Notification, NotificationChannel
from tests.support.outcomes import T0

pytestmark = pytest.mark.django_db

SOON = T0 + timedelta(days=5)
RENEWED = T0 + timedelta(days=90)


@pytest.fixture
def project(make_project):
    channel = NotificationChannel.objects.create(
        name="ops", kind="webhook", url="http://127.0.0.1:9/hook"
    )
    project = make_project(url="https://127.0.0.1:9/")
    project.channels.add(channel)
    return project


def seen(project, expires_at, *, after=timedelta(0)):
    return record_certificates([Sighting(project.pk, T0 + after, expires_at)])


def certificate_incidents(project):
    return Incident.objects.filter(project=project, kind="certificate")


def events():
    return list(Notification.objects.order_by("id").values_list("event", flat=True))


def test_a_certificate_expiring_in_5_days_opens_one_incident_and_one_notification(
    project,
):
    for minute in range(3):
        seen(project, SOON, after=timedelta(minutes=minute))

    [incident] = certificate_incidents(project)
    assert incident.resolved_at is None
    assert (
        incident.first_error == "certificate expires in 5 days (2026-11-27 12:00 UTC)"
    )
    assert incident.certificate_expires_at == SOON
    assert events() == ["incident.opened"]
    payload = Notification.objects.get().payload
    assert payload["incident"]["kind"] == "certificate"
    assert payload["message"].startswith("The TLS certificate expires in 5 days")


def test_a_renewed_certificate_resolves_it(project):
    seen(project, SOON)

    seen(project, RENEWED, after=timedelta(hours=1))

    [incident] = certificate_incidents(project)
    assert incident.resolved_at == T0 + timedelta(hours=1)
    assert events() == ["incident.opened", "incident.resolved"]


def test_an_old_certificate_seen_again_is_not_warned_of_twice(project):
    seen(project, SOON)
    seen(project, RENEWED, after=timedelta(minutes=1))

    seen(project, SOON, after=timedelta(minutes=2))  # a load balancer flips

    assert certificate_incidents(project).count() == 1
    assert events() == ["incident.opened", "incident.resolved"]


def test_a_new_certificate_that_also_expires_soon_gets_its_own_incident(project):
    seen(project, SOON)

    seen(project, SOON + timedelta(days=2), after=timedelta(minutes=1))

    first, second = certificate_incidents(project).order_by("id")
    assert first.resolved_at is not None
    assert second.resolved_at is None
    assert events() == ["incident.opened", "incident.resolved", "incident.opened"]


@pytest.mark.parametrize(
    ("warning_days", "expires_in"), [(14, timedelta(days=15)), (0, timedelta(days=1))]
)
def test_no_incident_outside_the_warning_period_or_with_it_off(
    project, warning_days, expires_in
):
    project.tls_expiry_warning_days = warning_days
    project.save()

    seen(project, T0 + expires_in)

    assert certificate_incidents(project).count() == 0
    assert events() == []


def test_the_latest_sighting_of_a_batch_counts(project):
    record_certificates(
        [
            Sighting(project.pk, T0 + timedelta(minutes=1), RENEWED),
            Sighting(project.pk, T0, SOON),
        ]
    )

    assert certificate_incidents(project).count() == 0


def test_a_certificate_incident_is_apart_from_a_downtime_incident(project):
    Incident.objects.create(
        project=project, kind="downtime", started_at=T0, confirmed_at=T0
    )

    seen(project, SOON)

    assert Incident.objects.filter(project=project, resolved_at=None).count() == 2


@pytest.mark.parametrize(
    ("left", "text"),
    [
        (timedelta(days=5), "certificate expires in 5 days (2026-11-27 12:00 UTC)"),
        (
            timedelta(days=1, hours=2),
            "certificate expires in 1 day (2026-11-23 14:00 UTC)",
        ),
        (timedelta(hours=7), "certificate expires in 7 h (2026-11-22 19:00 UTC)"),
        (-timedelta(days=2), "certificate expired on 2026-11-20 12:00 UTC"),
    ],
)
def test_the_expiry_reads_plainly(left, text):
    assert expiry_text(T0 + left, T0) == text


def test_the_dashboard_lists_certificates_expiring_soon(admin_client, project):
    seen(project, SOON)

    page = admin_client.get("/").content.decode()

    assert "Certificates expiring soon" in page
    assert project.name in page
    assert "2026-11-27" in page


def test_the_message_says_certificate_not_down(project):
    from projects.notifications.messages import render

    seen(project, SOON)

    rendered = render(Notification.objects.get().payload)
    assert rendered.subject == f"Certificate expiring: {project.name}"
    assert "Warning: certificate expires in 5 days" in rendered.text
    assert "Down since" not in rendered.text


def test_a_project_moved_from_https_to_http_has_its_incident_resolved(project):
    seen(project, SOON)

    project.url = "http://127.0.0.1:9/"
    project.name = "plain site"
    project.save()

    [incident] = certificate_incidents(project)
    assert incident.resolved_at is not None
    assert events() == ["incident.opened", "incident.resolved"]
    message = Notification.objects.order_by("id").last().payload["message"]
    assert message == (
        "plain site is no longer polled over https: its certificate is not "
        "watched any more."
    )


def test_a_project_still_on_https_keeps_its_incident(project):
    seen(project, SOON)

    project.url = "https://127.0.0.1:9/moved"
    project.save()

    assert certificate_incidents(project).get().resolved_at is None
    assert events() == ["incident.opened"]


def test_a_later_save_over_http_tells_nobody_again(project):
    seen(project, SOON)
    project.url = "http://127.0.0.1:9/"
    project.save()

    project.save()

    assert events() == ["incident.opened", "incident.resolved"]
