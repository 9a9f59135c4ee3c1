from __future__ import annotations

from django.db import models

from monitor.dates import when


class HousekeepingRun(models.Model):
    """One run of a housekeeping job, for the poller page and the admin:
    when it ran, how long, how many rows it removed, and how it ended."""

    class Job(models.TextChoices):
        PRUNE_RESULTS = "prune_results", "Prune old polls"
        COMPACT_ROLLUPS = "compact_rollups", "Compact rollups"
        OPTIMIZE_DATABASE = "optimize_database", "Optimize the database"

    job = models.CharField(max_length=40, choices=Job)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    rows_removed = models.BigIntegerField(default=0)
    summary = models.CharField(max_length=300, blank=True)
    # Empty when the run succeeded.
    error = models.TextField(blank=True)

    class Meta:
        indexes = [
            # The latest runs of each job: the poller page.
            models.Index(fields=["job", "-started_at"], name="housekeeping_latest"),
        ]

    def __str__(self) -> str:
        return f"{self.job} at {when(self.started_at)}"

    @property
    def duration_seconds(self) -> float | None:
        """None while the run has not finished."""
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()
