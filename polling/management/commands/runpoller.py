from __future__ import annotations

import logging
from dataclasses import fields

from django.core.checks import Tags
from django.core.management.base import BaseCommand, CommandError

from monitor.log_format import as_log_line
from polling.run.options import CannotRun, RunOptions
from polling.run.parent import run_parent
from polling.run.poller import run_poller
from polling.system_checks import POLLER_CHECKS


class Command(BaseCommand):
    help = "Poll every enabled project at its interval and save every result."
    # Not every check: the URLs' would import every page into the poller.
    requires_system_checks = [Tags.models, POLLER_CHECKS]

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--max-concurrent", type=int, help="polls in flight at most"
        )
        parser.add_argument(
            "--reload-interval", type=float, help="seconds between full reloads"
        )
        parser.add_argument(
            "--log-level",
            choices=["DEBUG", "INFO", "WARNING", "ERROR"],
            type=str.upper,
            help="DEBUG logs every poll (default: LOG_LEVEL, or INFO)",
        )
        parser.add_argument(
            "--status-interval",
            type=float,
            help="seconds between status lines in the log (default 30)",
        )
        parser.add_argument(
            "--processes",
            type=int,
            default=1,
            help="start this many pollers under this process (PostgreSQL)",
        )
        parser.add_argument(
            "--no-control",
            action="store_true",
            help="do not serve the control endpoint",
        )

    def say(self, line: str) -> None:
        """A line for the operator, in the log's one format (the JSON
        summary too: tools find it after "polling: ")."""
        self.stdout.write(as_log_line("polling", line))

    def handle(self, *args, processes: int, **options) -> str:
        names = [field.name for field in fields(RunOptions)]
        run_options = RunOptions(**{name: options[name] for name in names})
        if run_options.log_level:
            logging.getLogger().setLevel(run_options.log_level)
        try:
            if processes != 1:
                return as_log_line("polling", run_parent(processes, run_options))
            return as_log_line("polling", run_poller(run_options, self.say))
        except CannotRun as error:
            raise CommandError(str(error)) from error
