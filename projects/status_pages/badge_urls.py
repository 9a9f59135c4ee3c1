from django.urls import path, re_path

from projects.status_pages import badge_views

app_name = "badges"
KINDS = r"status|uptime-(?:24h|7d|30d|90d)|response-time|certificate|domain"
urlpatterns = [
    re_path(
        rf"^(?P<key>[A-Za-z0-9_-]{{1,64}})/(?P<kind>{KINDS})\.svg$",
        badge_views.project_badge,
        name="project",
    ),
    path("<str:key>/shields.json", badge_views.shields_endpoint, name="shields"),
    re_path(r"^.*\.svg$", badge_views.unknown_badge),
]
