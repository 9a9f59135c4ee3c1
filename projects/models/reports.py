from __future__ import annotations

from django.db import models

from projects.models.teams import Team


class MonthlyReport(models.Model):
    """A team's monthly report e-mail, queued once: the row is made in the
    transaction that queues the message (projects/reports/mail.py), and
    there is one per team and month, so a restarted tasks process or two
    of them running the schedule at once queue it once."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="+")
    month = models.DateField(help_text="The first day of the month reported.")
    recipients = models.TextField()
    queued_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["team", "month"], name="monthly_report_once_per_team"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.team} {self.month:%Y-%m}"
