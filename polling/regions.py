"""This poller's region (POLLER_REGION), as the database knows it.

A region's row is made the first time a poller of it starts; its
pollers' heartbeats keep `last_seen_at` fresh (polling/node.py). The
default region is row 1, made by the migration, so a single-region
install never asks for it.
"""

from __future__ import annotations

import functools
import time
from datetime import timedelta

from django.conf import settings

from projects.incidents.regions import RegionView, region_view
from projects.models import DEFAULT_REGION_ID, Region
from projects.models.regions import DEFAULT_REGION_NAME

# Regions' polls of one project are spread over this many seconds (a
# quarter of its interval when that is less), so they do not arrive in the
# same second.
REGION_SPREAD_SECONDS = 10.0
GOLDEN = (5**0.5 - 1) / 2


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


def phase_fraction(region: int) -> float:
    """Where in the spread this region's polls come, from 0 to 1: the
    same for every poller of the region, well apart for regions made one
    after another (the golden ratio's steps), and 0 for the default region,
    so single-region installs poll as they always did."""
    if region == DEFAULT_REGION_ID:
        return 0.0
    return (region * GOLDEN) % 1.0


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
