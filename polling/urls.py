from django.urls import path

from polling import views

app_name = "polling"
urlpatterns = [
    path("", views.poller, name="poller"),
]
