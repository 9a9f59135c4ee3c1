from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """An app of its own so Django finds its template tag libraries
    (`{% load dashboard %}`, `{% load charts %}`); it has no models."""

    name = "projects.dashboard"
    label = "dashboard"
