from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Uptime monitor"
admin.site.site_title = "Uptime monitor"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("poller/", include("polling.urls")),
    path("ping/", include("polling.ping_urls")),
    path("incidents/", include("projects.dashboard.incident_urls")),
    path("status/", include("projects.status_pages.urls")),
    path("incidents/", include("projects.status_pages.update_urls")),
    path("badge/", include("projects.status_pages.badge_urls")),
    path("", include("projects.dashboard.urls")),
]
