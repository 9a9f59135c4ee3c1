"""An invitation into a team: one stored row per link a manager sends.

The link carries a random token; the row keeps only its SHA-256, so the
database never holds what the link is worth. An invitation is used once
(`used_at` is set by a compare-and-set in the transaction that makes the
membership), can be revoked by a manager (`revoked_at`), and expires at
`expires_at` (INVITATION_LINK_DAYS after it was sent).
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.utils import timezone

from projects.models.teams import Role, Team


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Invitation(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=7, choices=Role, default=Role.VIEWER)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # The invite page lists a team's pending invitations.
            models.Index(
                fields=["team", "expires_at"],
                name="invitation_pending",
                condition=models.Q(used_at__isnull=True, revoked_at__isnull=True),
            )
        ]

    def __str__(self) -> str:
        return f"{self.email} to {self.team} as {self.role}"

    @property
    def state(self) -> str:
        if self.used_at is not None:
            return "used"
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        return "pending"
