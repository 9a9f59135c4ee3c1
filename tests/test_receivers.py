"""Admin changes reach a running poller within a second, end to end:
admin form -> post_save -> on_commit -> control client -> control
endpoint -> coordinator -> poll -> PollResult row."""

from __future__ import annotations

import logging
import time

import pytest

from django.urls import reverse

from projects.models import PollResult, Project
from tests.factories import quick_projects
from tests.waiting import wait_until

ADD_URL = reverse("admin:projects_project_add")
LIST_URL = reverse("admin:projects_project_changelist")


@pytest.fixture(autouse=True)
def short_intervals(settings):
    settings.MIN_POLL_INTERVAL = 1


def form(server, path: str = "/ok", **changes) -> dict:
    return {
        "name": "api",
        "url": server.url(path),
        "method": "GET",
        "headers": "{}",
        "body": "",
        "expected_status": "200",
        "interval": "1",
        "interval_unit": "seconds",
        "timeout_seconds": "1",
        "enabled": "on",
        **changes,
    }


def polls_stop(project_id: int) -> None:
    """Assert no new rows arrive for two seconds, once a poll already in
    flight has had time to land."""
    time.sleep(0.5)
    before = PollResult.objects.filter(project_id=project_id).count()
    time.sleep(2)
    assert PollResult.objects.filter(project_id=project_id).count() == before


def add_through_admin(admin_client, server, path="/ok") -> Project:
    response = admin_client.post(ADD_URL, form(server, path))
    assert response.status_code == 302
    return Project.objects.get(name="api")


def test_a_project_added_in_the_admin_is_polled_within_two_seconds(
    admin_client, running_poller, target_server
):
    project = add_through_admin(admin_client, target_server)
    wait_until(lambda: PollResult.objects.filter(project=project).exists(), timeout=2)


def test_a_changed_url_is_used_by_the_next_poll(
    admin_client, running_poller, target_server
):
    project = add_through_admin(admin_client, target_server, "/old")
    wait_until(lambda: target_server.count("/old") >= 1, timeout=2)
    change_url = reverse("admin:projects_project_change", args=[project.pk])
    admin_client.post(change_url, form(target_server, "/new"))
    wait_until(lambda: target_server.count("/new") >= 1, timeout=2)
    old_polls = target_server.count("/old")
    time.sleep(1.5)
    assert target_server.count("/old") <= old_polls + 1  # at most one in flight


def test_a_disabled_project_stops_being_polled(
    admin_client, running_poller, target_server
):
    project = add_through_admin(admin_client, target_server)
    wait_until(lambda: PollResult.objects.filter(project=project).exists(), timeout=2)
    change_url = reverse("admin:projects_project_change", args=[project.pk])
    data = form(target_server)
    del data["enabled"]
    admin_client.post(change_url, data)
    polls_stop(project.pk)
    assert running_poller.coordinator.status()["active_projects"] == 0


def test_a_deleted_project_stops_quietly(
    admin_client, running_poller, target_server, caplog
):
    project = add_through_admin(admin_client, target_server)
    wait_until(lambda: target_server.count("/ok") >= 1, timeout=2)
    delete_url = reverse("admin:projects_project_delete", args=[project.pk])
    with caplog.at_level(logging.WARNING):
        admin_client.post(delete_url, {"post": "yes"})
        assert Project.objects.exists() is False
        requests = target_server.count("/ok")
        time.sleep(2.5)
    assert target_server.count("/ok") <= requests + 1  # one may be in flight
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert running_poller.coordinator.status()["active_projects"] == 0


def test_bulk_actions_reach_the_poller(admin_client, running_poller, target_server):
    ids = [p.pk for p in quick_projects(target_server, 3, timeout=1, enabled=False)]
    admin_client.post(LIST_URL, {"action": "enable_projects", "_selected_action": ids})
    wait_until(
        lambda: (
            PollResult.objects.filter(project_id__in=ids)
            .values("project_id")
            .distinct()
            .count()
            == 3
        ),
        timeout=2,
    )
    admin_client.post(LIST_URL, {"action": "disable_projects", "_selected_action": ids})
    time.sleep(0.5)
    before = PollResult.objects.count()
    time.sleep(2)
    assert PollResult.objects.count() == before
    assert running_poller.coordinator.status()["active_projects"] == 0


@pytest.mark.django_db(transaction=True)
def test_with_the_poller_down_an_admin_save_is_quick_and_warns_once(
    admin_client, target_server, caplog
):
    with caplog.at_level(logging.WARNING):
        started = time.monotonic()
        response = admin_client.post(ADD_URL, form(target_server))
        elapsed = time.monotonic() - started
    assert response.status_code == 302
    assert Project.objects.filter(name="api").exists() is True
    assert elapsed < 1.5
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "the poller is not running or not reachable" in warnings[0].getMessage()
