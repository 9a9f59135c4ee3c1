from django.urls import path

from projects.dashboard import views

app_name = "dashboard"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("projects/<int:pk>/", views.project_detail, name="project"),
]
