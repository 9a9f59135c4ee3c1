"""This poller's region (POLLER_REGION), as the database knows it.

A region's row is made the first time a poller of it starts; its
pollers' heartbeats keep `last_seen_at` fresh (polling/node.py). The
default region is row 1, made by the migration, so a single-region
install never asks for it.
"""

from __future__ import annotations

import functools
import time
import zlib
from datetime import timedelta

from django.conf import settings

from projects.incidents.regions import RegionView, region_view
from projects.models import DEFAULT_REGION_ID, Region
from projects.models.regions import DEFAULT_REGION_NAME

# Regions' polls of one project are spread over this many seconds (at most
# a quarter of its interval), so they do not arrive in the same second.
REGION_SPREAD_SECONDS = 5.0


def region_name() -> str:
    return settings.POLLER_REGION or DEFAULT_REGION_NAME


@functools.cache
def region_id(name: str | None = None) -> int:
    """The id of the region named `name` (this poller's, by default),
    made if new."""
    name = name or region_name()
    if name == DEFAULT_REGION_NAME:
        return DEFAULT_REGION_ID
    region, _ = Region.objects.get_or_create(name=name)
    return region.pk


def phase_offset(name: str | None = None) -> float:
    """Seconds this region's polls come after the window's start: the
    same for every poller of the region, different (mostly) between
    regions; 0 for the default region, so single-region installs poll as
    they always did."""
    name = name or region_name()
    if name == DEFAULT_REGION_NAME:
        return 0.0
    return (zlib.crc32(name.encode()) % 1000) / 1000 * REGION_SPREAD_SECONDS


# The writer looks at the regions again after this long: which are live
# changes over tens of seconds (heartbeats every 10 s).
BOOK_SECONDS = 5.0


class RegionBook:
    """Whether several regions are live, read at most every BOOK_SECONDS:
    a single-region install pays one tiny query per few seconds. With
    several, the writer reads the regions again in its transaction."""

    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._view: RegionView | None = None
        self._read_at = -float("inf")

    def view(self, region_id: int) -> RegionView:
        now = self._clock()
        if self._view is None or now - self._read_at >= BOOK_SECONDS:
            silent = timedelta(seconds=settings.POLLER_SILENT_SECONDS)
            self._view = region_view(region_id, silent=silent)
            self._read_at = now
        return self._view
