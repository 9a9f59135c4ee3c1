#!/usr/bin/env python
import os
import sys


def main():
    if sys.argv[1:2] == ["runagent"]:
        # An agent signs nothing and has no database: a key of its own
        # spares its machine a setting that means nothing there.
        import secrets

        os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    if sys.argv[1:2] in (["runpoller"], ["runagent"]):
        # Before Django's set-up: a SIGTERM during it is then a request to
        # stop like any later one, not the end of the process (-15).
        from polling.run.stop_signals import catch_early

        catch_early()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
