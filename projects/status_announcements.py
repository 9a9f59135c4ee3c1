"""The scheduled task's old home, kept because django-q2 stores its path.

Installs made before the announcer moved to projects.announcements hold a
Schedule row whose func is "projects.status_announcements.announce", and
register_schedules() never rewrites an existing row (an operator's change
must survive deploys). Deleting this module would make that schedule fail
every minute; tests/rules/test_stored_paths.py imports every path ever
stored.
"""

from projects.announcements.announcer import announce

__all__ = ["announce"]
