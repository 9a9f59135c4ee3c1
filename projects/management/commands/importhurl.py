from __future__ import annotations

from pathlib import Path

import yaml

from django.core.management.base import BaseCommand, CommandError

from projects.as_code.apply import import_projects
from projects.as_code.hurl import read_hurl
from projects.as_code.plan import plan_import
from projects.as_code.validation import InvalidFile
from projects.teams.commands import TEAM_HELP, team_from_option


class Command(BaseCommand):
    help = (
        "Create or update a flow by name from a Hurl file's common subset "
        "(requests, [Captures], [Asserts]), reporting every line it leaves "
        "out. See docs/checks.md, Flows."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="the .hurl file")
        parser.add_argument("--name", required=True, help="the flow's name")
        parser.add_argument(
            "--interval", type=int, help="minutes between polls (default 5)"
        )
        parser.add_argument(
            "--secret",
            action="append",
            default=[],
            metavar="NAME",
            help="a variable that is a team secret: {{NAME}} becomes "
            "{{secrets.NAME}} (repeat for each)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="print the changes, make none"
        )
        parser.add_argument("--team", help=TEAM_HELP)

    def handle(self, *args, file: str, name: str, dry_run: bool, **options) -> str:
        team = team_from_option(options.get("team"))
        try:
            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {file}: {error}.") from None
        flow = read_hurl(text, secrets=frozenset(options["secret"]))
        for line in flow.unsupported:
            self.stderr.write(f"Not imported: {line}")
        if not flow.steps:
            raise CommandError(f"{file} has no request this import reads.")
        project = {"name": name, "kind": "flow", "steps": flow.steps}
        if options.get("interval"):
            project["interval"] = options["interval"]
        document = yaml.safe_dump({"projects": [project]}, sort_keys=False)
        try:
            if dry_run:
                plan = plan_import(document, team=team)
            else:
                plan = import_projects(document, team=team)
        except InvalidFile as error:
            raise CommandError(f"{error}\nNothing was changed.") from None
        summary = f"{len(flow.steps)} steps, {len(flow.unsupported)} lines not imported"
        if dry_run:
            return f"dry run, nothing changed: {plan.summary()}; {summary}"
        return f"{plan.summary()}; {summary}"
