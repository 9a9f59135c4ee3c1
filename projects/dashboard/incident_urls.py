from django.urls import path

from projects.dashboard import incidents as views

app_name = "incidents"
urlpatterns = [
    path("", views.incident_list, name="list"),
    path("<int:pk>/acknowledge/", views.acknowledge, name="acknowledge"),
    path("acknowledge/<str:token>/", views.acknowledge_link, name="acknowledge_link"),
]
