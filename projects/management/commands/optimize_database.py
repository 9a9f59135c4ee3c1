from __future__ import annotations

from django.core.management.base import BaseCommand

from projects.housekeeping.optimize import optimize_database
from projects.housekeeping.runs import run_recorded
from projects.models import HousekeepingRun


class Command(BaseCommand):
    help = "PRAGMA optimize on SQLite; nothing on PostgreSQL (autovacuum)."

    def handle(self, *args, **options) -> str:
        return run_recorded(HousekeepingRun.Job.OPTIMIZE_DATABASE, optimize_database)
