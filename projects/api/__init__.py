"""The REST API under /api/v1/ (docs/api.md): a page like the dashboard,
so nothing outside it imports it. Every write validates through the admin's
own forms, so the API, the admin and the YAML import share one rule set."""
