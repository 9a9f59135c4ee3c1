from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from projects.models import ApiKey


class Command(BaseCommand):
    help = (
        "Create an API key and print it, alone, on stdout. It is shown only "
        "this once: the database keeps its hash."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="who or what will use the key")
        parser.add_argument(
            "--scope",
            choices=ApiKey.Scope.values,
            default=ApiKey.Scope.READ,
            help="read (the default) or write",
        )

    def handle(self, *args, name: str, scope: str, **options) -> str:
        name = name.strip()
        if not name:
            raise CommandError("Give the key a name: who or what will use it.")
        if len(name) > ApiKey._meta.get_field("name").max_length:
            raise CommandError("The name can be at most 200 characters.")
        _, key = ApiKey.issue(name, scope)
        return key
