from __future__ import annotations

import logging
import os
import signal
import threading

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from polling.config import PollerConfig
from polling.coordinator import Coordinator
from polling.status import status_line

logger = logging.getLogger("polling")


class Command(BaseCommand):
    help = "Poll every enabled project at its interval and save every result."

    def add_arguments(self, parser):
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

    def handle(self, *args, max_concurrent, reload_interval, log_level, **options):
        if log_level:
            logging.getLogger().setLevel(log_level)
        config = PollerConfig.from_settings(
            max_concurrent_http=max_concurrent, reload_interval=reload_interval
        )
        coordinator = Coordinator(config)
        stop = threading.Event()
        previous_handlers = _stop_on_signals(stop)
        try:
            try:
                coordinator.start()
            except DatabaseError as error:
                raise CommandError(
                    f"Cannot load projects from the database: {error}"
                ) from error
            while not stop.wait(config.status_log_seconds):
                logger.info(status_line(coordinator.status()))
            self.stdout.write("Stopping: finishing polls in flight, saving results.")
            coordinator.stop()
        finally:
            for signum, handler in previous_handlers.items():
                signal.signal(signum, handler)
        return "Stopped. " + status_line(coordinator.status())


def _stop_on_signals(stop: threading.Event) -> dict:
    """SIGTERM or SIGINT asks for a graceful stop; a second one exits at
    once. Returns the handlers it replaced."""

    def on_signal(signum, frame):
        if stop.is_set():
            os._exit(1)
        stop.set()

    return {
        signum: signal.signal(signum, on_signal)
        for signum in (signal.SIGTERM, signal.SIGINT)
    }
