"""People: a manager invites an address by e-mail; the link lets the
invitee make an account (or use theirs, if it has verified the address)
and join with the role, once; the link expires, can be revoked and cannot
be altered. Password reset goes by e-mail too."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest
from allauth.account.models import EmailAddress

from django.contrib.auth.models import User
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from projects.models import AuditEntry, Invitation, Membership, Role
from projects.notifications.account_mail import deliver_account_mail
from projects.teams.audit import entries_for
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db

INVITE = reverse("teams:invite")


def invite(client, email="new@example.test", role=Role.EDITOR) -> str:
    """The link from the invitation e-mail, once the tasks process's step
    has sent it (tests/notifications/test_account_mail.py)."""
    response = client.post(INVITE, {"email": email, "role": role})
    assert response.status_code == 302
    deliver_account_mail()
    (message,) = mail.outbox
    assert message.to == [email]
    return re.search(r"https?://\S+", message.body).group(0)


def path_of(link: str) -> str:
    return "/" + link.split("/", 3)[3]


def test_an_invitee_makes_an_account_and_joins_with_the_role(a):
    manager = client_of(member(a.team, Role.MANAGER, "mona"))
    link = path_of(invite(manager))
    stranger = Client()

    assert "Join Alpha" in stranger.get(link).content.decode()
    joined = stranger.post(link, {"username": "newbie", "password": "a long pass 42!"})

    assert joined.status_code == 302
    user = User.objects.get(username="newbie")
    assert user.email == "new@example.test"
    assert user.is_staff
    assert Membership.objects.get(user=user).role == Role.EDITOR
    overview = stranger.get(reverse("dashboard:overview")).content.decode()
    assert "alpha-site" in overview


def verified(user: User, address: str | None = None) -> User:
    EmailAddress.objects.create(
        user=user, email=address or user.email, verified=True, primary=True
    )
    return user


def test_someone_signed_in_joins_with_their_account(a):
    manager = client_of(member(a.team, Role.MANAGER, "mona"))
    link = path_of(invite(manager, email="sam@example.test", role=Role.VIEWER))
    existing = verified(member(None, None, "sam"))

    client_of(existing).post(link)

    assert Membership.objects.get(user=existing, team=a.team).role == Role.VIEWER


def test_only_a_manager_invites(a):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))

    assert editor.get(INVITE).status_code == 403
    assert (
        editor.post(INVITE, {"email": "x@example.test", "role": "manager"}).status_code
        == 403
    )
    assert mail.outbox == []


def test_an_expired_or_altered_link_is_refused(a, settings):
    manager = member(a.team, Role.MANAGER, "mona")
    link = path_of(invite(client_of(manager), email="x@example.test"))
    client = Client()

    altered = client.get(link[:-3] + "xx/")
    Invitation.objects.update(expires_at=timezone.now())
    expired = client.post(link, {"username": "x", "password": "a long pass 42!"})

    assert altered.status_code == 404
    assert expired.status_code == 410
    assert "This invitation has expired" in expired.content.decode()
    assert not User.objects.filter(username="x").exists()


def test_a_link_lasts_invitation_link_days(a, settings):
    settings.INVITATION_LINK_DAYS = 2
    manager = member(a.team, Role.MANAGER, "mona")

    invite(client_of(manager))

    invitation = Invitation.objects.get()
    assert invitation.expires_at - invitation.created_at == timedelta(days=2)
    assert "Join within 2 days" in mail.outbox[0].body


def test_the_link_is_not_stored_only_its_hash(a):
    manager = member(a.team, Role.MANAGER, "mona")
    link = path_of(invite(client_of(manager)))
    token = link.rstrip("/").rsplit("/", 1)[1]

    invitation = Invitation.objects.get()
    assert token not in str(vars(invitation))
    assert invitation.token_hash == hashlib.sha256(token.encode()).hexdigest()


def test_a_link_makes_one_account_only(a):
    """S4-02: the same link made any number of accounts."""
    manager = member(a.team, Role.MANAGER, "mona")
    link = path_of(invite(client_of(manager), role=Role.MANAGER))

    first = Client().post(link, {"username": "inv1", "password": "a long pass 42!"})
    second = Client().post(link, {"username": "inv2", "password": "a long pass 42!"})

    assert first.status_code == 302
    assert second.status_code == 410
    assert "This invitation has been used" in second.content.decode()
    assert not User.objects.filter(username="inv2").exists()


def test_the_new_account_has_the_invited_address_verified(a):
    manager = member(a.team, Role.MANAGER, "mona")
    link = path_of(invite(client_of(manager)))

    Client().post(link, {"username": "newbie", "password": "a long pass 42!"})

    address = EmailAddress.objects.get(user__username="newbie")
    assert (address.email, address.verified) == ("new@example.test", True)


def test_another_persons_account_cannot_join_with_the_link(a):
    """S4-02: b_viewer, signed in, joined Team A as manager with a link
    sent to someone else."""
    manager = member(a.team, Role.MANAGER, "mona")
    link = path_of(invite(client_of(manager), email="new@example.test"))
    other = verified(member(None, None, "bea"))

    shown = client_of(other).get(link)
    posted = client_of(other).post(link)

    assert shown.status_code == posted.status_code == 403
    assert "This invitation is for another address" in posted.content.decode()
    assert not Membership.objects.filter(user=other).exists()
    assert Invitation.objects.get().used_at is None


def test_an_unverified_address_is_not_enough(a):
    manager = member(a.team, Role.MANAGER, "mona")
    link = path_of(invite(client_of(manager), email="sam@example.test"))
    sam = member(None, None, "sam")  # user.email matches, never verified
    EmailAddress.objects.create(user=sam, email=sam.email, verified=False)

    assert client_of(sam).post(link).status_code == 403
    assert not Membership.objects.filter(user=sam).exists()


def test_a_removed_member_cannot_come_back_with_their_old_link(a):
    manager = member(a.team, Role.MANAGER, "mona")
    first = path_of(invite(client_of(manager), email="sam@example.test"))
    sam = verified(member(None, None, "sam"))
    client_of(sam).post(first)
    mail.outbox.clear()
    pending_link = path_of(invite(client_of(manager), email="sam@example.test"))

    Membership.objects.get(user=sam, team=a.team).delete()
    replayed = client_of(sam).post(first)
    other_link = client_of(sam).post(pending_link)

    assert replayed.status_code == other_link.status_code == 410
    assert not Membership.objects.filter(user=sam, team=a.team).exists()


def test_a_newer_invitation_supersedes_the_older_one(a):
    manager = member(a.team, Role.MANAGER, "mona")
    older = path_of(invite(client_of(manager), role=Role.MANAGER))
    mail.outbox.clear()
    newer = path_of(invite(client_of(manager), role=Role.VIEWER))

    stale = Client().post(older, {"username": "n1", "password": "a long pass 42!"})
    fresh = Client().post(newer, {"username": "n2", "password": "a long pass 42!"})

    assert (stale.status_code, fresh.status_code) == (410, 302)
    assert Membership.objects.get(user__username="n2").role == Role.VIEWER


def test_a_demoted_member_cannot_restore_their_role_by_replay(a):
    manager = member(a.team, Role.MANAGER, "mona")
    link = path_of(invite(client_of(manager), email="sam@example.test"))
    sam = verified(member(None, None, "sam"))
    client_of(sam).post(link)
    Membership.objects.filter(user=sam).update(role=Role.VIEWER)

    assert client_of(sam).post(link).status_code == 410
    assert Membership.objects.get(user=sam, team=a.team).role == Role.VIEWER


def test_a_lower_role_never_lowers_a_membership(a):
    manager = member(a.team, Role.MANAGER, "mona")
    sam = verified(member(a.team, Role.EDITOR, "sam"))
    link = path_of(invite(client_of(manager), email=sam.email, role=Role.VIEWER))

    client_of(sam).post(link)

    assert Membership.objects.get(user=sam, team=a.team).role == Role.EDITOR


def test_a_manager_revokes_a_pending_invitation(a):
    mona = member(a.team, Role.MANAGER, "mona")
    link = path_of(invite(client_of(mona)))
    invitation = Invitation.objects.get()
    page = client_of(mona).get(INVITE).content.decode()
    assert "new@example.test" in page

    revoked = client_of(mona).post(
        reverse("teams:revoke_invitation", args=[invitation.pk])
    )
    joined = Client().post(link, {"username": "late", "password": "a long pass 42!"})

    assert revoked.status_code == 302
    assert joined.status_code == 410
    assert "withdrawn" in joined.content.decode()
    assert "new@example.test" not in client_of(mona).get(INVITE).content.decode()
    entry = entries_for(invitation).get(action=AuditEntry.Action.CHANGED)
    assert entry.actor_name == "mona"
    assert {"field": "token_hash", "old": "•••", "new": "•••"} not in entry.changes


def test_only_the_teams_managers_revoke(a, b):
    mona = member(a.team, Role.MANAGER, "mona")
    invite(client_of(mona))
    invitation = Invitation.objects.get()
    revoke = reverse("teams:revoke_invitation", args=[invitation.pk])
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))
    other_manager = client_of(member(b.team, Role.MANAGER, "bob"))

    assert editor.post(revoke).status_code == 403
    assert other_manager.post(revoke).status_code == 404
    assert Invitation.objects.get().revoked_at is None


def test_a_join_is_audited_by_the_inviter_via_invitation(a):
    """S4-09: memberships made or raised through a link left no entry."""
    mona = member(a.team, Role.MANAGER, "mona")
    sam = verified(member(a.team, Role.VIEWER, "sam"))
    raise_link = path_of(invite(client_of(mona), email=sam.email, role=Role.EDITOR))
    mail.outbox.clear()
    new_link = path_of(invite(client_of(mona)))

    client_of(sam).post(raise_link)
    Client().post(new_link, {"username": "newbie", "password": "a long pass 42!"})

    raised = entries_for(Membership.objects.get(user=sam)).get()
    created = entries_for(Membership.objects.get(user__username="newbie")).get()
    assert (raised.action, raised.actor_name, raised.via) == (
        AuditEntry.Action.CHANGED,
        "mona",
        "invitation",
    )
    assert {"field": "role", "old": "viewer", "new": "editor"} in raised.changes
    assert (created.action, created.actor, created.via) == (
        AuditEntry.Action.CREATED,
        mona,
        "invitation",
    )


def test_a_password_is_reset_by_e_mail(a):
    user = member(a.team, Role.VIEWER, "vera")
    client = Client()

    client.post(reverse("account_reset_password"), {"email": user.email})
    deliver_account_mail()
    (message,) = mail.outbox
    link = re.search(r"https?://\S+/password/reset/key/\S+/", message.body).group(0)
    form = client.get(path_of(link), follow=True)
    client.post(
        form.redirect_chain[-1][0],
        {"password1": "another long pass 7", "password2": "another long pass 7"},
    )

    user.refresh_from_db()
    assert user.check_password("another long pass 7")
    login = client.get(reverse("account_login")).content.decode()
    assert reverse("account_reset_password") in login
