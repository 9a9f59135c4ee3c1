from allauth.account.decorators import secure_admin_login

from django.contrib import admin
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

# Only the web process needs the admin's modules (monitor/apps.py).
admin.autodiscover()
admin.site.site_header = "Uptime monitor"
admin.site.site_title = "Uptime monitor"
# One sign-in for everyone, second factor included: the admin's own login
# form would skip it.
admin.site.login = secure_admin_login(admin.site.login)


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Browsers ask for /favicon.ico on pages that name no icon (a JSON
    answer, an error page): the SVG, rather than a 404 and a warning in the
    log on every page view."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon),
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
