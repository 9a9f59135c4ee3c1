"""A team secret is write-only: no role reads it back on any page, no
filter compares against it, no other team sees even its name, and the
audit log records its change masked."""

from __future__ import annotations

import pytest

from django.urls import reverse

from projects.models import AuditEntry, Role, TeamSecret
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db

SECRETS = reverse("admin:projects_teamsecret_changelist")
VALUE = "tk_live_5up3r-s3cret-v4lue"


@pytest.fixture
def secret(a) -> TeamSecret:
    return TeamSecret.objects.create(team=a.team, name="shop_password", value=VALUE)


@pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR, Role.MANAGER])
def test_no_role_reads_a_team_secret_on_its_pages(a, secret, role):
    client = client_of(member(a.team, role, "someone"))
    change = reverse("admin:projects_teamsecret_change", args=[secret.pk])
    for page in (client.get(SECRETS), client.get(change)):
        assert VALUE not in page.content.decode()


def test_a_viewer_does_not_even_list_the_secrets(a, secret):
    client = client_of(member(a.team, Role.VIEWER, "viewer"))
    assert client.get(SECRETS).status_code == 403


def test_another_team_does_not_see_it(b, secret):
    client = client_of(member(b.team, Role.MANAGER, "bravo-manager"))
    assert "shop_password" not in client.get(SECRETS).content.decode()


def test_no_filter_compares_against_a_secret(admin_client, secret):
    response = admin_client.get(SECRETS, {"value__startswith": "tk_"})
    assert response.status_code == 400


def test_its_change_is_audited_masked(a, secret):
    client = client_of(member(a.team, Role.EDITOR, "editor"))
    change = reverse("admin:projects_teamsecret_change", args=[secret.pk])
    client.post(change, {"name": "shop_password", "value": "a-new-value-77"})
    secret.refresh_from_db()
    assert secret.value == "a-new-value-77"
    entries = repr(list(AuditEntry.objects.values()))
    assert "shop_password" in entries  # recorded,
    assert "•••" in entries  # masked
    assert "a-new-value-77" not in entries
    assert VALUE not in entries
