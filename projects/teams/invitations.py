"""Invitations: a manager invites an address into the current team with a
role; the invitee follows the link in the e-mail and joins, either signed
in already or by setting a password for a new account.

Each link is a stored Invitation (projects/models/invitations.py):
- single-use: `claim` sets `used_at` by compare-and-set in the transaction
  that makes the membership, so a replay, even a concurrent one, finds it
  used and changes nothing;
- bound to the invited address: a signed-in account joins only when that
  address is one of its verified addresses; a new account gets the address,
  verified, since the link reached it;
- revocable by the team's managers, superseded by a newer invitation of
  the same address, and revoked by itself when the invitee's membership is
  made, removed or changed (a removed member's old link
  does not let them back in);
- expiring INVITATION_LINK_DAYS after it was sent.
Joins and revocations are written to the audit log, by the inviter, via
"invitation".
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from allauth.account.models import EmailAddress

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from projects.models import Invitation, Membership, Role, Team
from projects.models.invitations import token_hash
from projects.teams.account_mail import queue_email
from projects.teams.audit import Actor, record, snapshot


class Refused(Exception):
    """Why an invitation cannot be used; `status` is the HTTP answer."""

    def __init__(self, outcome: str, status: int) -> None:
        super().__init__(outcome)
        self.outcome, self.status = outcome, status


def link_days() -> int:
    return settings.INVITATION_LINK_DAYS


def invitation_from_token(token: str) -> Invitation:
    """The pending invitation of `token`; raises Refused: 404 for a token
    never issued, 410 for one used, revoked or expired."""
    invitation = (
        Invitation.objects.select_related("team", "invited_by")
        .filter(token_hash=token_hash(token))
        .first()
    )
    if invitation is None:
        raise Refused("invalid", 404)
    if invitation.state != "pending":
        raise Refused(invitation.state, 410)
    return invitation


def may_join(invitation: Invitation, user) -> bool:
    """Only an account that has verified the invited address."""
    return EmailAddress.objects.filter(
        user=user, email__iexact=invitation.email, verified=True
    ).exists()


def send_invitation(team: Team, role: str, email: str, *, by) -> str:
    """Store the invitation and queue the e-mail with the link (the tasks
    process sends it); returns the link."""
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    # A new invitation supersedes the address's pending ones in the team.
    pending(team.pk).filter(email__iexact=email).update(revoked_at=now)
    invitation = Invitation.objects.create(
        team=team,
        email=email,
        role=role,
        token_hash=token_hash(token),
        invited_by=by,
        created_at=now,
        expires_at=now + timedelta(days=link_days()),
    )
    record(invitation, {}, actor=Actor.of_user(by, via="invitation"))
    path = reverse("teams:join", args=[token])
    link = f"{settings.SITE_URL.rstrip('/')}{path}"
    message = EmailMessage(
        f"You are invited to {team.name} on the uptime monitor",
        f"{by.get_username()} invites you to the team {team.name} as "
        f"{Role(role).label.lower()}.\n\nJoin within {link_days()} days: {link}\n"
        "The link works once, for this address only.\n",
        settings.DEFAULT_FROM_EMAIL,
        [email],
    )
    queue_email(message)
    return link


def revoke(invitation: Invitation, *, by) -> bool:
    """False when it was no longer pending (used, revoked or expired)."""
    before = snapshot(invitation)
    revoked = Invitation.objects.filter(
        pk=invitation.pk,
        used_at__isnull=True,
        revoked_at__isnull=True,
        expires_at__gt=timezone.now(),
    ).update(revoked_at=timezone.now())
    if revoked:
        invitation.refresh_from_db()
        record(invitation, before, actor=Actor.of_user(by, via="invitation"))
    return bool(revoked)


@transaction.atomic
def join(invitation: Invitation, user) -> Membership:
    """Use the invitation for `user` (raises Refused when it was used,
    revoked or expired meanwhile): make them a member (staff, so the admin
    lets them in); an existing membership keeps the higher of its role and
    the invited one."""
    claimed = Invitation.objects.filter(
        pk=invitation.pk,
        used_at__isnull=True,
        revoked_at__isnull=True,
        expires_at__gt=timezone.now(),
    ).update(used_at=timezone.now(), used_by=user)
    if not claimed:
        raise Refused("used", 410)
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    membership = Membership.objects.filter(user=user, team=invitation.team).first()
    before = snapshot(membership)
    if membership is None:
        membership = Membership(user=user, team=invitation.team, role=invitation.role)
    elif membership.allows(invitation.role):
        return membership
    else:
        membership.role = invitation.role
    membership.save()
    inviter = invitation.invited_by
    actor = Actor(
        inviter.get_username() if inviter else "(invitation)", "invitation", inviter
    )
    record(membership, before, actor=actor)
    return membership


@transaction.atomic
def new_member(invitation: Invitation, username: str, password: str):
    """A new account for the invited address, verified (the link reached it)."""
    user = get_user_model().objects.create_user(
        username, email=invitation.email, password=password
    )
    EmailAddress.objects.create(
        user=user, email=invitation.email, verified=True, primary=True
    )
    join(invitation, user)
    return user


def pending(team_id: int):
    return Invitation.objects.filter(
        team_id=team_id,
        used_at__isnull=True,
        revoked_at__isnull=True,
        expires_at__gt=timezone.now(),
    ).select_related("invited_by")


def revoke_invitations_of_member(sender, instance: Membership, **kwargs) -> None:
    """A member's membership made, changed or removed revokes the pending
    invitations to their addresses in that team, so an old link can
    neither restore a removed member nor undo a demotion (post_save and
    post_delete of Membership, connected in apps.py)."""
    user = get_user_model().objects.filter(pk=instance.user_id).first()
    if user is None:
        return
    addresses = set(
        EmailAddress.objects.filter(user=user).values_list("email", flat=True)
    )
    addresses.add(user.email)
    matching = Q()
    for address in filter(None, addresses):
        matching |= Q(email__iexact=address)
    if matching:
        pending(instance.team_id).filter(matching).update(revoked_at=timezone.now())
