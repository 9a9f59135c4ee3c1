"""Project changes reach a running poller once they are committed.

The receivers are checked one by one through the on_commit callbacks they
register; one end-to-end test drives the whole path: admin form ->
post_save -> on_commit -> control client -> control endpoint ->
coordinator -> poll -> PollResult row.
"""

from __future__ import annotations

import logging
import time

import pytest

from django.db import transaction
from django.urls import reverse

from polling.receivers import MAX_SYNC_CALLS, sync_projects
from projects.admin import set_enabled
from projects.models import PollResult, Project
from projects.teams.audit import Actor
from tests.factories import project_form, quick_projects
from tests.waiting import wait_until

ADD_URL = reverse("admin:projects_project_add")
LIST_URL = reverse("admin:projects_project_changelist")


@pytest.fixture(autouse=True)
def short_intervals(settings):
    settings.MIN_POLL_INTERVAL = 1


def calls(callbacks) -> list[tuple[str, tuple]]:
    """What each on_commit callback will call: (function name, arguments)."""
    return [(callback.func.__name__, callback.args) for callback in callbacks]


def test_a_save_asks_the_poller_to_sync_once_committed(
    make_project, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        project = make_project()
        project.save()
    assert calls(callbacks) == [
        ("sync_project", (project.pk,)),
        ("sync_project", (project.pk,)),
    ]


def test_a_rolled_back_save_tells_the_poller_nothing(
    make_project, django_capture_on_commit_callbacks
):
    project = make_project()

    def save_then_fail() -> None:
        with transaction.atomic():
            project.save()
            raise RuntimeError("roll back")

    with (
        django_capture_on_commit_callbacks() as callbacks,
        pytest.raises(RuntimeError),
    ):
        save_then_fail()
    assert callbacks == []


def test_a_delete_asks_the_poller_to_stop(
    make_project, django_capture_on_commit_callbacks
):
    project = make_project()
    project_id = project.pk
    with django_capture_on_commit_callbacks() as callbacks:
        project.delete()
    assert calls(callbacks) == [("remove_project", (project_id,))]


def test_bulk_changes_sync_every_changed_project(
    make_project, django_capture_on_commit_callbacks
):
    projects = [make_project() for _ in range(3)]
    with django_capture_on_commit_callbacks() as callbacks:
        set_enabled(
            Project.objects.all(), enabled=False, actor=Actor("test", via="admin")
        )
    assert calls(callbacks) == [
        ("sync_projects", (sorted(p.pk for p in projects),)),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_few_changes_are_synced_one_by_one(running_poller, target_server):
    projects = quick_projects(target_server, 3, interval=3600)
    sync_projects([p.pk for p in projects])
    assert running_poller.coordinator.status().active_projects == 3


@pytest.mark.django_db(transaction=True)
def test_many_changes_make_one_full_reload(running_poller, target_server):
    quick_projects(target_server, MAX_SYNC_CALLS + 1, interval=3600)
    before = running_poller.coordinator.status().last_reload_at
    sync_projects([10**9 + i for i in range(MAX_SYNC_CALLS + 1)])
    status = running_poller.coordinator.status()
    assert status.last_reload_at > before
    assert status.active_projects == MAX_SYNC_CALLS + 1


def test_admin_changes_reach_the_poller_end_to_end(
    admin_client, running_poller, target_server, caplog
):
    poller = running_poller.coordinator
    admin_client.post(ADD_URL, project_form(target_server, "/old"))
    project = Project.objects.get(name="api")
    wait_until(lambda: PollResult.objects.filter(project=project).exists(), timeout=2)

    change_url = reverse("admin:projects_project_change", args=[project.pk])
    admin_client.post(change_url, project_form(target_server, "/new"))
    assert poller.target(project.pk).url == target_server.url("/new")
    wait_until(lambda: target_server.count("/new") >= 1, timeout=2)

    disabled = project_form(target_server, "/new")
    del disabled["enabled"]
    admin_client.post(change_url, disabled)
    assert poller.target(project.pk) is None

    admin_client.post(change_url, project_form(target_server, "/new"))
    with caplog.at_level(logging.WARNING):
        delete_url = reverse("admin:projects_project_delete", args=[project.pk])
        admin_client.post(delete_url, {"post": "yes"})
    assert Project.objects.exists() is False
    assert poller.target(project.pk) is None
    assert poller.status().active_projects == 0
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_bulk_actions_reach_the_poller(admin_client, running_poller, target_server):
    poller = running_poller.coordinator
    ids = [p.pk for p in quick_projects(target_server, 3, timeout=1, enabled=False)]
    admin_client.post(LIST_URL, {"action": "enable_projects", "_selected_action": ids})
    assert poller.status().active_projects == 3
    admin_client.post(LIST_URL, {"action": "disable_projects", "_selected_action": ids})
    assert poller.status().active_projects == 0


@pytest.mark.django_db(transaction=True)
def test_with_the_poller_down_an_admin_save_is_quick_and_warns_once(
    admin_client, target_server, caplog
):
    with caplog.at_level(logging.WARNING):
        started = time.monotonic()
        response = admin_client.post(ADD_URL, project_form(target_server))
        elapsed = time.monotonic() - started
    assert response.status_code == 302
    assert Project.objects.filter(name="api").exists() is True
    assert elapsed < 1.5
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "the poller is not running or not reachable" in warnings[0].getMessage()
