"""Regions: the places the pollers check from (docs/regions.md).

Every runpoller belongs to one region (POLLER_REGION, `default` unless
set). A project is down when enough of the regions polling it agree
(Project.quorum); each region's own view of each project is kept in
ProjectRegionState by the writer, in the transaction that stores the
polls.
"""

from __future__ import annotations

from django.db import models

# The region every install starts with, made by the migration that
# introduced regions (its first row): single-region installs never name
# another, and results written without a region are its.
DEFAULT_REGION_ID = 1
DEFAULT_REGION_NAME = "default"


class Region(models.Model):
    """One place pollers check from, as its pollers last reported it."""

    # A small integer: every PollResult carries it.
    id = models.SmallAutoField(primary_key=True)
    name = models.CharField(max_length=50, unique=True)
    label = models.CharField(max_length=200, blank=True)
    last_seen_at = models.DateTimeField(
        null=True, blank=True, help_text="The latest heartbeat of a poller in it."
    )
    # Set by the writer while most of the projects this region polls fail
    # at once: its view does not count toward quorum meanwhile.
    blind_since = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.label or self.name


class ProjectRegionState(models.Model):
    """One region's view of one project: its streak through the decision
    table (projects/incidents/machine.py) and its latest poll."""

    project = models.ForeignKey(
        "projects.Project",
        on_delete=models.CASCADE,
        related_name="region_states",
        db_index=False,  # the unique constraint starts with project
    )
    region = models.ForeignKey(Region, on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=7, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    consecutive_successes = models.PositiveIntegerField(default=0)
    failing_since = models.DateTimeField(null=True, blank=True)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    last_up = models.BooleanField(null=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_response_time_ms = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=1000, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "region"], name="projectregionstate_one_per_pair"
            ),
        ]
        indexes = [
            # The views that are not settled, by project: the writer reads
            # them for every batch of several regions
            # (projects/incidents/region_rows.py). Small, because most
            # views are settled: a lookup that finds none reads no row.
            models.Index(
                fields=["project"],
                condition=~models.Q(
                    state="up",
                    consecutive_failures=0,
                    consecutive_successes=0,
                    failing_since__isnull=True,
                ),
                name="projectregionstate_unsettled",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} in {self.region_id}: {self.state or 'new'}"
