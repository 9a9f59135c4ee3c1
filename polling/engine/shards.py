"""Which projects this poller may poll: its shards, and until when.

Projects fall into `count` shards by id (id mod count). With several
pollers on one PostgreSQL database each holds leases on some shards
(polling/leases.py, the Django edge) and hands the engine an Ownership:
the shards it holds, and the monotonic time until which it may trust its
leases (renewal start + TTL - margin), and the same on the wall clock.
Past either, nothing is polled: a process resumed after a pause polls
nothing another may have taken over, even when its monotonic clock stood
still through the pause (a suspended or frozen VM's may; its wall clock
is set right on resume).
A lone poller (SQLite) owns every shard for ever.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Ownership:
    count: int
    shards: frozenset[int]
    trusted_until: float = math.inf  # monotonic seconds
    trusted_until_wall: float = math.inf  # seconds since the epoch

    @classmethod
    def everything(cls) -> Ownership:
        return cls(1, frozenset({0}))

    @classmethod
    def nothing(cls, count: int) -> Ownership:
        return cls(count, frozenset(), trusted_until=-math.inf)

    def owns(self, project_id: int) -> bool:
        return project_id % self.count in self.shards

    def trusted(self, now: float, wall_now: float = -math.inf) -> bool:
        return now < self.trusted_until and wall_now < self.trusted_until_wall


def shard_of(project_id: int, count: int) -> int:
    return project_id % count
