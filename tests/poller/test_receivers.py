"""Project changes reach a running poller once they are committed.

The receivers are checked one by one through the on_commit callbacks they
register; one end-to-end test drives the whole path: admin form ->
post_save -> on_commit -> control client -> control endpoint ->
coordinator -> poll -> PollResult row.
"""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO

import pytest

from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from polling import client
from polling.receivers import MAX_SYNC_IDS, SENDER, sync_projects
from projects.admin.project import set_enabled
from projects.models import PollResult, Project, Team
from projects.teams.audit import Actor
from tests.support.factories import project_form, quick_projects
from tests.support.waiting import wait_until

ADD_URL = reverse("admin:projects_project_add")
LIST_URL = reverse("admin:projects_project_changelist")


@pytest.fixture(autouse=True)
def short_intervals(settings):
    settings.MIN_POLL_INTERVAL = 1


def unsignalled_projects(count: int) -> list[Project]:
    """Projects made with no post_save: the test's transaction (the whole
    test, in a TestCase) has no batch open yet."""
    return Project.objects.bulk_create(
        Project(name=f"quiet {n}", url="http://127.0.0.1:9/") for n in range(count)
    )


def batches(callbacks) -> list[list[int]]:
    """The ids each on_commit callback will hand to the pollers."""
    return [sorted(callback.ids) for callback in callbacks]


def test_a_transactions_saves_reach_the_poller_as_one_batch_once_committed(
    make_project, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks, transaction.atomic():
        first = make_project()
        first.save()
        second = make_project()
    assert batches(callbacks) == [sorted([first.pk, second.pk])]


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


def test_a_save_after_a_rolled_back_savepoint_still_reaches_the_poller(
    db, django_capture_on_commit_callbacks
):
    first, second = unsignalled_projects(2)

    def save_then_fail() -> None:
        with transaction.atomic():
            first.save()  # its batch goes with the savepoint
            raise RuntimeError("roll back the savepoint")

    with django_capture_on_commit_callbacks() as callbacks, transaction.atomic():
        with pytest.raises(RuntimeError):
            save_then_fail()
        second.save()
    assert batches(callbacks) == [[second.pk]]


def test_a_delete_is_synced_too(db, django_capture_on_commit_callbacks):
    [project] = unsignalled_projects(1)
    project_id = project.pk
    with django_capture_on_commit_callbacks() as callbacks:
        project.delete()
    assert batches(callbacks) == [[project_id]]


def test_bulk_changes_sync_every_changed_project(
    db, django_capture_on_commit_callbacks
):
    projects = unsignalled_projects(3)
    with django_capture_on_commit_callbacks() as callbacks:
        set_enabled(
            Project.objects.all(), enabled=False, actor=Actor("test", via="admin")
        )
    assert batches(callbacks) == [sorted(p.pk for p in projects)]


@pytest.mark.django_db(transaction=True)
def test_a_few_changes_are_synced_in_one_call(running_poller, target_server):
    projects = quick_projects(target_server, 3, interval=3600)
    sync_projects([p.pk for p in projects])
    assert running_poller.coordinator.status().active_projects == 3


@pytest.mark.django_db(transaction=True)
def test_many_changes_make_one_full_reload(running_poller, target_server):
    quick_projects(target_server, MAX_SYNC_IDS + 1, interval=3600)
    before = running_poller.coordinator.status().last_reload_at
    sync_projects([10**9 + i for i in range(MAX_SYNC_IDS + 1)])
    status = running_poller.coordinator.status()
    assert status.last_reload_at > before
    assert status.active_projects == MAX_SYNC_IDS + 1


def control_calls(caplog) -> list[str]:
    """The requests the real control endpoint answered (its access log)."""
    return [
        r.getMessage().split('"')[1]
        for r in caplog.records
        if r.name == "polling.control" and r.getMessage().startswith("control: ")
    ]


def test_an_import_of_many_projects_is_one_call_to_the_poller(
    running_poller, target_server, tmp_path, caplog
):
    entries = "".join(
        f"- name: imported {n}\n  url: {target_server.url(f'/i{n}')}\n"
        for n in range(30)
    )
    path = tmp_path / "projects.yaml"
    path.write_text(f"version: 1\nprojects:\n{entries}")
    with caplog.at_level(logging.DEBUG, logger="polling.control"):
        call_command("importprojects", str(path), stdout=StringIO())
        assert SENDER.flush() is True
    assert control_calls(caplog) == ["POST /projects/sync HTTP/1.1"]
    assert running_poller.coordinator.status().active_projects == 30


def test_a_change_of_a_teams_trust_reaches_the_poller(
    running_poller, target_server, settings
):
    settings.POLL_BLOCKED_NETWORKS = ["127.0.0.0/8"]
    team = Team.objects.create(name="agency", slug="agency", trusted=True)
    [project] = quick_projects(target_server, 1, interval=3600)
    Project.objects.filter(pk=project.pk).update(team=team)
    running_poller.coordinator.sync_project(project.pk)
    assert running_poller.coordinator.target(project.pk).trusted is True

    team.trusted = False
    team.save()
    assert SENDER.flush() is True
    assert running_poller.coordinator.target(project.pk).trusted is False


def test_a_team_saved_with_its_trust_unchanged_tells_the_poller_nothing(
    db, django_capture_on_commit_callbacks
):
    team = Team.objects.create(name="agency", slug="agency")
    unsignalled_projects(2)
    Project.objects.update(team=team)
    with django_capture_on_commit_callbacks() as callbacks:
        team.name = "agency two"
        team.save()
    assert callbacks == []


def test_admin_changes_reach_the_poller_end_to_end(
    admin_client, running_poller, target_server, caplog
):
    poller = running_poller.coordinator
    admin_client.post(ADD_URL, project_form(target_server, "/old"))
    project = Project.objects.get(name="api")
    wait_until(lambda: PollResult.objects.filter(project=project).exists())

    change_url = reverse("admin:projects_project_change", args=[project.pk])
    admin_client.post(change_url, project_form(target_server, "/new"))
    assert SENDER.flush() is True
    assert poller.target(project.pk).url == target_server.url("/new")
    wait_until(lambda: target_server.count("/new") >= 1)

    disabled = project_form(target_server, "/new")
    del disabled["enabled"]
    admin_client.post(change_url, disabled)
    assert SENDER.flush() is True
    assert poller.target(project.pk) is None

    admin_client.post(change_url, project_form(target_server, "/new"))
    with caplog.at_level(logging.WARNING):
        delete_url = reverse("admin:projects_project_delete", args=[project.pk])
        admin_client.post(delete_url, {"post": "yes"})
        assert SENDER.flush() is True
    assert Project.objects.exists() is False
    assert poller.target(project.pk) is None
    assert poller.status().active_projects == 0
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_bulk_actions_reach_the_poller(admin_client, running_poller, target_server):
    poller = running_poller.coordinator
    ids = [p.pk for p in quick_projects(target_server, 3, timeout=1, enabled=False)]
    admin_client.post(LIST_URL, {"action": "enable_projects", "_selected_action": ids})
    assert SENDER.flush() is True
    assert poller.status().active_projects == 3
    admin_client.post(LIST_URL, {"action": "disable_projects", "_selected_action": ids})
    assert SENDER.flush() is True
    assert poller.status().active_projects == 0


@pytest.mark.django_db(transaction=True)
def test_an_admin_save_does_not_wait_for_a_hanging_poller(
    admin_client, target_server, settings, patient_control_client
):
    with HangingEndpoint() as poller:
        settings.POLLER_CONTROL_URL = poller.url
        response = admin_client.post(ADD_URL, project_form(target_server))
        assert response.status_code == 302
        # Answered while the call to the poller is still out.
        assert SENDER.flush(timeout=0) is False
        poller.answer.set()
        assert SENDER.flush() is True
    assert poller.requests == ["POST /projects/sync"]


@pytest.mark.django_db(transaction=True)
def test_with_the_poller_down_an_admin_save_warns_once(
    admin_client, target_server, caplog
):
    with caplog.at_level(logging.WARNING):
        response = admin_client.post(ADD_URL, project_form(target_server))
        assert SENDER.flush() is True
    assert response.status_code == 302
    assert Project.objects.filter(name="api").exists() is True
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "the poller is not running or not reachable" in warnings[0].getMessage()


@pytest.fixture
def patient_control_client(monkeypatch):
    """The control client waits up to 30 s, so a call to a hanging poller
    is still out for as long as the test holds it."""
    monkeypatch.setattr(client, "TIMEOUT_SECONDS", 30)
    client._http.cache_clear()
    yield
    client._http.cache_clear()


class HangingEndpoint:
    """A control endpoint that holds every request until `answer` is set."""

    def __enter__(self) -> HangingEndpoint:
        self.answer = threading.Event()
        self.requests: list[str] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                endpoint.requests.append(f"POST {self.path}")
                self.rfile.read(int(self.headers["Content-Length"]))
                endpoint.answer.wait(timeout=30)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.answer.set()
        self.server.shutdown()
        self.server.server_close()
