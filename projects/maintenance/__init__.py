"""Maintenance windows: when they are open (schedule.py). The model is
projects.models.MaintenanceWindow; its form, shared by the admin, the API
and the YAML import, is projects/forms/maintenance.py."""
