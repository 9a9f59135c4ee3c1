"""Service level objectives and their burn-rate alerts.

What is computed from them (attainment, error budget, burn rate, the
forecast) lives in projects/objectives/, with every formula in
docs/objectives.md.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from monitor.dates import when
from projects.models.notifications import NotificationChannel
from projects.models.project import Project
from projects.models.status_pages import StatusPageSection
from projects.models.tags import Tag
from projects.models.teams import NamedInTeam, team_field

WINDOW_DAYS = (7, 28, 30)


class ServiceLevelObjective(NamedInTeam):
    """A target for a project's polls, or for all the polls of a tag's
    projects or of a status-page section's: the share of good polls over
    a rolling window of `window_days` or over the calendar month."""

    class Kind(models.TextChoices):
        AVAILABILITY = "availability", "Availability: polls that are up"
        LATENCY = "latency", "Latency: polls faster than a threshold"

    team = team_field()
    name = models.CharField(max_length=200)
    project = models.ForeignKey(
        Project,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="objectives",
    )
    tag = models.ForeignKey(
        Tag,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="objectives",
        help_text="Or all the polls of the projects with this tag.",
    )
    section = models.ForeignKey(
        StatusPageSection,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="objectives",
        help_text="Or all the polls of a status-page section's projects.",
    )
    kind = models.CharField(max_length=12, choices=Kind, default=Kind.AVAILABILITY)
    target_percent = models.FloatField(
        validators=[MinValueValidator(50), MaxValueValidator(99.999)],
        help_text="Good polls out of all counted, e.g. 99.9.",
    )
    threshold_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Latency only: a poll is good when it got a response "
        "this fast or faster.",
    )
    window_days = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        choices=[(d, f"{d} days") for d in WINDOW_DAYS],
        help_text="A rolling window; blank with calendar month on.",
    )
    calendar_month = models.BooleanField(
        default=False, help_text="Over the current UTC calendar month instead."
    )
    exclude_maintenance = models.BooleanField(
        default=True,
        help_text="Availability: polls during maintenance windows are not "
        "counted (neither good nor bad).",
    )
    channels = models.ManyToManyField(
        NotificationChannel,
        blank=True,
        related_name="objectives",
        help_text="Told when any burn-rate rule fires.",
    )
    # Each rule's own channels, told besides `channels` (RULES in
    # projects/objectives/alerts.py names them; a channel in both hears
    # each message once).
    page_1h_channels = models.ManyToManyField(
        NotificationChannel,
        blank=True,
        related_name="+",
        help_text="Told only when 14.4 times the budget burns over 1 h and 5 min.",
    )
    page_6h_channels = models.ManyToManyField(
        NotificationChannel,
        blank=True,
        related_name="+",
        help_text="Told only when 6 times the budget burns over 6 h and 30 min.",
    )
    ticket_3d_channels = models.ManyToManyField(
        NotificationChannel,
        blank=True,
        related_name="+",
        help_text="Told only when the budget burns at its rate over 3 d and 6 h.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "name"], name="objective_name_per_team"
            ),
            models.CheckConstraint(
                condition=models.Q(
                    project__isnull=False, tag__isnull=True, section__isnull=True
                )
                | models.Q(
                    project__isnull=True, tag__isnull=False, section__isnull=True
                )
                | models.Q(
                    project__isnull=True, tag__isnull=True, section__isnull=False
                ),
                name="objective_one_target",
                violation_error_message="Choose a project, a tag or a section: "
                "one of them.",
            ),
            models.CheckConstraint(
                condition=models.Q(window_days__isnull=False, calendar_month=False)
                | models.Q(window_days__isnull=True, calendar_month=True),
                name="objective_window_or_month",
                violation_error_message="Choose a window of days or the "
                "calendar month, not both.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        if self.kind == self.Kind.LATENCY and self.threshold_ms is None:
            raise ValidationError(
                {"threshold_ms": "A latency objective needs a threshold."}
            )
        if self.kind == self.Kind.AVAILABILITY and self.threshold_ms is not None:
            raise ValidationError(
                {"threshold_ms": "Only a latency objective has a threshold."}
            )
        targets = [
            name
            for name in ("project", "tag", "section")
            if getattr(self, f"{name}_id") is not None
        ]
        if len(targets) > 1:
            raise ValidationError(
                {targets[-1]: "Choose a project, a tag or a section, not several."}
            )
        if not targets:
            raise ValidationError(
                {"project": "Choose a project, a tag or a status-page section."}
            )
        if self.section_id is not None and self.section.page.team_id != self.team_id:
            raise ValidationError({"section": "Choose a section of this team's page."})
        if self.calendar_month and self.window_days:
            raise ValidationError(
                {"window_days": "Leave it blank with calendar month on."}
            )
        if not self.calendar_month and not self.window_days:
            raise ValidationError(
                {"window_days": "Choose 7, 28 or 30 days, or the calendar month."}
            )


class ObjectiveAlert(models.Model):
    """One episode of a burn-rate rule firing for an objective, from the
    evaluation that saw both its windows burn too fast until the one that
    saw them calm. One open per objective and rule: the evaluation
    (projects/objectives/alerts.py) relies on it to tell once."""

    objective = models.ForeignKey(
        ServiceLevelObjective, on_delete=models.CASCADE, related_name="alerts"
    )
    rule = models.CharField(max_length=20)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    burn_rate = models.FloatField(help_text="The long window's, when it fired.")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["objective", "rule"],
                condition=models.Q(ended_at__isnull=True),
                name="objective_alert_one_open_per_rule",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.objective} {self.rule} since {when(self.started_at)}"
