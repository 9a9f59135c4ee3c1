from django.urls import path

from polling.agents import views

app_name = "agents"
urlpatterns = [
    path("sync/", views.sync, name="sync"),
    path("targets/", views.targets, name="targets"),
    path("results/", views.results, name="results"),
]
