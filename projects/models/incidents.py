from __future__ import annotations

from django.conf import settings
from django.db import models

from monitor.dates import when
from projects.models.project import MAX_ERROR_MESSAGE_LENGTH, Project


class Incident(models.Model):
    """A confirmed outage of one project, from its first failed poll until
    the recovery threshold is reached.

    The result writer opens and resolves incidents in the transaction that
    stores the polls; the database allows one open incident per project and
    kind, so a restarted or second poller cannot open another.
    """

    class Kind(models.TextChoices):
        DOWNTIME = "downtime", "Downtime"
        CERTIFICATE = "certificate", "Certificate expiring"
        DOMAIN = "domain", "Domain registration expiring"
        DEGRADED = "degraded", "Degraded performance"
        # Written by people (status pages), not opened by the writer.
        MANUAL = "manual", "Manual"

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="incidents"
    )
    kind = models.CharField(max_length=12, choices=Kind, default=Kind.DOWNTIME)
    # Manual incidents: what the status page calls it; others are named
    # after their project.
    title = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(help_text="The first failed poll of the streak.")
    confirmed_at = models.DateTimeField(
        help_text="When the failure threshold was reached."
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    first_error = models.CharField(max_length=MAX_ERROR_MESSAGE_LENGTH, blank=True)
    last_error = models.CharField(max_length=MAX_ERROR_MESSAGE_LENGTH, blank=True)
    failed_polls = models.PositiveIntegerField(default=0)
    # Certificate incidents: the expiry of the certificate warned of, which
    # tells a renewal from the same certificate seen again.
    certificate_expires_at = models.DateTimeField(null=True, blank=True)
    # Domain incidents (projects/domains/warnings.py): the registered domain
    # and the expiry warned of; a later date resolves the incident.
    domain = models.CharField(max_length=253, blank=True)
    domain_expires_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    # What a status page shows of it last changed: a save (a manual
    # incident's title, by hand), its opening, its resolution. The result
    # writer's failure count and last error of an open incident do not
    # touch it: they change with every poll, and a status page's version
    # (projects/status_pages/version.py) would change with them.
    updated_at = models.DateTimeField(auto_now=True)
    # Acknowledged through the API: which key (the user is then empty).
    acknowledged_by_key = models.ForeignKey(
        "projects.ApiKey",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "kind"],
                condition=models.Q(resolved_at__isnull=True),
                name="incident_one_open_per_project",
            ),
        ]
        indexes = [
            # One project's incidents, newest first: the project page.
            models.Index(
                fields=["project", "-started_at"], name="incident_project_recent"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project} {self.kind} since {when(self.started_at)}"
