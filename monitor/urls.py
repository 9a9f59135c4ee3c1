from allauth.account.decorators import secure_admin_login

from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Uptime monitor"
admin.site.site_title = "Uptime monitor"
# One sign-in for everyone, second factor included: the admin's own login
# form would skip it.
admin.site.login = secure_admin_login(admin.site.login)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    # Before the API: agents authenticate with their own tokens.
    path("api/v1/agent/", include("polling.agents.urls")),
    path("api/v1/", include("projects.api.urls")),
    path("poller/", include("polling.urls")),
    path("ping/", include("polling.ping_urls")),
    path("incidents/", include("projects.dashboard.incident_urls")),
    path("teams/", include("projects.teams.urls")),
    path("status/", include("projects.status_pages.urls")),
    path("incidents/", include("projects.status_pages.update_urls")),
    path("badge/", include("projects.status_pages.badge_urls")),
    path("", include("projects.dashboard.urls")),
]
