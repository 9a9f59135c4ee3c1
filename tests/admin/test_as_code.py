"""The admin's "Export as YAML" and "Import YAML" page."""

from __future__ import annotations

import pytest

from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from projects.as_code.export import export_yaml
from projects.models import Membership, Project, Role
from projects.models.teams import default_team

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:projects_project_changelist")
EXPORT = reverse("admin:projects_project_export_yaml")
IMPORT = reverse("admin:projects_project_import_yaml")


@pytest.fixture
def api(make_project):
    return make_project(name="api", url="http://127.0.0.1:9/")


def staff_with(role: str) -> Client:
    user = User.objects.create_user("staff", password="x", is_staff=True)
    Membership.objects.create(user=user, team=default_team(), role=role)
    client = Client()
    client.force_login(user)
    return client


def test_the_project_list_links_to_export_and_import(admin_client):
    html = admin_client.get(CHANGELIST).content.decode()

    assert f'<a href="{EXPORT}">Export as YAML</a>' in html
    assert f'<a href="{IMPORT}">Import YAML</a>' in html


def test_export_downloads_the_file(admin_client, api):
    response = admin_client.get(EXPORT)

    assert response["Content-Type"] == "application/yaml"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    assert response.content.decode() == export_yaml()


def test_the_import_page_shows_the_plan_and_applies_it_on_confirm(admin_client, api):
    url_line = "  url: http://127.0.0.1:9/\n"
    text = export_yaml().replace(url_line, f"{url_line}  interval: 10\n")

    preview = admin_client.post(IMPORT, {"text": text, "preview": "1"})

    html = preview.content.decode()
    assert "change project “api”\n    interval: 5 → 10\n" in html
    assert Project.objects.get(name="api").interval == 5

    applied = admin_client.post(IMPORT, {"text": text, "apply": "1"})

    assert applied.status_code == 302
    assert applied["Location"] == CHANGELIST
    assert Project.objects.get(name="api").interval == 10


def test_an_uploaded_file_is_previewed_too(admin_client, api):
    upload = SimpleUploadedFile(
        "p.yaml", b"version: 1\nprojects:\n- name: new\n  url: http://127.0.0.1:9/\n"
    )

    response = admin_client.post(IMPORT, {"file": upload, "prune": "on"})

    html = response.content.decode()
    assert "create project “new”" in html
    assert "disable project “api”" in html
    assert '<input type="hidden" name="prune" value="on">' in html


def test_the_import_page_shows_each_problem_and_changes_nothing(admin_client, api):
    text = (
        "version: 1\nprojects:\n"
        "- name: api\n  url: http://127.0.0.1:9/\n  interval: 0\n"
    )

    response = admin_client.post(IMPORT, {"text": text, "apply": "1"})

    assert response.status_code == 200
    assert (
        "projects[api].interval: Ensure this value is greater than or equal to 1."
        in response.content.decode()
    )
    assert Project.objects.get(name="api").interval == 5


def test_user_text_on_the_page_is_escaped(admin_client):
    text = "version: 1\nprojects:\n- name: <script>x</script>\n  url: nope\n"

    html = admin_client.post(IMPORT, {"text": text, "preview": "1"}).content.decode()

    assert "<script>x</script>" not in html
    assert "projects[&lt;script&gt;x&lt;/script&gt;].url" in html


def test_a_viewer_can_export_but_not_import(api):
    client = staff_with(Role.VIEWER)

    assert client.get(EXPORT).status_code == 200
    assert client.get(IMPORT).status_code == 403
    posted = client.post(IMPORT, {"text": "version: 1\n", "apply": "1"})
    assert posted.status_code == 403
    assert "Import YAML" not in client.get(CHANGELIST).content.decode()


def test_an_editor_can_import(api):
    client = staff_with(Role.EDITOR)

    assert client.get(IMPORT).status_code == 200


def test_the_import_is_csrf_protected(admin_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)

    response = client.post(IMPORT, {"text": "version: 1\n", "apply": "1"})

    assert response.status_code == 403


def test_an_export_masks_header_values_and_only_editors_ask_for_them(make_project):
    """S4-15: viewers exported `Authorization: Bearer …` in clear."""
    make_project(name="api", headers={"Authorization": "Bearer hdrsecret"})
    viewer, editor = staff_with(Role.VIEWER), Client()
    user = User.objects.create_user("ed", password="x", is_staff=True)
    Membership.objects.create(user=user, team=default_team(), role=Role.EDITOR)
    editor.force_login(user)

    masked = viewer.get(EXPORT).content.decode()
    refused = viewer.get(EXPORT, {"with_secrets": "1"})
    clear = editor.get(EXPORT, {"with_secrets": "1"}).content.decode()

    assert "hdrsecret" not in masked
    assert "Authorization: •••" in masked
    assert refused.status_code == 403
    assert "Authorization: Bearer hdrsecret" in clear


def test_a_viewer_reads_a_projects_header_names_only(make_project):
    project = make_project(name="api", headers={"Authorization": "Bearer hdrsecret"})
    change = reverse("admin:projects_project_change", args=[project.pk])

    html = staff_with(Role.VIEWER).get(change).content.decode()

    assert "hdrsecret" not in html
    assert "Authorization: •••" in html
