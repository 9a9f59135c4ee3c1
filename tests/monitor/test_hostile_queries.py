"""Bad query values are a 400 (or a redirect, or a 404), never a 500.

Every GET URL of monitor/urls.py, admin pages of every registered model
included, is requested with hostile path and query values by a superuser,
a view-only staff user and an anonymous visitor. A URL added later is
walked too: the test fails when it cannot build one for a route.
"""

from __future__ import annotations

import itertools
import re
import uuid
from datetime import timedelta

import pytest
from django_q.models import Failure, OrmQ, Schedule, Success

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import URLResolver, get_resolver
from django.utils import timezone

from projects.models import (
    AuditEntry,
    DeliveryAttempt,
    HousekeepingRun,
    Incident,
    MaintenanceWindow,
    Membership,
    Notification,
    NotificationChannel,
    PollResult,
    PollResultRow,
    Project,
    Region,
    Role,
    Status,
    Tag,
    Team,
)
from projects.notifications.links import acknowledge_token

pytestmark = pytest.mark.django_db

HUGE = "99999999999999999999"
HOSTILE_VALUES = [HUGE, "²", "-1", "\x00", "x" * 5000]
MORE_HOSTILE_VALUES = [*HOSTILE_VALUES, "\uff10", "1e3", "'\"<>&;", "%", "[]"]
PAGE_PARAMS = ["before", "project", "page", "range", "status", "state", "q", "next"]
ADMIN_LIST_PARAMS = [
    "o",
    "p",
    "q",
    "e",
    "all",
    "_popup",
    "_to_field",
    "secret__startswith",
    "password__startswith",
    "url__regex",
]
ADMIN_OBJECT_PARAMS = ["_changelist_filters", "_popup", "_to_field"]
_CONVERTER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")


def routes(resolver: URLResolver, prefix: str = ""):
    """The route text of every pattern, includes flattened."""
    for pattern in resolver.url_patterns:
        text = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from routes(pattern, text)
        else:
            yield text


class World:
    """One saved object of every kind a URL can name."""

    def __init__(self) -> None:
        now = timezone.now()
        self.project = Project.objects.create(name="p", url="https://example.com/")
        self.heartbeat = Project.objects.create(
            name="hb", url="", kind=Project.Kind.HEARTBEAT
        )
        self.incident = Incident.objects.create(
            project=self.project, started_at=now, confirmed_at=now
        )
        PollResult.objects.create(
            project=self.project, polled_at=now, status=Status.DOWN, status_code=503
        )
        channel = NotificationChannel.objects.create(
            name="c", kind="email", url="ops@example.com"
        )
        notification = Notification.objects.create(
            event="incident.opened",
            key="k",
            channel=channel,
            project=self.project,
            payload={"event": "incident.opened"},
            created_at=now,
            next_attempt_at=now,
        )
        self.objects = {
            Group: Group.objects.create(name="g"),
            Project: self.project,
            PollResultRow: PollResultRow.objects.first(),
            HousekeepingRun: HousekeepingRun.objects.create(
                job="prune_results", started_at=now
            ),
            Tag: Tag.objects.create(name="t"),
            MaintenanceWindow: MaintenanceWindow.objects.create(
                name="m", starts_at=now, ends_at=now + timedelta(hours=1)
            ),
            NotificationChannel: channel,
            Notification: notification,
            DeliveryAttempt: DeliveryAttempt.objects.create(
                notification=notification, result="failed"
            ),
            Schedule: Schedule.objects.create(func="math.floor", args="1"),
            Success: Success.objects.create(
                id="a" * 32, name="s", func="math.floor", started=now, stopped=now
            ),
            Failure: Failure.objects.create(
                id="b" * 32, name="f", func="math.floor", started=now, stopped=now
            ),
            OrmQ: OrmQ.objects.create(key="k", payload="x", lock=now),
            Region: Region.objects.create(name="r"),
        }
        self.superuser = User.objects.create_superuser("root", password="pw")
        self.objects[User] = self.superuser
        self.viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
        self.viewer.user_permissions.set(
            Permission.objects.filter(codename__startswith="view_")
        )
        # Roles, not permissions, open a team's objects (docs/teams.md).
        membership = Membership.objects.create(
            user=self.viewer, team=self.project.team, role=Role.VIEWER
        )
        self.objects[Team] = self.project.team
        self.objects[Membership] = membership
        self.objects[AuditEntry] = AuditEntry.objects.create(
            team=self.project.team,
            actor_name="root",
            via="admin",
            object_type="projects.project",
            object_id=str(self.project.pk),
            object_repr="p",
            action="changed",
        )

    def object_of(self, route: str):
        app_label, model_name = route.split("/")[1:3]
        model = next(
            m
            for m in admin.site._registry
            if (m._meta.app_label, m._meta.model_name) == (app_label, model_name)
        )
        # Models of other apps (sign-in's) with no row: any id will do.
        return self.objects.get(model) or model._default_manager.first()

    def urls(self, route: str) -> list[str]:
        """A URL with real values, and one with hostile ones, for a route."""
        if "(?P<app_label>" in route:
            labels = {m._meta.app_label for m in admin.site._registry}
            return [f"/admin/{label}/" for label in sorted(labels)]
        if "(?P<url>" in route:
            return ["/admin/%C2%B2/", "/admin/" + "x" * 3000]
        if not _CONVERTER.search(route):
            return ["/" + route.lstrip("^").rstrip("$")]
        urls = []
        for hostile in (False, True):
            path = _CONVERTER.sub(lambda m, h=hostile: self.value(route, m, h), route)
            urls.append("/" + path.lstrip("^").rstrip("$"))
        return urls

    def value(self, route: str, match: re.Match, hostile: bool) -> str:
        converter, name = match["converter"], match["name"]
        if converter == "uuid":
            return str(uuid.uuid4() if hostile else self.heartbeat.ping_key)
        if name == "token":
            return "x" * 3000 if hostile else acknowledge_token(self.incident.pk)
        if hostile:
            return HUGE
        if name == "content_type_id":
            return str(ContentType.objects.get_for_model(Project).pk)
        if route.startswith("admin/r/"):
            return str(self.project.pk)
        if route.startswith("admin/"):
            obj = self.object_of(route)
            return quote(str(obj.pk if obj is not None else 1))
        if route.startswith("incidents/"):
            return str(self.incident.pk)
        return str(self.project.pk)


AUTOCOMPLETE = {"app_label": "projects", "model_name": "project", "field_name": "tags"}


def queries_for(url: str) -> list[dict]:
    if url == "/admin/autocomplete/":
        hostile = [
            {**AUTOCOMPLETE, n: v}
            for n in ["term", *AUTOCOMPLETE, "page"]
            for v in HOSTILE_VALUES
        ]
        return [{}, AUTOCOMPLETE, *hostile]
    if url.startswith("/admin/") and url.count("/") == 4:
        names, values = ADMIN_LIST_PARAMS + list_filter_params(url), HOSTILE_VALUES
    elif url.startswith("/admin/"):
        names, values = ADMIN_OBJECT_PARAMS, HOSTILE_VALUES
    else:
        names, values = PAGE_PARAMS, MORE_HOSTILE_VALUES
    return [{}] + [{n: v} for n, v in itertools.product(names, values)]


def list_filter_params(url: str) -> list[str]:
    """The lookups a changelist's own filters use, and its date drill-down."""
    app_label, model_name = url.split("/")[2:4]
    for model, model_admin in admin.site._registry.items():
        if (model._meta.app_label, model._meta.model_name) == (app_label, model_name):
            fields = [f for f in model_admin.list_filter if isinstance(f, str)]
            params = [f"{f}__exact" for f in fields] + [
                f"{f}__id__exact" for f in fields
            ]
            if model_admin.date_hierarchy:
                params += [
                    f"{model_admin.date_hierarchy}__{p}"
                    for p in ("year", "month", "day")
                ]
            return params
    return []


def server_errors(client: Client, urls: list[str], *, full: bool) -> list[tuple]:
    errors = []
    for url in urls:
        for query in queries_for(url) if full else [{}]:
            response = client.get(url, query)
            if response.status_code >= 500:
                errors.append(
                    (url[:80], query and str(query)[:80], response.status_code)
                )
    return errors


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def every_url(world) -> list[str]:
    urls, unbuilt = [], []
    for route in routes(get_resolver()):
        built = world.urls(route)
        (urls.extend if built else unbuilt.append)(built or route)
    assert unbuilt == []
    return urls


def clients(world: World) -> dict[str, Client]:
    superuser, viewer = (
        Client(raise_request_exception=False),
        Client(raise_request_exception=False),
    )
    superuser.force_login(world.superuser)
    viewer.force_login(world.viewer)
    return {
        "superuser": superuser,
        "view-only staff": viewer,
        "anonymous": Client(raise_request_exception=False),
    }


def test_every_route_is_walked(every_url):
    walked = {url.split("/")[1] for url in every_url}
    assert {"admin", "poller", "ping", "incidents", "projects", ""} <= walked


@pytest.mark.parametrize("role", ["superuser", "view-only staff", "anonymous"])
def test_no_url_answers_5xx_to_real_or_hostile_path_values(world, every_url, role):
    assert server_errors(clients(world)[role], every_url, full=False) == []


# Every GET URL (over a hundred admin pages among them) times every hostile
# value of every parameter: a few thousand requests, which outgrew the
# suite's 120 s per test on PostgreSQL as pages were added. Its own bound
# follows the work; nothing in it waits on a clock. The URLs are dealt
# into SHARDS tests so the suite's workers share the walk.
SHARDS = 8


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("shard", range(SHARDS))
@pytest.mark.parametrize("role", ["superuser", "view-only staff", "anonymous"])
def test_no_url_answers_5xx_to_hostile_query_values(world, every_url, role, shard):
    urls = every_url[shard::SHARDS]
    errors = server_errors(clients(world)[role], urls, full=True)
    assert not errors, "\n".join(map(str, errors))


@pytest.mark.parametrize(
    "query", [{"before": HUGE}, {"before": "²"}, {"before": "-1"}, {"before": "x"}]
)
def test_a_bad_before_on_the_project_page_is_a_400(admin_client, world, query):
    response = admin_client.get(f"/projects/{world.project.pk}/", query)

    assert response.status_code == 400


@pytest.mark.parametrize("value", ["²", HUGE, "0", "-1"])
def test_a_bad_project_on_the_incidents_page_is_a_400(admin_client, world, value):
    response = admin_client.get("/incidents/", {"project": value})

    assert response.status_code == 400


def test_good_values_still_work(admin_client, world):
    page = admin_client.get(f"/projects/{world.project.pk}/", {"before": "12"})
    incidents = admin_client.get("/incidents/", {"project": str(world.project.pk)})

    assert (page.status_code, incidents.status_code) == (200, 200)
    assert incidents.context["project"] == world.project


def test_a_view_only_staff_user_sees_a_project_in_the_admin(world):
    client = clients(world)["view-only staff"]

    response = client.get(f"/admin/projects/project/{world.project.pk}/change/")

    assert response.status_code == 200
    assert b"example.com" in response.content


@pytest.mark.parametrize(
    "url",
    [
        f"/admin/projects/project/?tags__exact={HUGE}",
        f"/admin/projects/pollresultrow/?polled_at__year={HUGE}",
        "/admin/projects/pollresultrow/?polled_at__day=-1",
        "/admin/projects/project/?q=%00",
        "/?q=a%00b",
        "/admin/auth/user/?groups__exact=-99999999999999999999",
    ],
)
def test_values_no_page_can_use_are_a_400(admin_client, world, url):
    assert admin_client.get(url).status_code == 400


def test_a_search_for_a_long_number_is_still_a_search(admin_client, world):
    response = admin_client.get("/admin/projects/project/", {"q": HUGE})

    assert response.status_code == 200


@pytest.mark.parametrize("role", ["superuser", "view-only staff"])
@pytest.mark.parametrize(
    "url",
    [
        f"/admin/projects/incident/?project={HUGE}",
        f"/admin/projects/notification/?project={HUGE}",
        f"/admin/projects/pollresultrow/?project={HUGE}",
        f"/admin/projects/incident/?project__id__exact={HUGE}",
        "/admin/projects/auditentry/?at__gte=0001-01-01T00:00:00%2B14:00",
        "/admin/projects/auditentry/?at__lt=9999-12-31T23:59:59-14:00",
        "/admin/projects/incident/?started_at__gte=0001-01-01T00:00:00%2B14:00",
    ],
)
def test_filter_values_out_of_the_databases_range_are_a_400(world, role, url):
    """A bare field name is a filter too, and a moment must exist in UTC
    (security review S4-08)."""
    assert clients(world)[role].get(url).status_code == 400


@pytest.mark.parametrize(
    "url",
    [
        "/admin/projects/auditentry/?at__gte=0001-01-01T00:00:00Z",
        "/admin/projects/auditentry/?at__gte=2026-11-29",
        f"/admin/projects/incident/?q={HUGE}",
    ],
)
def test_filter_values_in_range_are_a_page(admin_client, world, url):
    assert admin_client.get(url).status_code == 200
