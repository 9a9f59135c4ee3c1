"""A project deleted while the result writer saves for it (PostgreSQL).

The writer locks its projects' rows and inserts incidents that refer to
them; a delete that collected the project's incidents before that insert
failed at commit ("still referenced from projects_incident"), seen as a
flaky admin delete in tests/poller/test_receivers.py. Deletes lock the projects
first now (projects/models/deletion.py).
"""

from __future__ import annotations

import threading
import time

import pytest

from django.db import connection, connections, transaction
from django.utils import timezone

from projects.incidents.states import lock_projects
from projects.models import Incident, Project
from tests.support.fleet import needs_postgresql

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgresql]

WAIT_SECONDS = 10


def waiting_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid]
        )
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def wait_until_blocked(pid: int) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not waiting_on_a_lock(pid):
        assert time.monotonic() < deadline, "the delete never waited for the writer"
        time.sleep(0.01)


class Deleter(threading.Thread):
    """Deletes in a thread of its own (its own connection), as a web
    request would, and keeps what went wrong."""

    def __init__(self, delete) -> None:
        super().__init__(daemon=True)
        self._delete = delete
        self.pid: int | None = None
        self.started_work = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                self.pid = cursor.fetchone()[0]
            self.started_work.set()
            self._delete()
        except BaseException as error:  # reported by the test
            self.error = error
        finally:
            connections.close_all()


def writer_inserts_an_incident_while(deleter: Deleter, project: Project) -> None:
    """What the writer does: lock the project, let the delete start and
    block, then insert an incident for it and commit."""
    with transaction.atomic(), connection.cursor() as cursor:
        assert set(lock_projects(cursor, [project.pk])) == {project.pk}
        deleter.start()
        assert deleter.started_work.wait(WAIT_SECONDS)
        wait_until_blocked(deleter.pid)
        Incident.objects.create(
            project=project,
            started_at=timezone.now(),
            confirmed_at=timezone.now(),
            first_error="connection refused",
        )
    deleter.join(WAIT_SECONDS)
    assert not deleter.is_alive()


@pytest.mark.parametrize("how", ["instance", "queryset"])
def test_a_delete_waits_for_the_writer_and_takes_what_it_wrote(how):
    project = Project.objects.create(name="racing", url="http://127.0.0.1:9/")

    def delete() -> None:
        if how == "instance":
            Project.objects.get(pk=project.pk).delete()
        else:
            Project.objects.filter(name="racing").delete()

    deleter = Deleter(delete)
    writer_inserts_an_incident_while(deleter, project)

    assert deleter.error is None
    assert Project.objects.filter(pk=project.pk).exists() is False
    assert Incident.objects.filter(project_id=project.pk).exists() is False


def test_a_writer_that_comes_second_finds_the_project_gone():
    project = Project.objects.create(name="gone", url="http://127.0.0.1:9/")
    with transaction.atomic():
        Project.objects.filter(pk=project.pk).delete()
    with transaction.atomic(), connection.cursor() as cursor:
        assert lock_projects(cursor, [project.pk]) == {}
