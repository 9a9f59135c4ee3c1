from django.apps import AppConfig


class PollingConfig(AppConfig):
    name = "polling"
    default_auto_field = "django.db.models.BigAutoField"
