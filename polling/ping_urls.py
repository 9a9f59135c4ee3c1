from django.urls import path

from polling import pings

app_name = "pings"
urlpatterns = [
    path("<uuid:key>", pings.ping, name="ping"),
    path("<uuid:key>/fail", pings.ping, {"failed": True}, name="fail"),
]
