from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from projects.housekeeping.retention import prune_results
from projects.housekeeping.runs import run_recorded
from projects.models import HousekeepingRun


class Command(BaseCommand):
    help = (
        "Delete polls older than RESULT_RETENTION_DAYS, in short chunks; "
        "safe to interrupt and to run again."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--days", type=int, help="keep this many days instead (0: keep all)"
        )

    def handle(self, *args, days: int | None = None, **options) -> str:
        if days is not None and days < 0:
            raise CommandError("--days must be 0 or more.")
        pruned = run_recorded(
            HousekeepingRun.Job.PRUNE_RESULTS, lambda: prune_results(days=days)
        )
        return str(pruned)
