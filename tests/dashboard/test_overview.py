"""The overview page: every project's state, uptime and latest polls."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from polling.store import DatabaseResultStore
from projects.models import MonitorOutage, PollerNode, Project, Tag
from tests.support.outcomes import outcome

pytestmark = pytest.mark.django_db

URL = reverse("dashboard:overview")
HOUR = timedelta(hours=1)


@pytest.fixture
def now():
    return timezone.now().replace(microsecond=0)


def row_of(response, name: str) -> str:
    """The table row that shows the project called `name`."""
    html = response.content.decode()
    rows = re.findall(r"<tr class=\"state-.*?</tr>", html, flags=re.S)
    (row,) = [row for row in rows if f">{name}</a>" in row]
    return row


def names(response) -> list[str]:
    return [project.name for project in response.context["page"].object_list]


def test_it_asks_for_a_login_first(client):
    response = client.get(URL)

    assert response.status_code == 302
    assert response.url == f"{reverse('account_login')}?next={URL}"


def test_it_shows_each_state_and_counts_them(
    admin_client, make_project, add_polls, now
):
    add_polls(make_project(name="api"), "uuu", end=now)
    add_polls(make_project(name="shop"), "uud", end=now)
    add_polls(make_project(name="blog"), "uud", end=now, state="pending")
    add_polls(make_project(name="old", enabled=False), "uuu", end=now)
    make_project(name="new")
    slow = make_project(name="slow", degraded_after_ms=50)
    add_polls(slow, "uuu", end=now, response_time_ms=900)
    Project.objects.filter(pk=slow.pk).update(degraded_since=now)

    response = admin_client.get(URL)

    assert response.context["counts"] == [
        ("down", "Down", 1),
        ("pending", "Pending", 1),
        ("degraded", "Degraded", 1),
        ("up", "Up", 1),
        ("maintenance", "Maintenance", 0),
        ("waiting", "Waiting", 1),
        ("paused", "Paused", 1),
    ]
    for name, label in [
        ("api", "Up"),
        ("shop", "Down"),
        ("blog", "Pending"),
        ("slow", "Degraded"),
        ("old", "Paused"),
        ("new", "Waiting"),
    ]:
        assert f"</span> {label}</span>" in row_of(response, name)
    assert "<title>(1 down) Dashboard" in response.content.decode()


def test_down_projects_come_first(admin_client, make_project, add_polls, now):
    for name, statuses in [
        ("alpha", "u"),
        ("zulu", "d"),
        ("mike", "u"),
        ("bravo", "d"),
    ]:
        add_polls(make_project(name=name), statuses, end=now)
    make_project(name="charlie")

    assert names(admin_client.get(URL)) == ["bravo", "zulu", "alpha", "charlie", "mike"]


def test_it_shows_uptime_over_24h_7d_and_30d(
    admin_client, make_project, add_polls, now
):
    project = make_project(name="api")
    add_polls(project, "dddd", end=now - timedelta(days=3), every=HOUR)
    add_polls(project, "uuud", end=now, every=HOUR)

    row = row_of(admin_client.get(URL), "api")

    cells = re.findall(r'class="num uptime-\w+">([^<]*)<', row)
    assert cells == ["75.00%", "37.50%", "37.50%"]


def test_a_project_that_started_yesterday_is_measured_over_its_own_polls(
    admin_client, make_project, add_polls, now
):
    add_polls(make_project(name="new"), "d" + "u" * 29, end=now, every=HOUR)

    row = row_of(admin_client.get(URL), "new")

    assert re.findall(r'class="num uptime-\w+">([^<]*)<', row) == [
        "100%",
        "96.66%",
        "96.66%",
    ]


def test_projects_without_polls_all_down_and_all_up(
    admin_client, make_project, add_polls, now
):
    make_project(name="idle")
    add_polls(make_project(name="dead"), "d" * 10, end=now)
    add_polls(make_project(name="fine"), "u" * 10, end=now)

    response = admin_client.get(URL)

    uptime = r'class="num uptime-\w+">([^<]*)<'
    assert re.findall(uptime, row_of(response, "idle")) == ["\N{EN DASH}"] * 3
    assert re.findall(uptime, row_of(response, "dead")) == ["0.00%"] * 3
    assert re.findall(uptime, row_of(response, "fine")) == ["100%"] * 3


def test_it_shows_the_last_check_and_response_time(
    admin_client, make_project, add_polls, now
):
    add_polls(
        make_project(name="api"),
        "u",
        end=now - timedelta(minutes=3),
        response_time_ms=87,
    )

    row = row_of(admin_client.get(URL), "api")

    assert "3\xa0minutes ago" in row
    assert "87 ms" in row


def test_the_recent_polls_strip_shows_the_last_50_polls(
    admin_client, make_project, add_polls, now
):
    add_polls(make_project(name="api"), "d" * 10 + "u" * 49 + "d", end=now)

    row = row_of(admin_client.get(URL), "api")

    assert re.findall(r"hb hb-(\w+)", row) == ["up"] * 49 + ["down"]
    assert "expected 200, got 503" in row


@pytest.mark.parametrize(
    ("search", "found"),
    [
        ("shop", ["shop"]),
        ("BILL", ["billing"]),
        ("internal.example", ["billing"]),
        ("", ["billing", "shop"]),
    ],
)
def test_it_searches_by_name_or_url(admin_client, make_project, search, found):
    make_project(name="billing", url="https://internal.example/health")
    make_project(name="shop", url="https://shop.example.com/")

    assert names(admin_client.get(URL, {"q": search})) == found


def test_it_filters_by_state(admin_client, make_project, add_polls, now):
    add_polls(make_project(name="api"), "u", end=now)
    add_polls(make_project(name="shop"), "d", end=now)

    response = admin_client.get(URL, {"state": "down"})

    assert names(response) == ["shop"]
    assert 'aria-current="true"' in response.content.decode()


def test_it_filters_by_tag(admin_client, make_project):
    web = Tag.objects.create(name="web")
    make_project(name="shop").tags.add(web)
    make_project(name="billing").tags.add(web, Tag.objects.create(name="db"))
    make_project(name="database")

    response = admin_client.get(URL, {"tag": "web"})

    assert names(response) == ["billing", "shop"]
    assert "Tagged “web”" in response.content.decode()
    assert {v: n for v, _, n in response.context["counts"]}["waiting"] == 2


def test_an_unknown_tag_shows_no_projects_and_says_so(admin_client, make_project):
    make_project(name="shop").tags.add(Tag.objects.create(name="web"))

    response = admin_client.get(URL, {"tag": "<nope>"})

    assert response.status_code == 200
    assert names(response) == []
    assert "No projects are tagged “&lt;nope&gt;”." in response.content.decode()


def test_each_row_shows_its_tags_as_chips_that_filter_by_them(
    admin_client, make_project
):
    tag = Tag.objects.create(name="<b>ops & web</b>", color="#ffeb3b")
    make_project(name="shop").tags.add(tag)

    row = row_of(admin_client.get(URL), "shop")

    assert (
        '<a class="tag-chip" href="/?tag=%3Cb%3Eops+%26+web%3C%2Fb%3E" '
        'style="background:#ffeb3b;color:#000">'
        "&lt;b&gt;ops &amp; web&lt;/b&gt;</a>"
    ) in row


def test_it_pages_through_many_projects(admin_client, make_project):
    for number in range(60):
        make_project(name=f"service {number:02}")

    first = admin_client.get(URL)
    second = admin_client.get(URL, {"page": 2})

    assert len(names(first)) == 50
    assert names(second) == [f"service {n}" for n in range(50, 60)]
    assert "Page 2 of 2 · 60 projects" in second.content.decode()


def test_a_page_costs_the_same_queries_for_5_or_60_projects(
    admin_client, make_project, add_polls, now
):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(URL).status_code == 200
        return len(captured)

    web, db = Tag.objects.create(name="web"), Tag.objects.create(name="db")
    for _ in range(5):
        add_polls(make_project(), "ud" * 30, end=now)
    few = queries()
    for _ in range(55):
        project = make_project()
        project.tags.add(web, db)
        add_polls(project, "du" * 30, end=now)

    assert queries() == few
    # Session, user, maintenance windows, state counts, page count, page,
    # the page's tags, uptime (the compaction boundary, rollups and the
    # first part-hour), heartbeats, and the banners' poller heartbeat and
    # monitor outage, the certificates expiring soon, and the notification
    # channels (for the setup hints), the current team and the user's teams
    # (for the header's switcher), and the team's objectives.
    assert few == 18


def test_it_keeps_itself_current(admin_client):
    assert b"js/live.js" in admin_client.get(URL).content


def test_without_projects_it_points_to_the_admin(admin_client):
    response = admin_client.get(URL)

    assert reverse("admin:projects_project_add") in response.content.decode()


# The banners about the monitor itself ---------------------------------------

SILENT = "The poller is silent: nothing has been checked since it was last seen."
NEVER_REPORTED = "No poller has reported yet: nothing is being checked."
UNREACHABLE = "Most targets failed at once (6 of 10)"


def banner_pages(project) -> list[str]:
    """Every page that shows the banners."""
    return [URL, project.get_absolute_url(), reverse("incidents:list")]


def seen_poller(at) -> PollerNode:
    return PollerNode.objects.create(
        name="web-1:42", host="web-1", pid=42, started_at=at - HOUR, last_seen_at=at
    )


def test_the_poller_is_silent_banner_follows_the_last_heartbeat(
    admin_client, make_project, now, settings
):
    settings.POLLER_SILENT_SECONDS = 120
    pages = banner_pages(make_project())
    assert all(NEVER_REPORTED in admin_client.get(p).content.decode() for p in pages)

    poller = seen_poller(now - timedelta(seconds=180))
    silent = admin_client.get(URL).content.decode()
    assert SILENT in silent
    assert NEVER_REPORTED not in silent
    assert f'Since <time datetime="{poller.last_seen_at.isoformat()}">' in silent
    assert all(SILENT in admin_client.get(p).content.decode() for p in pages)

    poller.last_seen_at = timezone.now()
    poller.save()
    for page in pages:
        html = admin_client.get(page).content.decode()
        assert SILENT not in html
        assert 'class="banner' not in html


def test_a_poller_seen_within_the_silent_seconds_is_not_silent(
    admin_client, now, settings
):
    settings.POLLER_SILENT_SECONDS = 600
    seen_poller(now - timedelta(seconds=300))

    assert SILENT not in admin_client.get(URL).content.decode()

    settings.POLLER_SILENT_SECONDS = 200
    assert SILENT in admin_client.get(URL).content.decode()


def test_the_unreachable_banner_shows_while_most_targets_fail(
    admin_client, make_project, now
):
    seen_poller(timezone.now())
    fleet = [make_project(failure_threshold=1) for _ in range(10)]
    pages = banner_pages(fleet[0])

    save_outcomes(fleet[:6], up=False, at=0)
    outage = MonitorOutage.objects.get(ended_at=None)
    for page in pages:
        html = admin_client.get(page).content.decode()
        assert UNREACHABLE in html
        assert "Down notifications are held until it clears." in html
    since = f'Since <time datetime="{outage.started_at.isoformat()}">'
    assert since in admin_client.get(URL).content.decode()

    save_outcomes(fleet[:4], up=True, at=20)
    assert MonitorOutage.objects.get().ended_at is not None
    for page in pages:
        html = admin_client.get(page).content.decode()
        assert "Most targets failed at once" not in html
        assert 'class="banner' not in html


def save_outcomes(projects, *, up: bool, at: float) -> None:
    """Through the writer's store, which opens and closes the outage."""
    DatabaseResultStore().save([outcome(p.pk, up=up, at=at) for p in projects])
