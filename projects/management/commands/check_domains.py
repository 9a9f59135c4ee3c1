from __future__ import annotations

from django.core.management.base import BaseCommand

from projects.domains.tasks import check_domains


class Command(BaseCommand):
    help = (
        "Look up the domain registrations due (each at most once a day) and "
        "open or resolve the domain warnings, as the hourly task does."
    )

    def handle(self, *args, **options) -> str:
        return check_domains()
