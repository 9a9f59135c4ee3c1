"""The audit log: who changed what in a team, and how (projects/teams/audit.py
writes it)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from projects.models.teams import Team


class AuditEntry(models.Model):
    class Action(models.TextChoices):
        CREATED = "created", "Created"
        CHANGED = "changed", "Changed"
        DELETED = "deleted", "Deleted"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    # A person (kept as a name too: the entry outlives the account), or an
    # API key's or import's name with no user.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    actor_name = models.CharField(max_length=200)
    via = models.CharField(max_length=20, help_text="admin, api or import")
    object_type = models.CharField(max_length=100)  # app_label.model_name
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200)
    action = models.CharField(max_length=7, choices=Action)
    # [{"field": ..., "old": ..., "new": ...}], secrets masked.
    changes = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"
        indexes = [
            models.Index(fields=["team", "-at"], name="audit_team_time"),
            models.Index(fields=["object_type", "object_id"], name="audit_object"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_name} {self.action} {self.object_repr}"
