"""API keys in the admin: shown once on creation, listed by prefix,
revoked by an action; and a key never reaches a log line."""

from __future__ import annotations

import logging
import re

from projects.models import ApiKey, AuditEntry, Role
from projects.models.api_keys import hash_key
from projects.teams.audit import MASK
from tests.support.teams import client_of, make_team, member

ADD = "/admin/projects/apikey/add/"
LIST = "/admin/projects/apikey/"


def test_a_key_made_in_the_admin_is_shown_once_and_stored_as_a_hash(admin_client):
    response = admin_client.post(ADD, {"name": "ci", "scope": "write"})

    assert response.status_code == 200
    key = re.search(r'value="(um_[A-Za-z0-9_-]+)"', response.content.decode())[1]
    stored = ApiKey.objects.get()
    assert (stored.name, stored.scope) == ("ci", "write")
    assert stored.key_hash == hash_key(key)
    assert "no-store" in response["Cache-Control"]
    # Not in the session or a message: the next page does not show it.
    listing = admin_client.get(LIST).content.decode()
    assert key not in listing
    assert stored.prefix in listing


def test_revoking_a_key_in_the_admin_locks_it_out(admin_client, write_api):
    assert write_api.get("/api/v1/tags/").status_code == 200
    api_key = ApiKey.objects.get()

    admin_client.post(
        LIST, {"action": "revoke", "_selected_action": [api_key.pk]}, follow=True
    )

    api_key.refresh_from_db()
    assert api_key.revoked_at is not None
    assert write_api.get("/api/v1/tags/").status_code == 401


def test_a_keys_scope_cannot_be_raised_after_it_is_made(admin_client, read_api):
    api_key = ApiKey.objects.get()

    admin_client.post(
        f"{LIST}{api_key.pk}/change/", {"name": "renamed", "scope": "write"}
    )

    api_key.refresh_from_db()
    assert (api_key.name, api_key.scope) == ("renamed", "read")


def test_no_log_line_carries_a_key(read_api, caplog):
    caplog.set_level(logging.DEBUG)
    read_api.get("/api/v1/projects/")
    read_api.post("/api/v1/projects/", {"name": "x"}, format="json")  # 403
    read_api.get("/api/v1/projects/999999/")  # 404
    read_api.credentials(HTTP_AUTHORIZATION=f"Bearer {read_api.key}x")
    read_api.get("/api/v1/projects/")  # 401

    assert caplog.records  # the refusals were logged
    assert read_api.key not in caplog.text


# Teams: a key is its team's, managed by the team's managers ----------------


def test_a_manager_makes_keys_for_their_team_and_sees_only_its_keys(db):
    a, b = make_team("alpha"), make_team("bravo")
    bravo_key, _ = ApiKey.issue("bravo-script", "read", b.team)
    manager = client_of(member(a.team, Role.MANAGER, "mona"))

    made = manager.post(ADD, {"name": "alpha-ci", "scope": "write"})

    assert made.status_code == 200
    assert re.search(r'value="(um_[A-Za-z0-9_-]+)"', made.content.decode())
    assert ApiKey.objects.get(name="alpha-ci").team == a.team
    listing = manager.get(LIST).content.decode()
    assert "alpha-ci" in listing
    assert "bravo" not in listing
    foreign = manager.get(f"{LIST}{bravo_key.pk}/change/", follow=True)
    assert "bravo-script" not in foreign.content.decode()
    manager.post(LIST, {"action": "revoke", "_selected_action": [bravo_key.pk]})
    bravo_key.refresh_from_db()
    assert bravo_key.revoked_at is None


def test_only_managers_see_make_or_revoke_keys(db):
    a = make_team("alpha")
    api_key, _ = ApiKey.issue("alpha-script", "write", a.team)
    for role in (Role.VIEWER, Role.EDITOR):
        user = client_of(member(a.team, role, f"user-{role}"))

        assert user.get(LIST).status_code == 403, role
        assert user.post(ADD, {"name": "mine", "scope": "write"}).status_code == 403
        user.post(LIST, {"action": "revoke", "_selected_action": [api_key.pk]})

    api_key.refresh_from_db()
    assert api_key.revoked_at is None
    assert list(ApiKey.objects.values_list("name", flat=True)) == ["alpha-script"]


def test_making_and_revoking_a_key_is_in_the_audit_log(db):
    a = make_team("alpha")
    manager = client_of(member(a.team, Role.MANAGER, "mona"))
    manager.post(ADD, {"name": "alpha-ci", "scope": "write"})
    api_key = ApiKey.objects.get()

    manager.post(LIST, {"action": "revoke", "_selected_action": [api_key.pk]})

    made, revoked = AuditEntry.objects.filter(object_type="projects.apikey").order_by(
        "pk"
    )
    assert (made.action, made.actor_name, made.via) == ("created", "mona", "admin")
    assert {"field": "key_hash", "old": "", "new": MASK} in made.changes
    assert (revoked.action, revoked.actor_name) == ("changed", "mona")
    assert [c["field"] for c in revoked.changes] == ["revoked_at"]
    assert api_key.key_hash not in str(made.changes)


def test_the_created_page_leads_to_the_api_docs_with_no_inline_code(admin_client):
    html = admin_client.post(ADD, {"name": "ci", "scope": "read"}).content.decode()

    assert 'href="/api/v1/docs/"' in html
    assert 'curl -H "Authorization: Bearer um_' in html
    # The Content-Security-Policy refuses inline styles and handlers.
    assert "style=" not in html
    assert "onclick" not in html


def test_the_api_is_linked_for_editors_not_viewers(db):
    team = make_team("alpha").team
    editor = client_of(member(team, Role.EDITOR, "ed"))
    viewer = client_of(member(team, Role.VIEWER, "vi"))

    assert '<a href="/api/v1/docs/">API</a>' in editor.get("/").content.decode()
    assert '<a href="/api/v1/docs/">API</a>' not in viewer.get("/").content.decode()
    assert '<a href="/api/v1/docs/">API</a>' in editor.get("/admin/").content.decode()


def test_the_api_docs_follow_the_colour_scheme(client, db):
    html = client.get("/api/v1/docs/").content.decode()
    assert '<meta name="color-scheme" content="light dark">' in html
    assert "css/swagger-dark.css" in html
