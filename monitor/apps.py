"""The admin, found when the URLs are first loaded rather than at start-up.

Django's default AdminConfig imports every admin.py in ready(), so every
process (the poller, its writer, the tasks process) would import the
admin's forms, widgets and what they use (Apprise, DRF) only to leave them
unused: about 20 MB each (docs/operations.md#memory). The web process
loads monitor/urls.py, which calls autodiscover(); the admin's system
checks call it too, so `manage.py check` sees every ModelAdmin.
"""

from django.contrib.admin import autodiscover
from django.contrib.admin.apps import SimpleAdminConfig
from django.contrib.admin.checks import check_admin_app, check_dependencies
from django.core import checks


class AdminConfig(SimpleAdminConfig):
    def ready(self) -> None:
        checks.register(check_dependencies, checks.Tags.admin)
        checks.register(check_every_admin, checks.Tags.admin)


def check_every_admin(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    autodiscover()
    return check_admin_app(app_configs, **kwargs)
