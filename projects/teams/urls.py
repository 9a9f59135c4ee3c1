from django.urls import path

from projects.teams import invitation_views, views

app_name = "teams"
urlpatterns = [
    path("switch/", views.switch, name="switch"),
    path("invite/", invitation_views.invite, name="invite"),
    path(
        "invitations/<int:pk>/revoke/",
        invitation_views.revoke_invitation,
        name="revoke_invitation",
    ),
    path("join/<str:token>/", invitation_views.join_team, name="join"),
]
