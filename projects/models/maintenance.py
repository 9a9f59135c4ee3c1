from __future__ import annotations

import zoneinfo
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta

from django.core.exceptions import ValidationError
from django.db import models

from monitor.dates import when
from projects.models.project import Project
from projects.models.teams import team_field

WEEKDAYS = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
]


def validate_time_zone(name: str) -> None:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as error:
        raise ValidationError(
            f"Unknown time zone {name!r}; use a name like Europe/Berlin or UTC."
        ) from error


class MaintenanceWindow(models.Model):
    """A planned time when some projects (or all) may fail without anyone
    being told: polls go on and are stored, but no incident opens and
    nothing is sent while the window is active."""

    class Repeat(models.TextChoices):
        ONCE = "once", "Once"
        WEEKLY = "weekly", "Every week"

    team = team_field()
    name = models.CharField(max_length=200)
    repeat = models.CharField(max_length=6, choices=Repeat, default=Repeat.ONCE)
    starts_at = models.DateTimeField(null=True, blank=True, help_text="Once only.")
    ends_at = models.DateTimeField(null=True, blank=True, help_text="Once only.")
    weekdays = models.JSONField(
        default=list,
        blank=True,
        help_text="Weekly only: the days a window starts on (0 is Monday).",
    )
    start_time = models.TimeField(null=True, blank=True, help_text="Weekly only.")
    end_time = models.TimeField(
        null=True,
        blank=True,
        help_text="Weekly only; at or before the start time means the next day.",
    )
    time_zone = models.CharField(
        max_length=64,
        default="UTC",
        validators=[validate_time_zone],
        help_text="Weekly only: the zone the days and times are in.",
    )
    all_projects = models.BooleanField(default=False)
    projects = models.ManyToManyField(
        Project, blank=True, related_name="maintenance_windows"
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Status pages' cache version notices an edited window by this.
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        if self.repeat == self.Repeat.ONCE:
            self._clean_once()
        else:
            self._clean_weekly()

    def _clean_once(self) -> None:
        errors = {}
        for field in ("starts_at", "ends_at"):
            if getattr(self, field) is None:
                errors[field] = "A one-off window needs a start and an end."
        if not errors and self.ends_at <= self.starts_at:
            errors["ends_at"] = "The end must come after the start."
        if errors:
            raise ValidationError(errors)

    def _clean_weekly(self) -> None:
        errors = {}
        days = self.weekdays
        if not days or not all(day in range(7) for day in days):
            errors["weekdays"] = "Choose at least one day of the week."
        for field in ("start_time", "end_time"):
            if getattr(self, field) is None:
                errors[field] = "A weekly window needs a start and an end time."
        if errors:
            raise ValidationError(errors)

    @property
    def schedule_display(self) -> str:
        """The schedule as people say it: "Sun 02:00-04:00 Europe/Berlin"."""
        if self.repeat == self.Repeat.ONCE:
            return f"{when(self.starts_at)} to {when(self.ends_at)}"
        days = ", ".join(WEEKDAYS[day][:3] for day in sorted(self.weekdays))
        return f"{days} {self.start_time:%H:%M}-{self.end_time:%H:%M} {self.time_zone}"

    def occurrences(
        self, start: datetime, end: datetime
    ) -> Iterator[tuple[datetime, datetime]]:
        """The (start, end) spans of this window that overlap [start, end),
        in UTC, oldest first and not clipped."""
        if self.repeat == self.Repeat.ONCE:
            if self.starts_at < end and self.ends_at > start:
                yield self.starts_at, self.ends_at
            return
        zone = zoneinfo.ZoneInfo(self.time_zone)
        # A weekly span may start the day before `start` and reach into it.
        day = start.astimezone(zone).date() - timedelta(days=1)
        last_day = end.astimezone(zone).date()
        while day <= last_day:
            if day.weekday() in self.weekdays:
                span = self._span_on(day, zone)
                if span[0] < end and span[1] > start:
                    yield span
            day += timedelta(days=1)

    def _span_on(self, day: date, zone: zoneinfo.ZoneInfo) -> tuple[datetime, datetime]:
        end_day = day if self.end_time > self.start_time else day + timedelta(days=1)
        return _utc(day, self.start_time, zone), _utc(end_day, self.end_time, zone)

    def is_active(self, at: datetime) -> bool:
        return any(True for _ in self.occurrences(at, at + timedelta(microseconds=1)))


def _utc(day: date, moment: time, zone: zoneinfo.ZoneInfo) -> datetime:
    return datetime.combine(day, moment, tzinfo=zone).astimezone(UTC)
