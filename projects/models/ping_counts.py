from __future__ import annotations

from django.db import models

from projects.models.project import Project


class PingCount(models.Model):
    """How many pings a heartbeat project sent in one minute: the count
    behind PING_RATE_LIMIT.

    In the database, so every web worker on every machine sees the same
    count without Redis, and only a known project's ping can move it. The
    ping writer (polling/pings/limits.py) adds each batch of pings with
    one UPSERT, relying on the unique constraint below, and deletes the
    project's older minutes when a new minute begins: a project has at
    most a row or two.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    # Minutes since the epoch.
    minute = models.BigIntegerField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "minute"], name="ping_count_one_row_a_minute"
            )
        ]

    def __str__(self) -> str:
        return f"project {self.project_id}, minute {self.minute}: {self.count}"
