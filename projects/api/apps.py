from django.apps import AppConfig


class ApiConfig(AppConfig):
    """An app of its own so the admin finds its API key pages (admin.py);
    the ApiKey model itself lives with the other models."""

    name = "projects.api"
    label = "api"
    verbose_name = "API"
    # The schema module (and drf-spectacular with it) is imported by the
    # URLs that serve the schema (urls.py), not here: the poller and the
    # tasks process never describe the API.
