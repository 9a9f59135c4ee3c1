from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from projects.checks.kinds import scheme_list
from projects.models import Incident, PollResult, PollResultRow, Project, Status
from tests.support.admin_forms import ADD_URL, FORM

pytestmark = pytest.mark.django_db

LIST_URL = reverse("admin:projects_project_changelist")
RESULTS_URL = reverse("admin:projects_pollresultrow_changelist")


def add_results(
    project: Project,
    count: int,
    *,
    start: datetime | None = None,
    every: timedelta = timedelta(minutes=1),
):
    start = start or datetime(2026, 11, 1, tzinfo=UTC)
    PollResult.objects.bulk_create(
        PollResult(
            project=project,
            polled_at=start + i * every,
            status=Status.UP if i % 3 else Status.DOWN,
            status_code=200 if i % 3 else 503,
            response_time_ms=10 + i,
            error_message="" if i % 3 else "expected 200, got 503",
        )
        for i in range(count)
    )


def add_recent_results(project: Project, count: int) -> None:
    """`count` polls 10 s apart, the newest 10 s ago: all inside the
    results list's unfiltered window."""
    start = timezone.now() - timedelta(seconds=10 * count)
    add_results(project, count, start=start, every=timedelta(seconds=10))


def count_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def test_it_adds_a_project(admin_client):
    response = admin_client.post(
        ADD_URL, {**FORM, "headers": '{"Accept": "text/html"}'}
    )
    assert response.status_code == 302
    project = Project.objects.get()
    assert project.url == "https://example.com/health"
    assert project.headers == {"Accept": "text/html"}
    assert project.interval_seconds == 300


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "url",
            "file:///etc/passwd",
            f"Only {scheme_list()} URLs can be polled",
        ),
        (
            "url",
            "ftp://example.com",
            f"Only {scheme_list()} URLs can be polled",
        ),
        ("url", "not a url", "A URL cannot contain spaces"),
        ("interval", "0", "greater than or equal to 1"),
        ("expected_status", "99", "Status codes run from 100 to 599; 99 is not one."),
        ("expected_status", "600", "Status codes run from 100 to 599; 600 is not one."),
        ("headers", "[1, 2]", "Headers must be a JSON object"),
        ("headers", "Accept: text/html", "Headers must be valid JSON"),
        ("tls_expiry_warning_days", "366", "less than or equal to 365."),
        ("tls_expiry_warning_days", "-1", "greater than or equal to 0."),
    ],
)
def test_it_refuses_bad_input_with_a_message_on_the_field(
    admin_client, field, value, message
):
    response = admin_client.post(ADD_URL, {**FORM, field: value})
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == [field]
    assert message in errors[field][0]
    assert message in response.content.decode()
    assert Project.objects.exists() is False


def test_it_refuses_a_timeout_longer_than_the_interval(admin_client):
    data = {
        **FORM,
        "interval": "30",
        "interval_unit": "seconds",
        "timeout_seconds": "60",
    }
    response = admin_client.post(ADD_URL, data)
    errors = response.context["adminform"].form.errors
    assert errors == {
        "timeout_seconds": ["The timeout cannot be longer than the interval (30 s)."]
    }
    assert Project.objects.exists() is False


def test_it_changes_a_project(admin_client, make_project):
    project = make_project(name="old")
    url = reverse("admin:projects_project_change", args=[project.pk])
    response = admin_client.post(
        url, {**FORM, "name": "new", "url": "http://127.0.0.1:8080/", "method": "HEAD"}
    )
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.name, project.url, project.method) == (
        "new",
        "http://127.0.0.1:8080/",
        "HEAD",
    )


def test_certificate_warnings_can_be_turned_off_and_back_on(admin_client, make_project):
    project = make_project()
    url = reverse("admin:projects_project_change", args=[project.pk])
    assert project.tls_expiry_warning_days == 14

    response = admin_client.post(url, {**FORM, "tls_expiry_warning_days": "0"})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.tls_expiry_warning_days == 0

    response = admin_client.post(url, {**FORM, "tls_expiry_warning_days": "365"})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.tls_expiry_warning_days == 365


def test_the_list_shows_current_state(admin_client, make_project):
    make_project(name="api", interval=30, interval_unit="seconds", timeout_seconds=5)
    Project.objects.filter(name="api").update(
        last_status=Status.DOWN, state=Project.State.DOWN, last_response_time_ms=123
    )
    make_project(name="fresh")
    page = admin_client.get(LIST_URL).content.decode()
    assert "every 30 s" in page
    assert "Down</span>" in page
    assert "123 ms" in page
    assert "no poll yet" in page


def test_the_list_names_each_projects_check_not_a_method_it_does_not_send(
    admin_client, make_project
):
    make_project(name="site", url="http://127.0.0.1/", method="HEAD")
    make_project(name="port", url="tcp://127.0.0.1:5432")
    make_project(name="backup", url="", kind=Project.Kind.HEARTBEAT)

    changelist = admin_client.get(LIST_URL).context["cl"]
    check = changelist.model_admin.check_column
    checks = {project.name: check(project) for project in changelist.result_list}

    assert checks == {"site": "HEAD", "port": "TCP port", "backup": "heartbeat"}


def test_the_list_filters_and_searches(admin_client, make_project):
    make_project(name="alpha", url="http://127.0.0.1/alpha", method="HEAD")
    make_project(name="beta", url="http://127.0.0.1/beta", enabled=False)

    def names(query: str) -> list[str]:
        response = admin_client.get(LIST_URL + query)
        return [p.name for p in response.context["cl"].result_list]

    assert names("?enabled__exact=0") == ["beta"]
    assert names("?method__exact=HEAD") == ["alpha"]
    assert names("?q=127.0.0.1/beta") == ["beta"]


def test_the_project_list_costs_the_same_queries_for_more_rows(
    admin_client, make_project
):
    for _ in range(3):
        make_project()
    few = count_queries(admin_client, LIST_URL)
    for _ in range(40):
        make_project()
    assert count_queries(admin_client, LIST_URL) == few


@pytest.mark.parametrize(
    ("action", "enabled"), [("enable_projects", True), ("disable_projects", False)]
)
def test_bulk_actions_switch_projects(admin_client, make_project, action, enabled):
    chosen = [make_project(enabled=not enabled), make_project(enabled=not enabled)]
    other = make_project(enabled=not enabled)
    response = admin_client.post(
        LIST_URL, {"action": action, "_selected_action": [p.pk for p in chosen]}
    )
    assert response.status_code == 302
    assert set(Project.objects.filter(enabled=enabled)) == set(chosen)
    other.refresh_from_db()
    assert other.enabled is (not enabled)


def test_the_project_page_shows_the_latest_20_results(admin_client, make_project):
    project = make_project()
    add_results(project, 25)
    url = reverse("admin:projects_project_change", args=[project.pk])
    page = admin_client.get(url).content.decode()
    assert page.count("<tr><td>2026-11-01") == 20
    assert "2026-11-01 00:24:00" in page  # the newest
    assert "2026-11-01 00:04:00" not in page  # the 21st newest
    every_poll = f"{RESULTS_URL}?project__id__exact={project.pk}"
    assert f'href="{every_poll}"' in page


def test_poll_results_are_read_only(admin_client, make_project):
    add_recent_results(make_project(), 1)
    key = PollResultRow.objects.get().pk

    page = admin_client.get(RESULTS_URL).content.decode()

    assert (
        admin_client.get(reverse("admin:projects_pollresultrow_add")).status_code == 403
    )
    for view in ("change", "delete"):
        url = reverse(f"admin:projects_pollresultrow_{view}", args=[key])
        assert admin_client.post(url, {"status": "up", "post": "yes"}).status_code in (
            403,
            404,
        )
    assert "/change/" not in page  # no links to a row's page
    assert 'name="_selected_action"' not in page  # no actions
    assert PollResult.objects.get().status == Status.DOWN


def test_the_unfiltered_results_list_shows_the_newest_minutes(
    admin_client, make_project
):
    project = make_project()
    add_results(project, 3, start=timezone.now() - timedelta(hours=2))
    add_recent_results(project, 2)

    response = admin_client.get(RESULTS_URL)
    one_project = admin_client.get(RESULTS_URL + f"?project__id__exact={project.pk}")

    assert len(response.context["cl"].result_list) == 2
    assert "The last 10 minutes, newest first" in response.content.decode()
    polled = [r.polled_at for r in one_project.context["cl"].result_list]
    assert len(polled) == 5
    assert polled == sorted(polled, reverse=True)


def test_the_results_list_costs_the_same_queries_for_more_rows(
    admin_client, make_project
):
    projects = [make_project() for _ in range(3)]
    for project in projects:
        add_recent_results(project, 5)
    few = count_queries(admin_client, RESULTS_URL)
    for project in [make_project() for _ in range(10)]:
        add_recent_results(project, 30)
    assert count_queries(admin_client, RESULTS_URL) == few


def test_the_results_list_filters_by_status_project_and_date(
    admin_client, make_project
):
    project, other = make_project(), make_project()
    add_results(project, 6, start=datetime(2026, 10, 30, 23, 58, tzinfo=UTC))
    add_results(other, 3)
    add_recent_results(other, 3)

    def results(query: str) -> list[PollResult]:
        return list(admin_client.get(RESULTS_URL + query).context["cl"].result_list)

    assert len(results(f"?project__id__exact={project.pk}")) == 6
    assert [r.status for r in results("?status__exact=down")] == ["down"]
    day = results("?polled_at__year=2026&polled_at__month=10&polled_at__day=30")
    assert [r.polled_at.minute for r in day] == [59, 58]


def test_the_date_drill_down_offers_the_calendar(admin_client, make_project):
    add_results(make_project(), 3, start=datetime(2026, 10, 31, 23, 59, tzinfo=UTC))
    page = admin_client.get(RESULTS_URL).content.decode()
    # Two months of data in one year: it starts at the year, listing months.
    assert "polled_at__month=10" in page
    assert "polled_at__month=11" in page
    month = admin_client.get(RESULTS_URL + "?polled_at__year=2026&polled_at__month=11")
    assert "polled_at__day=30" in month.content.decode()


def test_the_results_count_is_capped(admin_client, make_project, monkeypatch):
    monkeypatch.setattr("projects.admin.project.RESULT_COUNT_CAP", 10)
    add_recent_results(make_project(), 25)
    response = admin_client.get(RESULTS_URL)
    assert response.context["cl"].result_count == 10


def test_the_add_form_offers_empty_headers_not_null(admin_client):
    form = admin_client.get(ADD_URL).context["adminform"].form

    assert form["headers"].value() in ({}, "{}")
    assert ">null</textarea>" not in str(form["headers"])


def test_the_certificate_expiry_is_shown_read_only(admin_client, make_project):
    project = make_project(url="https://127.0.0.1/")
    expires = datetime(2027, 2, 1, 12, 0, tzinfo=UTC)
    Project.objects.filter(pk=project.pk).update(tls_expires_at=expires)
    url = reverse("admin:projects_project_change", args=[project.pk])

    page = admin_client.get(url).content.decode()
    admin_client.post(url, {"tls_expires_at": "2030-01-01 00:00:00"})

    assert "Certificate expires" in page
    assert 'name="tls_expires_at"' not in page
    project.refresh_from_db()
    assert project.tls_expires_at == expires


def test_the_results_list_shows_the_phases(admin_client, make_project):
    add_recent_results(make_project(), 1)
    PollResult.objects.update(tls_ms=12, first_byte_ms=40)

    assert "TLS 12 · first byte 40 ms" in admin_client.get(RESULTS_URL).content.decode()


def test_a_project_that_went_down_can_be_deleted_with_its_incidents(
    admin_client, make_project
):
    # A downtime incident cannot be deleted on its own (it is the project's
    # history); that refusal used to make its project undeletable (403).
    project = make_project(name="shop")
    now = timezone.now()
    Incident.objects.create(project=project, started_at=now, confirmed_at=now)
    url = reverse("admin:projects_project_delete", args=[project.pk])

    response = admin_client.post(url, {"post": "yes"})

    assert response.status_code == 302
    assert not Project.objects.filter(pk=project.pk).exists()
    assert not Incident.objects.exists()
    incident = Incident.objects.create(
        project=make_project(name="other"), started_at=now, confirmed_at=now
    )
    own_page = reverse("admin:projects_incident_delete", args=[incident.pk])
    assert admin_client.post(own_page, {"post": "yes"}).status_code == 403


def test_the_add_form_starts_with_what_a_newcomer_types(admin_client):
    html = admin_client.get(reverse("admin:projects_project_add")).content.decode()

    order = [
        html.index(f'name="{field}"')
        for field in ("kind", "name", "url", "interval", "failure_threshold")
    ]
    assert order == sorted(order)
    # The rest is folded away below: the request's details, tags, regions.
    assert html.index('name="url"') < html.index('name="method"')
    assert html.index('name="interval"') < html.index('name="tags"')
    assert html.count('class="module aligned collapse') >= 5
    # Checked every 60 s unless said otherwise.
    assert 'name="interval" value="60"' in html
    assert '<option value="seconds" selected>' in html
