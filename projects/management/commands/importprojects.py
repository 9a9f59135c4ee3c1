from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from projects.as_code.apply import import_projects
from projects.as_code.plan import plan_import
from projects.as_code.validation import InvalidFile
from projects.teams.commands import TEAM_HELP, team_from_option


class Command(BaseCommand):
    help = (
        "Create or update projects, tags and maintenance windows by name from "
        "a YAML export, in one transaction; nothing changes if any entry is "
        "invalid. See docs/projects-as-code.md."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="the YAML file, as exportprojects writes it")
        parser.add_argument(
            "--dry-run", action="store_true", help="print the changes, make none"
        )
        parser.add_argument(
            "--prune",
            action="store_true",
            help="disable (never delete) projects that are not in the file",
        )
        parser.add_argument("--team", help=TEAM_HELP)

    def handle(self, *args, file: str, dry_run: bool, prune: bool, **options) -> str:
        team = team_from_option(options.get("team"))
        try:
            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {file}: {error}.") from None
        try:
            if dry_run:
                plan = plan_import(text, prune=prune, team=team)
            else:
                plan = import_projects(text, prune=prune, team=team)
        except InvalidFile as error:
            raise CommandError(f"{error}\nNothing was changed.") from None
        if not plan.is_empty:
            self.stdout.write("\n".join(plan.lines()))
        if dry_run:
            return f"dry run, nothing changed: {plan.summary()}"
        return plan.summary()
