from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from projects.as_code.export import export_yaml
from projects.teams.commands import TEAM_HELP, team_from_option


class Command(BaseCommand):
    help = (
        "Write every project (header values masked unless --with-secrets), "
        "tag, channel (without secrets) and maintenance window as YAML, to "
        "FILE or stdout; see docs/projects-as-code.md."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", nargs="?", help="where to write (default: stdout)")
        parser.add_argument("--team", help=TEAM_HELP)
        parser.add_argument(
            "--with-secrets",
            action="store_true",
            help="write projects' header values in clear (masked by default)",
        )

    def handle(self, *args, file: str | None = None, **options) -> None:
        team = team_from_option(options.get("team"))
        text = export_yaml(team, with_secrets=options["with_secrets"])
        if file is None:
            self.stdout.write(text, ending="")
            return
        try:
            Path(file).write_text(text, encoding="utf-8")
        except OSError as error:
            raise CommandError(f"Cannot write {file}: {error.strerror}.") from None
        self.stderr.write(f"Wrote {file}.")
