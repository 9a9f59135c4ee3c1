from django.urls import path

from projects.dashboard import objectives, reports, views

app_name = "dashboard"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("projects/<int:pk>/", views.project_detail, name="project"),
    path("objectives/", objectives.objective_list, name="objectives"),
    path("objectives/<int:pk>/", objectives.objective_detail, name="objective"),
    path("reports/", reports.report, name="report"),
]
