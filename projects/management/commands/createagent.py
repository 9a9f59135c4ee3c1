from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from projects.models import Agent, Region, Team
from projects.models.regions import DEFAULT_REGION_NAME


class Command(BaseCommand):
    help = (
        "Create an agent (manage.py runagent on another machine) and print "
        "its token, alone, on stdout. It is shown only this once: the "
        "database keeps its hash. The agent reads its region's projects, "
        "with their URLs, headers and secrets (docs/agents.md)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="the agent's name, e.g. office-1")
        parser.add_argument(
            "--region",
            default=DEFAULT_REGION_NAME,
            help="the region it polls from (made if new)",
        )
        parser.add_argument(
            "--team",
            metavar="SLUG",
            help="poll only this team's projects; required when the install "
            "has several teams, unless --all-teams",
        )
        parser.add_argument(
            "--all-teams",
            action="store_true",
            help="poll every team's projects of the region (an install-wide agent)",
        )

    def handle(self, *args, name: str, region: str, team, all_teams, **options):
        name = name.strip()
        if not name or len(name) > Agent._meta.get_field("name").max_length:
            raise CommandError("Give the agent a name of 1 to 100 characters.")
        if Agent.objects.filter(name=name).exists():
            raise CommandError(f"An agent named “{name}” exists already.")
        region = region.strip()
        if not region or len(region) > Region._meta.get_field("name").max_length:
            raise CommandError("Give the region a name of 1 to 50 characters.")
        region_row, _ = Region.objects.get_or_create(name=region)
        _, token = Agent.issue(name, region_row, _team(team, all_teams))
        return token


def _team(slug: str | None, all_teams: bool) -> Team | None:
    if slug and all_teams:
        raise CommandError("Give --team or --all-teams, not both.")
    if slug:
        team = Team.objects.filter(slug=slug).first()
        if team is None:
            known = ", ".join(Team.objects.values_list("slug", flat=True)) or "none"
            raise CommandError(f"No team has the slug “{slug}” (teams: {known}).")
        return team
    if not all_teams and Team.objects.count() > 1:
        raise CommandError(
            "This install has several teams: give --team SLUG (an agent sees "
            "the projects it polls, with their secrets), or --all-teams."
        )
    return None
