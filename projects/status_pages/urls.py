from django.urls import path

from projects.status_pages import badge_views, subscriptions, views
from projects.status_pages.feeds import PageFeed

app_name = "status_pages"
urlpatterns = [
    path("<slug:slug>/", views.status_page, name="page"),
    path("<slug:slug>/badge.svg", badge_views.page_badge, name="badge"),
    path("<slug:slug>/feed.atom", PageFeed(), name="feed"),
    path("<slug:slug>/subscribe/", subscriptions.subscribe, name="subscribe"),
    path(
        "<slug:slug>/subscribe/confirm/<str:token>/",
        subscriptions.confirm,
        name="confirm",
    ),
    path(
        "<slug:slug>/unsubscribe/<str:token>/",
        subscriptions.unsubscribe,
        name="unsubscribe",
    ),
]
