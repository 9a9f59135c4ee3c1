from __future__ import annotations

from django.core.management.base import BaseCommand

from projects.housekeeping.storage import table_storage, vacuum
from projects.models import DailyRollup, HourlyRollup, PollResult

MODELS = [PollResult, HourlyRollup, DailyRollup]


class Command(BaseCommand):
    help = (
        "Disk used by polls and rollups: bytes per row, the table and each "
        "index. --vacuum first so dead rows do not count."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--vacuum",
            action="store_true",
            help="VACUUM and ANALYZE first (on SQLite this blocks the writer)",
        )

    def handle(self, *args, **options) -> None:
        for model in MODELS:
            if options["vacuum"]:
                vacuum(model)
            storage = table_storage(model)
            per_row = storage.bytes_per_row
            self.stdout.write(
                f"{storage.table}: {storage.rows:,} rows, "
                f"{storage.total_bytes / 2**20:,.1f} MiB"
                + (f", {per_row:.1f} bytes per row" if per_row else "")
            )
            for relation in storage.relations:
                share = storage.per_row(relation)
                self.stdout.write(
                    f"  {relation.kind:5} {relation.name}: "
                    f"{relation.bytes / 2**20:,.1f} MiB"
                    + (f", {share:.1f} bytes per row" if share else "")
                )
