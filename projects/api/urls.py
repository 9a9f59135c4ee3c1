from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import SimpleRouter

from django.urls import path

from projects.api import schema  # noqa: F401 - registers the key scheme
from projects.api.views.catalog import MaintenanceWindowViewSet, TagViewSet
from projects.api.views.channels import ChannelViewSet
from projects.api.views.incidents import IncidentViewSet
from projects.api.views.objectives import ObjectiveViewSet
from projects.api.views.projects import ProjectByNameView, ProjectViewSet
from projects.api.views.reports import ReportView
from projects.api.views.results import ResultList, UptimeView
from projects.api.views.status import monitor_status

app_name = "api"

router = SimpleRouter()
router.register("projects", ProjectViewSet, basename="project")
router.register("incidents", IncidentViewSet, basename="incident")
router.register("channels", ChannelViewSet, basename="channel")
router.register(
    "maintenance-windows", MaintenanceWindowViewSet, basename="maintenance-window"
)
router.register("tags", TagViewSet, basename="tag")
router.register("objectives", ObjectiveViewSet, basename="objective")

urlpatterns = [
    # Before the router's projects/{id}/, which would not match it anyway.
    # <path:>: a name may hold "/", sent as %2F, which the server decodes
    # before the URL is matched.
    path(
        "projects/by-name/<path:name>/",
        ProjectByNameView.as_view({"put": "upsert"}),
        name="project-by-name",
    ),
    path("projects/<int:pk>/results/", ResultList.as_view(), name="project-results"),
    path("projects/<int:pk>/uptime/", UptimeView.as_view(), name="project-uptime"),
    path("reports/", ReportView.as_view(), name="reports"),
    path("status/", monitor_status, name="status"),
    path(
        "schema/",
        SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]),
        name="schema",
    ),
    path(
        "docs/",
        # Split: Swagger UI's init script is a file of its own (?script=),
        # so the site's Content-Security-Policy (no inline script) holds.
        SpectacularSwaggerSplitView.as_view(
            url_name="api:schema",
            template_name="api/swagger_ui.html",
            authentication_classes=[],
            permission_classes=[],
        ),
        name="docs",
    ),
    *router.urls,
]
