"""`manage.py runpoller` wired as it is on SQLite, the only poller, with no
shard leases and no fence, whatever DATABASE_URL says.

    DATABASE_URL=postgres://... python bench/lone_poller.py [runpoller options]

bench/bench_fleet.py runs it on PostgreSQL as the baseline for what shard
leases cost; it is not a way to run the product.
"""

from __future__ import annotations

import os
import sys

import harness  # noqa: F401  (puts the project on sys.path)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    import django

    django.setup()
    from polling import wiring

    # Before the command's module is imported: it binds the name then.
    wiring.shares_projects = lambda: False
    from django.core.management import execute_from_command_line

    execute_from_command_line(["manage.py", "runpoller", *sys.argv[1:]])


if __name__ == "__main__":
    main()
