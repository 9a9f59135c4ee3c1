"""The project page's delivery log section."""

from __future__ import annotations

from django.urls import reverse

from projects.dashboard.queries.deliveries import recent_deliveries
from projects.notifications.config import DeliveryConfig
from projects.notifications.delivery import deliver_due


def test_the_project_page_lists_its_delivery_attempts(
    admin_client,
    make_channel,
    queue_notification,
    webhook_receiver,
    clock,
    make_project,
):
    project = make_project(name="shop")
    channel = make_channel(name="ops hook", url=webhook_receiver.url())
    webhook_receiver.default_status = 503
    queue_notification(channel, project=project)
    queue_notification(channel, project=make_project(name="other"))
    deliver_due(now=clock.now, config=DeliveryConfig(digest_seconds=0))

    page = admin_client.get(reverse("dashboard:project", args=[project.pk]))

    attempts = page.context["deliveries"]
    assert len(attempts) == 1
    html = page.content.decode()
    assert "ops hook" in html
    assert "HTTP 503" in html
    assert "Failed, will retry" in html


def test_digests_covering_the_project_are_listed(
    make_channel, queue_notification, webhook_receiver, clock, make_project
):
    project = make_project()
    channel = make_channel(url=webhook_receiver.url())
    queue_notification(channel, project=project)
    for _ in range(6):
        queue_notification(channel)
    clock.advance(30)
    deliver_due(now=clock.now, config=DeliveryConfig(digest_seconds=30))

    (attempt,) = recent_deliveries(project.pk)
    assert attempt.notification.event == "digest"


def test_a_project_without_notifications_says_so(admin_client, make_project):
    project = make_project()

    page = admin_client.get(reverse("dashboard:project", args=[project.pk]))

    assert "No notifications about this project yet." in page.content.decode()
