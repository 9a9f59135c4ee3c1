from django.apps import AppConfig


class ApiConfig(AppConfig):
    """An app of its own so the admin finds its API key pages (admin.py);
    the ApiKey model itself lives with the other models."""

    name = "projects.api"
    label = "api"
    verbose_name = "API"

    def ready(self) -> None:
        from projects.api import schema  # noqa: F401 - registers the key scheme
