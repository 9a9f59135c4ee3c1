"""projects/: the admin's fields, the admin's rules and messages, JSON errors."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from django.test import override_settings

from projects.forms.project import ProjectForm
from projects.models import NotificationChannel, Project, Tag

URL = "/api/v1/projects/"
SITE = {"name": "site", "url": "http://127.0.0.1:9/health"}


def post(client, data, url=URL):
    return client.post(url, data, format="json")


def test_a_project_is_created_with_every_field_the_admin_edits(write_api):
    Tag.objects.create(name="prod")
    channel = NotificationChannel.objects.create(
        name="ops", kind="email", url="ops@example.com"
    )
    data = {
        "name": "api",
        "kind": "poll",
        "tags": ["prod"],
        "url": "https://127.0.0.1:9/health",
        "method": "POST",
        "headers": {"Accept": "application/json"},
        "body": "{}",
        "follow_redirects": True,
        "allow_insecure_redirects": True,
        "verify_tls": False,
        "expected_status": "200-299, 301",
        "keyword": "",
        "keyword_mode": "contains",
        "keyword_case_sensitive": True,
        "json_query": "status",
        "json_operator": "==",
        "json_expected": "ok",
        "header_assertions": [
            {"name": "Cache-Control", "operator": "contains", "value": "no-store"}
        ],
        "udp_payload": "",
        "udp_payload_hex": False,
        "expected_reply": "",
        "expected_reply_mode": "contains",
        "dns_expected_rcode": "NOERROR",
        "dns_expected_answers": "",
        "dns_answer_match": "any",
        "dns_require_dnssec": False,
        "ping_count": 3,
        "ping_max_loss_percent": 66,
        "max_response_time_ms": 900,
        "degraded_after_ms": 700,
        "tls_expiry_warning_days": 7,
        "domain_expiry_warning_days": None,  # an address has no domain
        "interval": 2,
        "interval_unit": "minutes",
        "grace_seconds": 60,
        "timeout_seconds": 5,
        "failure_threshold": 2,
        "recovery_threshold": 2,
        "enabled": True,
        "channels": [channel.pk],
        "regions": ["default"],
        "quorum": 1,
        "steps": [],  # flows only
    }
    assert set(data) == set(ProjectForm.Meta.fields)

    response = post(write_api, data)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert {name: body[name] for name in data} == data
    assert body["interval_seconds"] == 120
    assert body["state"] == "waiting"
    assert body["ping_url"] is None
    assert body["last_polled_at"] is None
    project = Project.objects.get()
    assert project.interval_seconds == 120
    assert list(project.tags.values_list("name", flat=True)) == ["prod"]


def test_a_new_project_left_without_channels_gets_the_default_ones(write_api):
    default = NotificationChannel.objects.create(
        name="all", kind="email", url="a@example.com", is_default=True
    )
    NotificationChannel.objects.create(name="other", kind="email", url="b@x.org")

    response = post(write_api, SITE)

    assert response.json()["channels"] == [default.pk]


def test_an_invalid_interval_is_a_400_naming_the_field(write_api):
    response = post(write_api, {**SITE, "interval": 5, "interval_unit": "seconds"})

    assert response.status_code == 400
    assert response.json() == {
        "interval": ["The interval must be at least 10 seconds (this is 5 s)."]
    }
    assert not Project.objects.exists()


@pytest.mark.parametrize(
    "changes",
    [
        {"interval": 5, "interval_unit": "seconds"},
        {"url": "ftp://example.com/"},
        {"expected_status": "99"},
        {"headers": {"Bad Name": "x"}},
        {"kind": "heartbeat"},
        {"json_query": "status", "json_operator": "<", "json_expected": "ok"},
        {"max_response_time_ms": 20000, "timeout_seconds": 10},
        {"timeout_seconds": 0},
        {"interval": 0},
        {"method": "BREW"},
        {"name": "x" * 201},
        {"body": "nul\x00"},
        {"url": "tcp://db.example.com:5432", "keyword": "x"},
        {"header_assertions": [{"name": "X-A", "operator": "matches"}]},
        {"url": "udp://127.0.0.1:9"},
        {"url": "ssh://127.0.0.1", "keyword": "x"},
        {"expected_reply": "ok"},
        {"url": "dns://127.0.0.1/example.com?type=ZZZ"},
        {"url": "dns://127.0.0.1/example.com", "dns_expected_answers": "x"},
        {"url": "icmp://127.0.0.1", "keyword": "x"},
        {"url": "icmp://127.0.0.1", "ping_count": 0},
    ],
)
def test_errors_are_exactly_the_admins(write_api, changes):
    admin_form = ProjectForm(
        data={
            **ProjectForm().initial,
            "interval": 5,
            "interval_unit": "minutes",
            "timeout_seconds": 10,
            "method": "GET",
            "expected_status": "200",
            "headers": "{}",
            "enabled": True,
            **SITE,
            **{
                name: json.dumps(value)
                if name in ("headers", "header_assertions")
                else value
                for name, value in changes.items()
            },
        }
    )
    assert not admin_form.is_valid()

    response = post(write_api, {**SITE, **changes})

    assert response.status_code == 400
    assert response.json() == {
        name: list(messages) for name, messages in admin_form.errors.items()
    }


def test_a_number_where_text_is_expected_is_a_field_error(write_api):
    response = post(write_api, {**SITE, "expected_status": 99})

    assert response.status_code == 400
    assert response.json() == {
        "expected_status": ["Status codes run from 100 to 599; 99 is not one."]
    }


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"interval": "often"}, "interval"),
        ({"enabled": "maybe"}, "enabled"),
        ({"tags": "prod"}, "tags"),
        ({"channels": ["x"]}, "channels"),
        ({"max_response_time_ms": 1.5}, "max_response_time_ms"),
    ],
)
def test_a_value_of_the_wrong_type_is_a_400_on_its_field(write_api, changes, field):
    response = post(write_api, {**SITE, **changes})

    assert response.status_code == 400
    assert list(response.json()) == [field]


def test_unknown_fields_are_refused_by_name(write_api):
    response = post(write_api, {**SITE, "intervall": 30, "colour": "red"})

    assert response.status_code == 400
    assert response.json() == {
        "colour": ["Unknown field."],
        "intervall": ["Unknown field."],
    }


def test_malformed_json_is_a_400_with_a_message(write_api):
    response = write_api.generic(
        "POST", URL, '{"name": "x",', content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json()["detail"].startswith("The request body is not valid JSON")


def test_deeply_nested_json_is_a_400(write_api):
    body = '{"headers": ' + "[" * 100_000 + "]" * 100_000 + "}"

    response = write_api.generic("POST", URL, body, content_type="application/json")

    assert response.status_code == 400


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_an_oversized_body_is_a_400(write_api):
    response = post(write_api, {**SITE, "body": "x" * 2000})

    assert response.status_code == 400
    assert response.json() == {"detail": "The request body is larger than 1,000 bytes."}
    assert not Project.objects.exists()


def test_a_body_that_is_not_an_object_is_a_400(write_api):
    response = post(write_api, ["a", "list"])

    assert response.status_code == 400
    assert "non_field_errors" in response.json()


def test_unknown_tag_names_are_refused(write_api):
    response = post(write_api, {**SITE, "tags": ["nope"]})

    assert response.status_code == 400
    assert response.json() == {"tags": ["No tag is named “nope”; create it first."]}


def test_a_patch_changes_only_what_it_names(write_api, make_project):
    project = make_project(name="kept", interval=3, keyword="Welcome")

    response = write_api.patch(
        f"{URL}{project.pk}/", {"interval": 30, "interval_unit": "seconds"}
    )

    assert response.status_code == 200, response.json()
    project.refresh_from_db()
    assert (project.name, project.interval_seconds, project.keyword) == (
        "kept",
        30,
        "Welcome",
    )


def test_a_patch_is_checked_against_the_fields_it_leaves(write_api, make_project):
    project = make_project(method="HEAD")

    response = write_api.patch(f"{URL}{project.pk}/", {"keyword": "Welcome"})

    assert response.status_code == 400
    assert response.json() == {
        "keyword": ["A HEAD request gets no body to check: use GET."]
    }


def test_a_heartbeat_project_shows_its_ping_url(write_api, settings):
    settings.SITE_URL = "https://monitor.example.com"

    response = post(write_api, {"name": "backup", "kind": "heartbeat"})

    assert response.status_code == 201, response.json()
    project = Project.objects.get()
    assert response.json()["ping_url"] == (
        f"https://monitor.example.com/ping/{project.ping_key}"
    )
    # As in the admin: a new heartbeat alerts on its first missed ping.
    assert project.failure_threshold == 1


def test_pause_and_resume_turn_polling_off_and_on(write_api, make_project):
    project = make_project()

    paused = write_api.post(f"{URL}{project.pk}/pause/")
    assert paused.status_code == 200
    assert paused.json()["state"] == "paused"
    assert Project.objects.get().enabled is False

    resumed = write_api.post(f"{URL}{project.pk}/resume/")
    assert resumed.json()["enabled"] is True
    assert Project.objects.get().enabled is True


def test_delete_removes_the_project(write_api, make_project):
    project = make_project()

    assert write_api.delete(f"{URL}{project.pk}/").status_code == 204
    assert not Project.objects.exists()
    assert write_api.get(f"{URL}{project.pk}/").status_code == 404


def test_the_upsert_by_name_creates_then_updates_one_project(write_api):
    url = f"{URL}by-name/shop/"
    first = write_api.put(url, {"url": "http://127.0.0.1:9/a"}, format="json")
    second = write_api.put(
        url, {"url": "http://127.0.0.1:9/b", "interval": 1}, format="json"
    )

    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]
    project = Project.objects.get()
    assert (project.name, project.url, project.interval) == (
        "shop",
        "http://127.0.0.1:9/b",
        1,
    )


@pytest.mark.parametrize("name", ["shop/eu", "a/b/c", "trailing/"])
def test_the_upsert_takes_a_name_with_slashes_url_encoded(write_api, name):
    url = f"{URL}by-name/{quote(name, safe='')}/"
    first = write_api.put(url, {"url": "http://127.0.0.1:9/a"}, format="json")
    again = write_api.put(url, {"url": "http://127.0.0.1:9/b"}, format="json")

    assert (first.status_code, again.status_code) == (201, 200), first.json()
    assert Project.objects.get().name == name
    assert Project.objects.get().url == "http://127.0.0.1:9/b"


def test_the_upsert_refuses_a_different_name_in_the_body(write_api):
    response = write_api.put(
        f"{URL}by-name/shop/", {"name": "other", **SITE} | {"name": "other"}
    )

    assert response.status_code == 400
    assert list(response.json()) == ["name"]
    assert not Project.objects.exists()


def test_the_upsert_is_validated_like_a_create(write_api):
    response = write_api.put(f"{URL}by-name/shop/", {"url": "nope"}, format="json")

    assert response.status_code == 400
    assert list(response.json()) == ["url"]


def test_the_list_filters_by_tag_state_kind_enabled_and_search(read_api, make_project):
    prod = Tag.objects.create(name="prod")
    tagged = make_project(name="shop front")
    tagged.tags.add(prod)
    make_project(name="paused one", enabled=False)
    make_project(name="beat", kind="heartbeat", url="")

    def names(query: str) -> list[str]:
        response = read_api.get(f"{URL}?{query}")
        assert response.status_code == 200, response.json()
        return [project["name"] for project in response.json()["results"]]

    assert names("tag=prod") == ["shop front"]
    assert names("state=paused") == ["paused one"]
    assert names("kind=heartbeat") == ["beat"]
    assert names("enabled=false") == ["paused one"]
    assert names("search=FRONT") == ["shop front"]
    assert names("") == ["beat", "paused one", "shop front"]


@pytest.mark.parametrize(
    "query", ["state=sideways", "kind=x", "enabled=perhaps", "search=%00"]
)
def test_a_bad_filter_is_a_400_naming_it(read_api, query):
    response = read_api.get(f"{URL}?{query}")

    assert response.status_code == 400
    assert list(response.json()) == [query.split("=")[0]]


def test_the_fast_representation_is_drfs(make_project, add_polls):
    from rest_framework import serializers

    from django.utils import timezone

    from projects.api.serializers.projects import ProjectSerializer
    from projects.api.views.projects import projects_with_state

    tag = Tag.objects.create(name="prod")
    channel = NotificationChannel.objects.create(name="c", kind="email", url="a@b.c")
    polled = make_project(headers={"Accept": "text/html"}, max_response_time_ms=500)
    polled.tags.add(tag)
    polled.channels.add(channel)
    add_polls(polled, "uud", end=timezone.now())
    make_project(kind="heartbeat", url="", enabled=False)
    projects = list(projects_with_state())

    fast = ProjectSerializer(projects, many=True).data
    generic = [
        serializers.ModelSerializer.to_representation(ProjectSerializer(), project)
        for project in projects
    ]

    assert json.loads(json.dumps(fast)) == json.loads(json.dumps(generic))
    assert [list(row) for row in fast] == [list(row) for row in generic]


@pytest.mark.parametrize(
    "path",
    [
        "99999999999999999999999/",
        "99999999999999999999999/uptime/",
        "99999999999999999999999/results/",
        "by-name/a%00b/",
    ],
)
def test_ids_beyond_any_column_and_nul_in_names_are_not_found(write_api, path):
    method = write_api.put if path.startswith("by-name") else write_api.get
    response = method(f"{URL}{path}", {"url": "http://127.0.0.1:9/"}, format="json")

    assert response.status_code in (400, 404)


@pytest.mark.parametrize(
    "body",
    [
        {**SITE, "expected_status": "200-299,301", "tags": ["b", "a"]},
        {"name": "beat", "kind": "heartbeat", "tags": ["a"]},
    ],
)
def test_the_answer_to_a_write_is_what_a_later_read_shows(write_api, body):
    Tag.objects.create(name="a")
    Tag.objects.create(name="b")
    NotificationChannel.objects.create(
        name="all", kind="email", url="a@example.com", is_default=True
    )

    created = post(write_api, body)
    url = f"{URL}{created.json()['id']}/"
    changed = write_api.patch(url, {"interval": 2}, format="json")

    assert created.status_code == 201, created.json()
    assert changed.json() == write_api.get(url).json()
    assert {**created.json(), "interval": 2, "interval_seconds": 120} == {
        **changed.json(),
        "updated_at": created.json()["updated_at"],
    }


def test_an_unknown_region_is_a_field_error(write_api):
    response = post(
        write_api,
        {"name": "api", "url": "https://127.0.0.1:9/", "regions": ["mars"]},
    )

    assert response.status_code == 400
    assert response.json() == {"regions": ["No region is named “mars”."]}
    assert not Project.objects.exists()


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("state", ["", "up", "down", "pending"])
@pytest.mark.parametrize("maintained", ["none", "it", "all"])
def test_the_state_of_a_project_in_hand_is_the_lists(
    make_project, enabled, state, maintained
):
    from projects.dashboard.queries.overview import display_state_of, with_state

    project = make_project(enabled=enabled)
    Project.objects.filter(pk=project.pk).update(state=state)
    project.refresh_from_db()
    covered = {"none": set(), "it": {project.pk}, "all": None}[maintained]

    listed = with_state(Project.objects.filter(pk=project.pk), maintained=covered)

    assert display_state_of(project, maintained=covered) == (
        listed.values_list("display_state", flat=True).get()
    )


def test_a_project_up_but_slower_than_its_limit_is_degraded(read_api, make_project):
    from django.utils import timezone

    project = make_project(degraded_after_ms=500)
    Project.objects.filter(pk=project.pk).update(
        state=Project.State.UP, degraded_since=timezone.now()
    )

    body = read_api.get(f"{URL}{project.pk}/").json()

    assert body["state"] == "degraded"
    assert body["degraded_after_ms"] == 500


def test_a_degraded_limit_must_be_positive(write_api, make_project):
    project = make_project()

    response = write_api.patch(
        f"{URL}{project.pk}/", {"degraded_after_ms": 0}, format="json"
    )

    assert response.status_code == 400
    assert list(response.json()) == ["degraded_after_ms"]
