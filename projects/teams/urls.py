from django.urls import path

from projects.teams import views

app_name = "teams"
urlpatterns = [
    path("switch/", views.switch, name="switch"),
]
