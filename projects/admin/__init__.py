"""The admin: every ModelAdmin of the app, registered by importing its
module here, the one place Django's autodiscovery looks (`projects.admin`).

The admin is a surface like the pages: nothing outside this package
imports it (tests/rules/test_page_layering.py). Forms the API or the YAML
import share with it live with their concern (projects/forms/project.py,
projects/forms/maintenance.py, projects/teams/forms.py).
"""

from projects.admin import (  # noqa: F401 - each module registers its admins
    agents,
    api_keys,
    flows,
    maintenance,
    notifications,
    objectives,
    project,
    status_pages,
    tasks,
    teams,
)
