"""The monitor watching itself: its pollers, and the times it was the
problem rather than its targets."""

from __future__ import annotations

from django.db import models

from monitor.dates import when


class PollerNode(models.Model):
    """One runpoller process, as its last check-in described it.

    runpoller writes its row every few seconds; the tasks process notices
    when no row has been seen for POLLER_SILENT_SECONDS.
    """

    name = models.CharField(max_length=200, unique=True)
    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    control_url = models.CharField(max_length=500, blank=True)
    version = models.CharField(max_length=50, blank=True)
    started_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    stopped_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when the process stopped cleanly."
    )
    region = models.ForeignKey(
        "projects.Region",
        on_delete=models.PROTECT,
        default=1,  # DEFAULT_REGION_ID
        related_name="pollers",
    )

    class Meta:
        indexes = [
            # The newest check-in: the watcher and the dashboard banner.
            models.Index(fields=["-last_seen_at"], name="pollernode_last_seen"),
        ]

    def __str__(self) -> str:
        return self.name


class ShardLease(models.Model):
    """Which runpoller polls one shard of the projects (project id modulo
    POLLER_SHARDS), and until when, on PostgreSQL (polling/leases.py).

    The owner renews its leases every few seconds; a lease past expires_at
    is free for any poller to take, and `token` increases on every
    takeover, so the writer of a poller that lost a shard can tell.
    """

    # Pollers of one region share its shards; each region polls every
    # project it is given, so each has a lease per shard.
    region = models.ForeignKey(
        "projects.Region",
        on_delete=models.CASCADE,
        default=1,  # DEFAULT_REGION_ID
        related_name="+",
    )
    shard = models.PositiveIntegerField()
    owner = models.ForeignKey(
        PollerNode,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="leases",
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    token = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["region", "shard"], name="shardlease_one_per_region_shard"
            ),
        ]

    def __str__(self) -> str:
        return f"shard {self.shard} of region {self.region_id}"


class MonitorOutage(models.Model):
    """A time when the monitor itself was the likely cause: its poller
    fell silent, or most of its targets failed at once."""

    class Kind(models.TextChoices):
        UNREACHABLE = "unreachable", "Most targets unreachable"
        POLLER_SILENT = "poller_silent", "Poller silent"
        # One region (docs/regions.md): no live poller in it, or most of
        # its targets failing at once; its view does not count meanwhile.
        REGION_DARK = "region_dark", "Region without a live poller"
        REGION_BLIND = "region_blind", "Region cannot reach most targets"

    kind = models.CharField(max_length=13, choices=Kind)
    region = models.ForeignKey(
        "projects.Region",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="outages",
    )
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    # What was measured when it began, e.g. {"failing": 40, "enabled": 50}.
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["kind"],
                condition=models.Q(ended_at__isnull=True, region__isnull=True),
                name="monitoroutage_one_open_per_kind",
            ),
            models.UniqueConstraint(
                fields=["kind", "region"],
                condition=models.Q(ended_at__isnull=True, region__isnull=False),
                name="monitoroutage_one_open_per_region",
            ),
        ]
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} since {when(self.started_at)}"
