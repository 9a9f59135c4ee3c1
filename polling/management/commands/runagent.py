from __future__ import annotations

import logging

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from polling.agents.run import AgentOptions, run_agent
from polling.run.options import CannotRun


class Command(BaseCommand):
    help = (
        "Poll a region's projects without a database: take them from the "
        "server over HTTPS and send the results back (docs/agents.md). "
        "The token comes from AGENT_TOKEN."
    )
    # No database here: the system checks would read it.
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--server",
            required=True,
            help="the monitor's URL, e.g. https://monitor.example.com",
        )
        parser.add_argument(
            "--buffer",
            help="the file results wait in until the server has them "
            "(default: AGENT_BUFFER_PATH)",
        )
        parser.add_argument(
            "--max-concurrent", type=int, help="polls in flight at most"
        )
        parser.add_argument(
            "--status-interval",
            type=float,
            default=30.0,
            help="seconds between status lines",
        )
        parser.add_argument(
            "--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], type=str.upper
        )

    def handle(self, *args, **options) -> str:
        if options["log_level"]:
            logging.getLogger().setLevel(options["log_level"])
        if not options["server"].startswith(("https://", "http://")):
            raise CommandError("--server must be the monitor's http(s):// URL.")
        agent_options = AgentOptions(
            server=options["server"],
            token=settings.AGENT_TOKEN,
            buffer_path=options["buffer"] or settings.AGENT_BUFFER_PATH,
            max_concurrent=options["max_concurrent"],
            status_interval=options["status_interval"],
        )
        try:
            return run_agent(agent_options, self.stdout.write)
        except CannotRun as error:
            raise CommandError(str(error)) from error
