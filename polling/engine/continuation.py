"""Where a project new to this poller goes on: at the window after its last
stored one, even late.

A project reaches a poller that has not been polling it when the poller
takes its shard over (from a poller that stopped, was killed or frozen,
or handed it over) or starts. It carries the window of its last stored
result (Target.last_window), and its grid goes on from there:

| the window after the last stored one | then                                  |
|--------------------------------------|---------------------------------------|
| has not begun                        | polled at its time                    |
| has begun, or ended less than an     | polled at once, late; the grid goes   |
| interval ago                         | on (the next window follows at once)  |
| ended an interval or more ago        | None: the project starts afresh       |

A begun window counts as late too: its poll is dispatched a little after
the check, and if the window ends meanwhile (one that began almost an
interval ago, on a loaded machine) the scheduler would otherwise count it
a missed tick and skip it.

Why the middle row. A poller that stops without handing over (SIGKILL,
SIGSTOP, a frozen VM) takes the window it was polling with it: the poll
was in flight or its result waiting to be saved, and the fence refuses
that result afterwards. The poller taking the shard over comes only once
the lease has expired and the holder no longer counts as live: up to
TTL + 2 ticks after the holder's last renewal (15 + 2 x 5 s by default),
longer than a 20 s interval. That window was then over, the project
started afresh on a new grid, and one or two windows were never polled
(issue #39, item 10). Polled late, it is stored under its own window, so
every window is polled once, by whoever holds the project, as long as a
move takes less than two intervals: for intervals over (TTL + 2 ticks) / 2
(12.5 s by default). Windows further back are lost, and are not polled in
a burst of late polls that would all say the same thing about one moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True, slots=True)
class Continuation:
    window: datetime  # wall clock, UTC: the window to poll next
    late: bool  # the window has begun: poll it at once, never skip it


def continuation(
    last_window: datetime | None, interval_seconds: float, now: datetime
) -> Continuation | None:
    """The window after `last_window` and whether it is late, or None when
    the project should start afresh (never stored, or unpolled too long)."""
    if last_window is None:
        return None
    step = timedelta(seconds=interval_seconds)
    window = last_window + step
    if window + 2 * step <= now:
        return None
    return Continuation(window, late=window <= now)
