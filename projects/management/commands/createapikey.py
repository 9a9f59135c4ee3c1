from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from projects.models import ApiKey, Team
from projects.models.teams import default_team


class Command(BaseCommand):
    help = (
        "Create an API key and print it, alone, on stdout. It is shown only "
        "this once: the database keeps its hash. The key sees and changes "
        "only its team's objects."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="who or what will use the key")
        parser.add_argument(
            "--scope",
            choices=ApiKey.Scope.values,
            default=ApiKey.Scope.READ,
            help="read (the default) or write",
        )
        parser.add_argument(
            "--team",
            metavar="SLUG",
            help="the team whose objects the key reaches (its slug); may be "
            "left out when the install has one team",
        )

    def handle(self, *args, name: str, scope: str, team: str | None, **options):
        name = name.strip()
        if not name:
            raise CommandError("Give the key a name: who or what will use it.")
        if len(name) > ApiKey._meta.get_field("name").max_length:
            raise CommandError("The name can be at most 200 characters.")
        _, key = ApiKey.issue(name, scope, team_named(team))
        return key


def team_named(slug: str | None) -> Team:
    """The team of that slug; the only team (or the "Default" made now, in
    an empty database) when none is named."""
    if slug is not None:
        team = Team.objects.filter(slug=slug).first()
        if team is None:
            known = ", ".join(Team.objects.values_list("slug", flat=True)) or "none"
            raise CommandError(f"No team has the slug “{slug}” (teams: {known}).")
        return team
    teams = list(Team.objects.order_by("pk")[:2])
    if len(teams) == 1:
        return teams[0]
    if not teams:
        return default_team()  # made on first use, as for every team-owned row
    known = ", ".join(Team.objects.values_list("slug", flat=True))
    raise CommandError(
        f"This install has several teams: name one with --team SLUG ({known})."
    )
