"""API keys: what a script shows to use the REST API (projects/api/).

A key is 32 random bytes, shown once when it is made and stored only as
its SHA-256. A fast hash is enough here (unlike for passwords): the key is
random, so there is nothing to guess from the hash, and looking the hash
up in a unique index is a constant-time comparison by construction.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.db import models
from django.utils import timezone

from projects.models.teams import Team, team_field

# A key's prefix says what it is in logs of the caller's own scripts and
# in secret scanners; the rest is 43 URL-safe characters (32 bytes).
KEY_PREFIX = "um_"
PREFIX_LENGTH = 8
# last_used_at is written at most this often per key, so a busy script
# does not turn every read into a write.
LAST_USED_PRECISION = timedelta(minutes=1)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiKey(models.Model):
    class Scope(models.TextChoices):
        READ = "read", "Read only"
        WRITE = "write", "Read and write"

    # The key sees and changes only its team's objects (projects/api/).
    team = team_field()
    name = models.CharField(max_length=200, help_text="Who or what uses it.")
    scope = models.CharField(max_length=5, choices=Scope, default=Scope.READ)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(
        max_length=PREFIX_LENGTH,
        editable=False,
        help_text="The key's first characters, to tell keys apart.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(
        cls, name: str, scope: str, team: Team | None = None
    ) -> tuple[ApiKey, str]:
        """A new saved key of `team` (the install's first when None) and
        its clear text, which is never stored."""
        api_key = cls(name=name, scope=scope)
        if team is not None:
            api_key.team = team
        key = api_key.set_new_key()
        api_key.save()
        return api_key, key

    def set_new_key(self) -> str:
        """Give this (unsaved) key a fresh secret; returns it in clear."""
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        self.key_hash = hash_key(key)
        self.prefix = key[:PREFIX_LENGTH]
        return key

    @property
    def can_write(self) -> bool:
        return self.scope == self.Scope.WRITE

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def note_use(self, now: datetime | None = None) -> None:
        """Record that the key was used, at most once a minute: a
        compare-and-set, so concurrent requests write once."""
        now = now or timezone.now()
        stale = now - LAST_USED_PRECISION
        if self.last_used_at is not None and self.last_used_at > stale:
            return
        ApiKey.objects.filter(pk=self.pk).filter(
            models.Q(last_used_at__isnull=True) | models.Q(last_used_at__lte=stale)
        ).update(last_used_at=now)
        self.last_used_at = now
