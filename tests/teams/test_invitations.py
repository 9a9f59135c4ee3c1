"""People: a manager invites an address by e-mail; the signed link lets
the invitee make an account (or use theirs) and join with the role; the
link expires and cannot be altered. Password reset goes by e-mail too."""

from __future__ import annotations

import re

import pytest

from django.contrib.auth.models import User
from django.core import mail, signing
from django.test import Client
from django.urls import reverse

from projects.models import Membership, Role
from projects.notifications.account_mail import deliver_account_mail
from projects.teams import invitations
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


def test_someone_signed_in_joins_with_their_account(a):
    manager = client_of(member(a.team, Role.MANAGER, "mona"))
    link = path_of(invite(manager, role=Role.VIEWER))
    existing = member(None, None, "sam")

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


def test_an_expired_or_altered_link_is_refused(a, monkeypatch):
    token = invitations.invitation_token(a.team, Role.MANAGER, "x@example.test")
    client = Client()

    altered = client.get(reverse("teams:join", args=[token[:-2] + "xx"]))
    monkeypatch.setattr(invitations, "INVITATION_MAX_AGE", -1)
    expired = client.post(
        reverse("teams:join", args=[token]),
        {"username": "x", "password": "a long pass 42!"},
    )

    assert altered.status_code == 404
    assert expired.status_code == 410
    assert not User.objects.filter(username="x").exists()


def test_a_token_names_only_its_own_team_and_role(a):
    token = invitations.invitation_token(a.team, Role.VIEWER, "x@example.test")
    data = signing.loads(token, salt=invitations.SALT)
    data["role"] = Role.MANAGER
    forged = signing.dumps(data, salt="another salt")

    with pytest.raises(signing.BadSignature):
        invitations.invitation_from_token(forged)


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
