"""Import reads YAML within bounds: no aliases, a size and a node limit (S4-07)."""

from __future__ import annotations

import pytest

from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from projects.as_code import bounded_yaml
from projects.models import Membership, Project, Role
from projects.models.teams import default_team

pytestmark = pytest.mark.django_db

IMPORT = reverse("admin:projects_project_import_yaml")

# The review's file: 378 bytes that became 4.8 million strings.
ALIAS_BOMB = """\
version: 1
projects:
- name: laugh
  url: http://127.0.0.1:18499/l
  headers:
    A: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    B: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    C: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    D: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    E: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    F: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    G: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""


@pytest.fixture
def editor_client(client):
    user = User.objects.create_user("ed", password="x", is_staff=True)
    Membership.objects.create(user=user, team=default_team(), role=Role.EDITOR)
    client.force_login(user)
    return client


def test_the_alias_bomb_is_378_bytes():
    assert len(ALIAS_BOMB.encode()) == 378


def test_the_alias_bomb_gets_a_readable_400_in_the_admin(editor_client):
    response = editor_client.post(IMPORT, {"text": ALIAS_BOMB, "preview": "1"})

    assert response.status_code == 400
    assert "YAML aliases (*name) are not read (line 7)" in response.content.decode()
    assert not Project.objects.filter(name="laugh").exists()


def test_the_alias_bomb_is_a_command_error(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB, encoding="utf-8")

    with pytest.raises(CommandError, match=r"file: YAML aliases \(\*name\)"):
        call_command("importprojects", str(path), "--dry-run")


def test_an_alias_is_refused_before_any_value_is_built():
    """The composer stops at the first alias: nothing is expanded."""
    with pytest.raises(bounded_yaml.Refused):
        bounded_yaml.load("a: &x 1\nb: *x\n")


def test_a_file_over_the_size_limit_is_refused(editor_client):
    text = "# " + "x" * bounded_yaml.MAX_BYTES + "\nversion: 1\n"
    upload = SimpleUploadedFile("big.yaml", text.encode())

    response = editor_client.post(IMPORT, {"file": upload})

    assert response.status_code == 400
    assert "at most 1,048,576 are read" in response.content.decode()


def test_pasted_text_over_the_size_limit_is_refused():
    with pytest.raises(bounded_yaml.Refused, match="at most 1,048,576"):
        bounded_yaml.load("x" * (bounded_yaml.MAX_BYTES + 1))


def test_a_file_with_too_many_values_is_refused(monkeypatch):
    monkeypatch.setattr(bounded_yaml, "MAX_NODES", 10)

    with pytest.raises(bounded_yaml.Refused, match="more than 10 values"):
        bounded_yaml.load("[" + ",".join(["1"] * 11) + "]")


def test_a_file_within_the_bounds_reads_as_before():
    assert bounded_yaml.load("a: [1, 2]\nb: {c: d}\n") == {"a": [1, 2], "b": {"c": "d"}}
