from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Uptime monitor"
admin.site.site_title = "Uptime monitor"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("projects.api.urls")),
    path("poller/", include("polling.urls")),
    path("ping/", include("polling.ping_urls")),
    path("incidents/", include("projects.dashboard.incident_urls")),
    path("", include("projects.dashboard.urls")),
]
