"""The project admin's add page and a form that saves a valid project."""

from __future__ import annotations

from django.urls import reverse

ADD_URL = reverse("admin:projects_project_add")


FORM = {
    "name": "homepage",
    "url": "https://example.com/health",
    "method": "GET",
    "headers": "{}",
    "body": "",
    "expected_status": "200",
    "interval": "5",
    "interval_unit": "minutes",
    "timeout_seconds": "10",
    "enabled": "on",
}
