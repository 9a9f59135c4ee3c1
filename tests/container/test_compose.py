"""The image and compose.yaml, built and run with podman: PostgreSQL,
migrate, web, worker and tasks; a project added through the API is polled
against a target container, and `podman stop` of the worker saves every
result.

Slow: about 5 minutes cold (a Debian base from its packages, two images),
one to two warm. It runs once per CI run, on the PostgreSQL pass (compose
uses its own PostgreSQL whatever the suite runs on), and skips, saying why,
where the tools are missing or podman cannot run containers
(tests/support/podman.py).
Every address it uses is loopback or the stack's own container network.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

import pytest

from tests.support.compose_stack import start_stack
from tests.support.podman import (
    INSTALL_HINT,
    ROOT,
    PodmanUnusable,
    base_image,
    build_image,
    missing_tools,
    usable_podman,
)
from tests.support.waiting import wait_until

APP_IMAGE = "localhost/uptime-monitor:container-test"
POSTGRES_IMAGE = "localhost/uptime-monitor-test-postgres:container-test"
# The Procfile's stop budget for the poller (POLLER_STOP_TIMEOUT is 60).
WORKER_STOP_SECONDS = 90
POLLS_BEFORE_STOP = 5

pytestmark = [
    pytest.mark.slow,
    pytest.mark.container,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(
        not os.environ.get("DATABASE_URL", "").startswith("postgres"),
        reason="runs once per CI run: on the PostgreSQL pass (DATABASE_URL=postgres://...)",
    ),
]


@pytest.fixture
def podman_and_images(tmp_path_factory):
    missing = missing_tools()
    if missing:
        pytest.skip(f"needs {', '.join(missing)} ({INSTALL_HINT})")
    base = base_image()
    try:
        podman = usable_podman(base, tmp_path_factory.mktemp("podman"))
    except PodmanUnusable as error:
        pytest.skip(str(error))
    build_image(podman, APP_IMAGE, ROOT / "Containerfile", ROOT, base)
    postgres = ROOT / "tests" / "container" / "postgres.Containerfile"
    build_image(podman, POSTGRES_IMAGE, postgres, postgres.parent, base)
    return podman


@pytest.fixture
def stack(podman_and_images, tmp_path_factory):
    started = start_stack(
        podman_and_images,
        tmp_path_factory.mktemp("compose"),
        app_image=APP_IMAGE,
        postgres_image=POSTGRES_IMAGE,
    )
    yield started
    started.down()


# One test for the one stack: the suite's workers take tests one by one,
# so each test of its own would start a stack of its own.
def test_compose_up_serves_polls_and_saves_every_result_through_podman_stop(stack):
    migrate_printed_the_admin_password_once(stack)
    each_serving_role_reports_healthy(stack)
    a_project_added_through_the_api_is_polled_and_saved_through_podman_stop(stack)
    a_dump_of_the_database_volume_restores_whole(stack)


def migrate_printed_the_admin_password_once(stack) -> None:
    assert "Created admin user 'admin' with password: " in stack.logs("migrate")


def each_serving_role_reports_healthy(stack) -> None:
    wait_until(lambda: stack.healthy("tasks"), timeout=60)
    assert stack.healthy("web")
    assert stack.healthy("worker")


def a_project_added_through_the_api_is_polled_and_saved_through_podman_stop(
    stack,
) -> None:
    key = api_key(stack)
    project = post_json(
        stack,
        "/api/v1/projects/",
        key,
        {
            "name": "target",
            "url": "http://target:8080/",
            "interval": 1,
            "interval_unit": "seconds",
            "timeout_seconds": 1,
        },
    )
    try:
        wait_until(
            lambda: stored_polls(stack, project["id"]) >= POLLS_BEFORE_STOP,
            timeout=60,
        )
    except AssertionError:
        # Seen once, not reproduced since: what the web (its call to the
        # poller) and the worker (the project's sync) said, for the report.
        for service in ("web", "worker"):
            print(f"--- {service}:\n{stack.logs(service)[-4000:]}")
        raise

    stack.podman.run(
        "stop",
        f"--time={WORKER_STOP_SECONDS}",
        stack.container("worker"),
        timeout=WORKER_STOP_SECONDS + 30,
    )

    # SIGTERM reached runpoller (SIGKILL would be 137) and it saved every
    # poll the target answered.
    stopped = stack.state("worker")
    assert stopped["ExitCode"] == 0, stack.logs("worker")[-3000:]
    requests_served = stack.logs("target").count('"GET / HTTP/1.1" 200')
    answered = stored_polls(stack, project["id"], status_code=200)
    assert answered == requests_served >= POLLS_BEFORE_STOP


def a_dump_of_the_database_volume_restores_whole(stack) -> None:
    """The backup of docs/installation.md: pg_dump from the db container,
    pg_restore into an empty database."""
    stack.exec("db", "createdb", "--username=uptime", "restored")
    dump_and_restore = (
        "pg_dump --username=uptime --format=custom uptime"
        " | pg_restore --username=uptime --dbname=restored"
    )
    stack.exec("db", "sh", "-c", dump_and_restore)

    count = "SELECT count(*) FROM django_migrations"
    assert stack.sql(count, database="restored") == stack.sql(count) != "0"


def api_key(stack) -> str:
    """A write key from createapikey, run through the image's entrypoint as
    any manage.py command is."""
    made = stack.exec(
        "web",
        "/app/container/entrypoint.sh",
        "createapikey",
        "container test",
        "--scope=write",
    )
    return made.stdout.strip().splitlines()[-1]


def post_json(stack, path: str, key: str, body: dict) -> dict:
    request = urllib.request.Request(
        f"http://{stack.web_address()}{path}",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201
            return json.load(response)
    except urllib.error.HTTPError as error:
        pytest.fail(f"POST {path}: {error.code} {error.read()[:2000]!r}")


def stored_polls(stack, project_id: int, *, status_code: int | None = None) -> int:
    """Stored results of the project; with `status_code`, those answered
    with it (a poll that failed before reaching the target, on a name
    lookup say, is stored too, but the target never counted it)."""
    query = f"SELECT count(*) FROM projects_pollresult WHERE project_id = {project_id}"
    if status_code is not None:
        query += f" AND status_code = {status_code}"
    return int(stack.sql(query))
