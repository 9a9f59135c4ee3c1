"""Projects as code: exportprojects and importprojects."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

import pytest
import yaml

from django.core.management import CommandError, call_command

from polling.receivers import SENDER
from projects.as_code.export import dump, export_yaml
from projects.models import (
    MaintenanceWindow,
    NotificationChannel,
    Project,
    ServiceLevelObjective,
    Tag,
)

pytestmark = pytest.mark.django_db

WEBHOOK_SECRET = "whsec_" + "A" * 32
APPRISE_URL = "ntfy://user:hunter2-token@ntfy.example.com/alerts"


@pytest.fixture
def estate(make_project, make_channel):
    """A little of everything the file holds."""
    web = Tag.objects.create(name="web", color="#1f77b4")
    Tag.objects.create(name="db")
    hook = make_channel(name="ops hook", secret=WEBHOOK_SECRET, reminder_minutes=60)
    phone = make_channel(
        name="phone", kind="apprise", url=APPRISE_URL, send_resolved=False
    )
    api = make_project(
        name="api",
        url="https://127.0.0.1:9/health",
        headers={"Accept": "application/json"},
        expected_status="200-299",
        json_query="status",
        json_expected="ok",
        interval=30,
        interval_unit="seconds",
    )
    api.tags.add(web)
    api.channels.add(hook)
    make_project(name="backup", kind="heartbeat", url="", failure_threshold=1)
    make_project(name="postgres", url="tcp://127.0.0.1:5432", enabled=False)
    once = MaintenanceWindow.objects.create(
        name="upgrade",
        starts_at=datetime(2026, 12, 1, 2, tzinfo=UTC),
        ends_at=datetime(2026, 12, 1, 4, 30, tzinfo=UTC),
    )
    once.projects.add(api)
    MaintenanceWindow.objects.create(
        name="sundays",
        repeat="weekly",
        weekdays=[6],
        start_time="12:30",
        end_time="14:00",
        time_zone="Europe/Berlin",
        all_projects=True,
    )
    up = ServiceLevelObjective.objects.create(
        name="api up", project=api, target_percent=99.9, window_days=28
    )
    up.channels.add(hook)
    up.page_1h_channels.add(phone)
    ServiceLevelObjective.objects.create(
        name="web fast",
        tag=web,
        kind="latency",
        threshold_ms=500,
        target_percent=99,
        calendar_month=True,
    )


def export(*options) -> str:
    out = StringIO()
    call_command("exportprojects", *options, stdout=out)
    return out.getvalue()


def run_import(path, *options) -> str:
    out = StringIO()
    call_command("importprojects", str(path), *options, stdout=out)
    return out.getvalue().strip()


def write(tmp_path, text: str):
    path = tmp_path / "projects.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def edited(text: str, section: str, name: str, **changes) -> str:
    document = yaml.safe_load(text)
    (entry,) = [e for e in document[section] if e["name"] == name]
    entry.update(changes)
    return dump(document)


def snapshot() -> dict:
    """Every project's editable fields and updated_at, by name."""
    return {
        p.name: (p.interval, p.enabled, p.updated_at, p.url)
        for p in Project.objects.all()
    }


@pytest.fixture
def with_new_tag(tmp_path):
    def make(text: str) -> str:
        document = yaml.safe_load(text)
        document["tags"].append({"name": "new", "color": "#000000"})
        return dump(document)

    return make


def test_export_is_sorted_leaves_out_defaults_and_keeps_the_fields_order(estate):
    assert export() == (
        "version: 1\n"
        "tags:\n"
        "- name: db\n"
        "- name: web\n"
        "  color: '#1f77b4'\n"
        "channels:\n"
        "- name: ops hook\n"
        "  kind: webhook\n"
        "  reminder_minutes: 60\n"
        "- name: phone\n"
        "  kind: apprise\n"
        "  send_resolved: false\n"
        "projects:\n"
        "- name: api\n"
        "  tags:\n"
        "  - web\n"
        "  url: https://127.0.0.1:9/health\n"
        "  headers:\n"
        "    Accept: •••\n"
        "  expected_status: 200-299\n"
        "  json_query: status\n"
        "  json_expected: ok\n"
        "  interval: 30\n"
        "  interval_unit: seconds\n"
        "  channels:\n"
        "  - ops hook\n"
        "- name: backup\n"
        "  kind: heartbeat\n"
        "- name: postgres\n"
        "  url: tcp://127.0.0.1:5432\n"
        "  enabled: false\n"
        "maintenance_windows:\n"
        "- name: sundays\n"
        "  repeat: weekly\n"
        "  weekdays:\n"
        "  - 6\n"
        "  start_time: '12:30'\n"
        "  end_time: '14:00'\n"
        "  time_zone: Europe/Berlin\n"
        "  all_projects: true\n"
        "- name: upgrade\n"
        "  starts_at: '2026-12-01T02:00:00Z'\n"
        "  ends_at: '2026-12-01T04:30:00Z'\n"
        "  projects:\n"
        "  - api\n"
        "objectives:\n"
        "- name: api up\n"
        "  project: api\n"
        "  target_percent: 99.9\n"
        "  window_days: 28\n"
        "  channels:\n"
        "  - ops hook\n"
        "  page_1h_channels:\n"
        "  - phone\n"
        "- name: web fast\n"
        "  tag: web\n"
        "  kind: latency\n"
        "  target_percent: 99.0\n"
        "  threshold_ms: 500\n"
        "  calendar_month: true\n"
    )


def test_export_holds_no_channel_secret(estate):
    text = export()

    assert WEBHOOK_SECRET not in text
    assert "hunter2" not in text
    assert "ntfy" not in text
    assert "127.0.0.1:9/hook" not in text  # the webhook's URL


def test_export_masks_header_values_unless_asked(estate):
    """S4-15: `Authorization: Bearer …` went into every export."""
    Project.objects.filter(name="api").update(
        headers={"Accept": "application/json", "Authorization": "Bearer hdrsecret"}
    )

    masked, clear = export(), export("--with-secrets")

    assert "hdrsecret" not in masked
    assert "    Authorization: •••\n" in masked
    assert "    Authorization: Bearer hdrsecret\n" in clear


def test_a_masked_export_imported_again_keeps_the_header_values(estate, tmp_path):
    Project.objects.filter(name="api").update(headers={"Authorization": "Bearer x"})
    before = snapshot()

    output = run_import(write(tmp_path, export()))

    assert output == "no changes"
    assert snapshot() == before
    assert Project.objects.get(name="api").headers == {"Authorization": "Bearer x"}


def test_a_masked_header_with_nothing_stored_is_an_error(estate, tmp_path):
    text = export().replace("    Accept: •••\n", "    Accept: •••\n    X-New: •••\n")

    with pytest.raises(CommandError) as caught:
        run_import(write(tmp_path, text))

    assert "projects[api].headers: “X-New” is masked (•••)" in str(caught.value)


def test_exportprojects_writes_a_file(estate, tmp_path):
    path = tmp_path / "out.yaml"

    call_command("exportprojects", str(path), stderr=StringIO())

    assert path.read_text(encoding="utf-8") == export_yaml()


def test_an_export_imported_into_an_empty_database_exports_the_same(estate, tmp_path):
    text = export("--with-secrets")
    path = write(tmp_path, text)
    Project.objects.all().delete()
    Tag.objects.all().delete()
    MaintenanceWindow.objects.all().delete()

    assert not ServiceLevelObjective.objects.exists()  # gone with their targets

    output = run_import(path)

    assert output.endswith("9 created, 0 changed, 0 disabled")
    assert export("--with-secrets") == text
    assert Project.objects.get(name="backup").ping_key is not None


def test_one_edited_field_is_the_only_change_planned_and_made(estate, tmp_path):
    path = write(tmp_path, edited(export(), "projects", "api", interval=45))
    before = snapshot()

    dry = run_import(path, "--dry-run")

    assert dry.splitlines() == [
        "change project “api”",
        "    interval: 30 → 45",
        "dry run, nothing changed: 0 created, 1 changed, 0 disabled",
    ]
    assert snapshot() == before

    assert run_import(path).endswith("0 created, 1 changed, 0 disabled")
    after = snapshot()
    assert after.pop("api")[0] == 45
    before.pop("api")
    assert after == before  # the others were not even saved


def test_importing_the_same_file_twice_changes_nothing_the_second_time(
    estate, tmp_path, with_new_tag
):
    text = with_new_tag(export())
    text = edited(text, "projects", "api", tags=["new", "web"], enabled=False)
    text = edited(text, "projects", "backup", failure_threshold=3)
    path = write(tmp_path, text)
    run_import(path)
    before = snapshot()

    assert run_import(path) == "no changes"
    assert snapshot() == before


def test_a_new_project_a_tag_and_a_changed_window_in_one_file(
    estate, tmp_path, with_new_tag
):
    document = yaml.safe_load(with_new_tag(export()))
    document["projects"].append(
        {"name": "shop", "url": "http://127.0.0.1:9/", "tags": ["new", "web"]}
    )
    (window,) = [w for w in document["maintenance_windows"] if w["name"] == "upgrade"]
    window["projects"] = ["api", "shop"]

    output = run_import(write(tmp_path, dump(document)))

    assert output.splitlines()[:4] == [
        "create tag “new”",
        "create project “shop”",
        "change maintenance window “upgrade”",
        '    projects: ["api"] → ["api", "shop"]',
    ]
    shop = Project.objects.get(name="shop")
    assert sorted(shop.tags.values_list("name", flat=True)) == ["new", "web"]
    assert list(shop.maintenance_windows.values_list("name", flat=True)) == ["upgrade"]


INVALID = [
    (
        "projects",
        "api",
        {"interval": 5},
        "interval",
        "The interval must be at least 10 seconds (this is 5 s).",
    ),
    (
        "projects",
        "api",
        {"expected_status": "99"},
        "expected_status",
        "Status codes run from 100 to 599; 99 is not one.",
    ),
    (
        "tags",
        "web",
        {"color": "blue"},
        "color",
        "Enter a colour as #rrggbb, for example #1f77b4.",
    ),
    (
        "maintenance_windows",
        "upgrade",
        {"ends_at": "2026-11-30T00:00:00Z"},
        "ends_at",
        "The end must come after the start.",
    ),
    ("projects", "api", {"interval": "10"}, "interval", "Expected a whole number."),
    (
        "projects",
        "api",
        {"expected_status": 99},
        "expected_status",
        "Expected text; put numbers in quotes, like '200'.",
    ),
    ("projects", "api", {"enabled": "yes"}, "enabled", "Expected true or false."),
    ("projects", "api", {"colour": "red"}, "colour", "Unknown key."),
    ("projects", "api", {"tags": ["nope"]}, "tags", "No tag named “nope”."),
    # Objectives: the admin's form and the model's rules, by field.
    (
        "objectives",
        "api up",
        {"target_percent": 100},
        "target_percent",
        "Ensure this value is less than or equal to 99.999.",
    ),
    (
        "objectives",
        "api up",
        {"target_percent": "high"},
        "target_percent",
        "Expected a number, like 99.9.",
    ),
    (
        "objectives",
        "api up",
        {"kind": "latency"},
        "threshold_ms",
        "A latency objective needs a threshold.",
    ),
    (
        "objectives",
        "api up",
        {"window_days": 14},
        "window_days",
        "Select a valid choice. 14 is not one of the available choices.",
    ),
    (
        "objectives",
        "api up",
        {"tag": "web"},
        "tag",
        "Choose a project, a tag or a section, not several.",
    ),
    (
        "objectives",
        "api up",
        {"project": "nope"},
        "project",
        "No project named “nope”.",
    ),
    (
        "objectives",
        "api up",
        {"project": 7},
        "project",
        "Expected the name of a project.",
    ),
    (
        "objectives",
        "web fast",
        {"ticket_3d_channels": ["nope"]},
        "ticket_3d_channels",
        "No channel named “nope”.",
    ),
]


@pytest.mark.parametrize(("section", "name", "change", "field", "message"), INVALID)
def test_an_invalid_entry_changes_nothing_and_names_entry_and_field(
    estate, tmp_path, with_new_tag, section, name, change, field, message
):
    document = yaml.safe_load(with_new_tag(export()))
    document["projects"].append({"name": "shop", "url": "http://127.0.0.1:9/"})
    path = write(tmp_path, edited(dump(document), section, name, **change))
    before = snapshot()

    with pytest.raises(CommandError) as caught:
        run_import(path)

    assert f"{section}[{name}].{field}: {message}" in str(caught.value)
    assert str(caught.value).endswith("Nothing was changed.")
    assert snapshot() == before
    assert not Tag.objects.filter(name="new").exists()


def test_the_message_is_the_admins(admin_client, settings):
    """The same interval in the admin's add form gives the same sentence."""
    response = admin_client.post(
        "/admin/projects/project/add/",
        {
            "name": "x",
            "url": "http://127.0.0.1:9/",
            "interval": 5,
            "interval_unit": "seconds",
            "method": "GET",
            "expected_status": "200",
            "timeout_seconds": 5,
            "headers": "{}",
        },
    )

    assert response.context["adminform"].form.errors["interval"] == [
        "The interval must be at least 10 seconds (this is 5 s)."
    ]


def test_every_problem_in_the_file_is_reported_at_once(estate, tmp_path):
    text = edited(export(), "projects", "api", interval=5)
    text = edited(text, "tags", "web", color="red")

    with pytest.raises(CommandError) as caught:
        run_import(write(tmp_path, text))

    assert "projects[api].interval:" in str(caught.value)
    assert "tags[web].color:" in str(caught.value)


def test_a_channel_missing_from_the_database_is_an_error_naming_it(estate, tmp_path):
    document = yaml.safe_load(export())
    document["channels"].append({"name": "pager", "kind": "webhook"})

    with pytest.raises(CommandError) as caught:
        run_import(write(tmp_path, dump(document)))

    assert "channels[pager]: No channel has this name." in str(caught.value)


def test_a_channels_settings_are_imported_and_its_secrets_kept(estate, tmp_path):
    path = write(tmp_path, edited(export(), "channels", "ops hook", enabled=False))

    run_import(path)

    hook = NotificationChannel.objects.get(name="ops hook")
    assert hook.enabled is False
    assert hook.secret == WEBHOOK_SECRET
    assert hook.url == "http://127.0.0.1:9/hook"


def test_prune_disables_projects_missing_from_the_file_and_deletes_none(
    estate, tmp_path
):
    document = yaml.safe_load(export())
    document["projects"] = [p for p in document["projects"] if p["name"] != "api"]
    path = write(tmp_path, dump(document))

    assert run_import(path, "--dry-run", "--prune").splitlines()[0] == (
        "disable project “api”"
    )
    assert Project.objects.get(name="api").enabled is True
    run_import(path, "--prune")

    assert Project.objects.get(name="api").enabled is False
    assert Project.objects.count() == 3
    assert run_import(path, "--prune") == "no changes"


def test_without_prune_projects_missing_from_the_file_are_left_alone(estate, tmp_path):
    path = write(tmp_path, "version: 1\nprojects: []\n")

    assert run_import(path) == "no changes"
    assert Project.objects.get(name="api").enabled is True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version: 2\n", "file.version: Only version 1 is read."),
        ("projekts: []\n", "file.projekts: Unknown key."),
        ("projects: {}\n", "file.projects: Expected a list of entries."),
        ("projects:\n- url: x\n", "projects[#1].name: Every entry needs a name."),
        ("[1, 2\n", "file: Not valid YAML"),
        (
            "maintenance_windows:\n- name: w\n  start_time: 12:30\n",
            "maintenance_windows[w].start_time: Expected a time in quotes",
        ),
    ],
)
def test_a_file_of_the_wrong_shape_is_an_error(tmp_path, text, message):
    with pytest.raises(CommandError) as caught:
        run_import(write(tmp_path, text))

    assert message in str(caught.value)


def test_a_heartbeat_left_at_the_default_threshold_gets_the_admins_1(tmp_path):
    text = (
        "version: 1\nprojects:\n"
        "- name: nightly\n  kind: heartbeat\n"
        "- name: weekly\n  kind: heartbeat\n  failure_threshold: 3\n"
    )

    run_import(write(tmp_path, text))

    assert Project.objects.get(name="nightly").failure_threshold == 1
    assert Project.objects.get(name="weekly").failure_threshold == 3
    assert run_import(write(tmp_path, text)) == "no changes"


class FakeFleet:
    synced: list[int] = []

    def sync_projects(self, project_ids) -> bool:
        self.synced.extend(project_ids)
        return True

    def reload(self) -> bool:
        self.synced.append(0)
        return True


@pytest.mark.django_db(transaction=True)
def test_the_poller_hears_of_each_changed_project_after_the_commit(
    estate, tmp_path, monitor_fleet
):
    document = yaml.safe_load(edited(export(), "projects", "api", interval=45))
    document["projects"] = [p for p in document["projects"] if p["name"] != "postgres"]
    document["projects"].append({"name": "shop", "url": "http://127.0.0.1:9/"})
    path = write(tmp_path, dump(document))
    Project.objects.filter(name="postgres").update(enabled=True)
    assert SENDER.flush() is True
    monitor_fleet.synced.clear()  # the estate's own saves

    run_import(path, "--prune")
    assert SENDER.flush() is True

    ids = dict(Project.objects.values_list("name", "pk"))
    assert sorted(monitor_fleet.synced) == sorted(
        [ids["api"], ids["shop"], ids["postgres"]]
    )


@pytest.fixture
def monitor_fleet(monkeypatch):
    FakeFleet.synced = []
    monkeypatch.setattr("polling.receivers.FleetClient", FakeFleet)
    return FakeFleet
