"""Escalation: when nobody acknowledges an incident, tell more channels.

A project's steps say "after N minutes unacknowledged, notify these
channels". The tasks process fires them (projects.notifications.
escalation); each firing is one Escalation row, unique per incident and
step, written in the transaction that queues its notifications, so a
restart or a second tasks process neither loses nor repeats a step.

Steps belong to a project today. When tags arrive, a step will belong to a
project or a tag: `project` becomes nullable beside a `tag` foreign key,
with a check constraint that exactly one is set; nothing else changes.
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from projects.models.incidents import Incident
from projects.models.notifications import NotificationChannel
from projects.models.project import Project

# A week: a step later than that is a mistake, not a policy.
MAX_DELAY_MINUTES = 7 * 24 * 60


class EscalationStep(models.Model):
    """After `delay_minutes` without an acknowledgement, tell `channels`."""

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="escalation_steps"
    )
    position = models.PositiveSmallIntegerField(
        default=0, help_text="Steps are listed in this order."
    )
    delay_minutes = models.PositiveIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(MAX_DELAY_MINUTES)],
        help_text="Minutes after the incident was confirmed, while nobody has "
        "acknowledged it.",
    )
    channels = models.ManyToManyField(
        NotificationChannel, related_name="escalation_steps"
    )

    class Meta:
        ordering = ["project", "position", "delay_minutes", "id"]

    def __str__(self) -> str:
        return f"after {self.delay_minutes} min"


class Escalation(models.Model):
    """One step fired for one incident: its channels were told."""

    incident = models.ForeignKey(
        Incident, on_delete=models.CASCADE, related_name="escalations"
    )
    step = models.ForeignKey(
        EscalationStep, on_delete=models.CASCADE, related_name="firings"
    )
    fired_at = models.DateTimeField()

    class Meta:
        ordering = ["fired_at", "id"]
        constraints = [
            # The escalation task relies on it: of two runs (a restart, a
            # second tasks process) only one fires a step.
            models.UniqueConstraint(
                fields=["incident", "step"], name="escalation_once_per_step"
            ),
        ]

    def __str__(self) -> str:
        return f"incident {self.incident_id} step {self.step_id} at {self.fired_at}"
