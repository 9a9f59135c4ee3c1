from __future__ import annotations

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from projects.housekeeping.compaction import compact_rollups
from projects.housekeeping.runs import run_recorded
from projects.models import HousekeepingRun


class Command(BaseCommand):
    help = (
        "Sum finished days of hourly rollups into daily rollups, then remove "
        "rollups past HOURLY_RETENTION_DAYS and DAILY_RETENTION_DAYS."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--since",
            help="recompute the daily rollups from this UTC day (YYYY-MM-DD)",
        )

    def handle(self, *args, since: str | None = None, **options) -> str:
        try:
            first = date.fromisoformat(since) if since else None
        except ValueError as error:
            raise CommandError(f"--since: {error}") from error
        compacted = run_recorded(
            HousekeepingRun.Job.COMPACT_ROLLUPS, lambda: compact_rollups(since=first)
        )
        return str(compacted)
