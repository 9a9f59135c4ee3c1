from __future__ import annotations

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

DEFAULT_USERNAME = "admin"


class Command(BaseCommand):
    help = (
        "Create a superuser when there is none, printing its password once. "
        "The password comes from ADMIN_PASSWORD, or is generated."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default=DEFAULT_USERNAME)

    def handle(self, *args, username: str, **options) -> None:
        User = get_user_model()
        if User.objects.filter(is_superuser=True).exists():
            self.stdout.write("An admin user exists already; leaving it alone.")
            return
        password = os.environ.get("ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(
            self.style.SUCCESS(
                f"Created admin user '{username}' with password: {password}\n"
                "It is shown only this once; change it in the admin."
            )
        )
