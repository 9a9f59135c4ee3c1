from __future__ import annotations

import pytest

from django.urls import reverse
from django.utils import timezone

from polling.health import Level, concurrency_level, task_queue_level
from projects.models import PollerNode

URL = reverse("polling:poller")


@pytest.mark.parametrize(
    ("in_flight", "limit", "level"),
    [
        (0, 100, Level.HEALTHY),
        (49, 100, Level.HEALTHY),
        (50, 100, Level.WARNING),
        (90, 100, Level.WARNING),
        (91, 100, Level.CRITICAL),
        (100, 100, Level.CRITICAL),
    ],
)
def test_concurrency_levels(in_flight, limit, level):
    assert concurrency_level(in_flight, limit) is level


@pytest.mark.parametrize(
    ("depth", "level"),
    [
        (0, Level.HEALTHY),
        (99, Level.HEALTHY),
        (100, Level.WARNING),
        (500, Level.WARNING),
        (501, Level.CRITICAL),
    ],
)
def test_task_queue_levels(depth, level):
    assert task_queue_level(depth) is level


def test_it_needs_a_login(client, db):
    response = client.get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


def test_it_shows_a_running_pollers_status(admin_client, running_poller):
    running_poller.coordinator.scale_to(40)
    page = admin_client.get(URL).content.decode()
    assert "Projects polled" in page
    assert "0 of 40" in page
    assert "level-healthy" in page
    assert "level-critical" not in page
    assert '<meta http-equiv="refresh" content="30">' in page


def test_it_says_plainly_when_the_poller_is_not_running(admin_client, settings):
    settings.POLLER_CONTROL_URL = "http://127.0.0.1:9"
    response = admin_client.get(URL)
    assert response.status_code == 200
    page = response.content.decode()
    assert "The poller is not running, or this site cannot reach it" in page
    assert "python manage.py runpoller" in page
    assert "http://127.0.0.1:9" in page


def test_with_several_pollers_it_shows_each_ones_status(
    admin_client, running_poller, settings
):
    # Several pollers bind free ports; the page asks each at the control
    # URL it registered, not at POLLER_CONTROL_URL.
    settings.POLLER_CONTROL_URL = "http://127.0.0.1:9"
    now = timezone.now()
    for name in ("host-a:101", "host-b:102"):
        PollerNode.objects.create(
            name=name,
            host=name.split(":")[0],
            pid=int(name.split(":")[1]),
            control_url=running_poller.url,
            started_at=now,
            last_seen_at=now,
        )
    page = admin_client.get(URL).content.decode()
    assert "not running" not in page
    assert "Health · host-a:101" in page
    assert "Numbers · host-b:102" in page


def test_it_shows_when_each_housekeeping_job_last_ran(admin_client):
    from projects.housekeeping.retention import Pruned
    from projects.housekeeping.runs import run_recorded
    from projects.models import HousekeepingRun

    pruned = Pruned(None, 12345, 3, True)
    run_recorded(HousekeepingRun.Job.PRUNE_RESULTS, lambda: pruned)

    page = admin_client.get(URL).content.decode()

    section = page[page.index('id="housekeeping"') :]
    assert "Prune old polls" in section
    assert "12,345" in section
    assert "Never ran. Is the tasks process running?" in section
    assert section.count("Never ran") == 2  # compaction and optimization
    assert reverse("admin:django_q_schedule_changelist") in section


def test_a_failed_housekeeping_run_shows_its_error(admin_client):
    from projects.housekeeping.runs import run_recorded
    from projects.models import HousekeepingRun

    def broken():
        raise OSError("no space left on device")

    with pytest.raises(OSError, match="no space"):
        run_recorded(HousekeepingRun.Job.COMPACT_ROLLUPS, broken)

    page = admin_client.get(URL).content.decode()

    assert "Failed" in page
    assert "OSError: no space left on device" in page


def test_a_team_member_sees_their_teams_numbers_and_nothing_of_the_install(a, b):
    from projects.models import Project, Role
    from tests.support.teams import client_of, member

    now = timezone.now()
    PollerNode.objects.create(
        name="poller-host-7:4242",
        host="poller-host-7",
        pid=4242,
        control_url="http://127.0.0.1:9",
        started_at=now,
        last_seen_at=now,
    )
    Project.objects.filter(pk=a.project.pk).update(
        state="down", last_status="down", last_polled_at=now
    )
    for number in range(3):  # bravo's, never counted for alpha
        Project.objects.create(
            team=b.team, name=f"bravo-{number}", url=f"http://127.0.0.1:9/{number}"
        )
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    response = viewer.get(URL)

    assert response.status_code == 200
    page = response.content.decode()
    assert "poller-host-7" not in page
    assert "4242" not in page
    assert "Polls in flight" not in page  # the install's numbers
    assert 'id="housekeeping"' not in page
    section = page[page.index('id="team-numbers"') :].replace(' class="num"', "")
    assert "Alpha" in section
    assert "Projects polled</th><td>1</td>" in section  # not bravo's 4
    assert "Down</th><td>1</td>" in section


def test_a_superuser_still_sees_the_install(admin_client):
    now = timezone.now()
    PollerNode.objects.create(
        name="poller-host-7:4242",
        host="poller-host-7",
        pid=4242,
        control_url="http://127.0.0.1:9",
        started_at=now,
        last_seen_at=now,
    )

    page = admin_client.get(URL).content.decode()

    assert "poller-host-7:4242" in page
    assert 'id="housekeeping"' in page
