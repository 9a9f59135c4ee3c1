"""Invitations: a manager invites an address into the current team with a
role; the invitee follows a signed link that expires, and joins, either
signed in already or by setting a password for a new account.

The link is the permission: it names the team, the role and the address,
signed with SECRET_KEY (django.core.signing), so nothing is stored until
it is used. Joining twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.mail import EmailMessage
from django.db import transaction
from django.urls import reverse

from projects.models import Membership, Role, Team
from projects.teams.account_mail import queue_email

SALT = "projects.teams.invitation"
INVITATION_MAX_AGE = 7 * 24 * 60 * 60


@dataclass(frozen=True)
class Invitation:
    team: Team
    role: str
    email: str


def invitation_token(team: Team, role: str, email: str) -> str:
    return signing.dumps({"team": team.pk, "role": role, "email": email}, salt=SALT)


def invitation_from_token(token: str) -> Invitation:
    """Raises signing.SignatureExpired or signing.BadSignature (also for a
    team since deleted)."""
    data = signing.loads(token, salt=SALT, max_age=INVITATION_MAX_AGE)
    team = Team.objects.filter(pk=data["team"]).first()
    if team is None or data["role"] not in Role.values:
        raise signing.BadSignature("No such team.")
    return Invitation(team, data["role"], data["email"])


def send_invitation(team: Team, role: str, email: str, *, by) -> str:
    """Queue the e-mail with the link (the tasks process sends it); returns
    the link."""
    path = reverse("teams:join", args=[invitation_token(team, role, email)])
    link = f"{settings.SITE_URL.rstrip('/')}{path}"
    days = INVITATION_MAX_AGE // 86400
    message = EmailMessage(
        f"You are invited to {team.name} on the uptime monitor",
        f"{by.get_username()} invites you to the team {team.name} as "
        f"{Role(role).label.lower()}.\n\nJoin within {days} days: {link}\n",
        settings.DEFAULT_FROM_EMAIL,
        [email],
    )
    queue_email(message)
    return link


@transaction.atomic
def join(invitation: Invitation, user) -> Membership:
    """Make `user` a member (staff, so the admin lets them in); an existing
    membership keeps the higher of its role and the invited one."""
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    membership, created = Membership.objects.get_or_create(
        user=user, team=invitation.team, defaults={"role": invitation.role}
    )
    if not created and not membership.allows(invitation.role):
        membership.role = invitation.role
        membership.save(update_fields=["role"])
    return membership


def new_member(invitation: Invitation, username: str, password: str):
    user = get_user_model().objects.create_user(
        username, email=invitation.email, password=password
    )
    join(invitation, user)
    return user
