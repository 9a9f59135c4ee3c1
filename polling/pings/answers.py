"""What each ping request is answered: a status and a sentence, and when
to try again for the answers that ask for it (`curl --retry` waits as long
as Retry-After says)."""

from __future__ import annotations

import enum
import random

RATE_WINDOW_SECONDS = 60
# A herd refused at once comes back spread over these seconds, not at once.
RETRY_SPREAD_SECONDS = (2, 10)


class Verdict(enum.Enum):
    STORED = (200, "OK")
    PREVIEW = (200, "a link preview or HEAD request; not recorded as a ping")
    PAUSED = (200, "the project is paused; the ping was not recorded")
    UNKNOWN = (404, "no heartbeat project has this ping URL")
    TOO_MANY = (429, "too many pings for this project; try again soon")
    OVERLOADED = (503, "too many pings at once; not recorded, try again")
    UNAVAILABLE = (503, "the database is unavailable; not recorded, try again")

    @property
    def status(self) -> int:
        return self.value[0]

    @property
    def text(self) -> str:
        return self.value[1]


def retry_after(verdict: Verdict) -> int | None:
    """Seconds a client should wait before sending the ping again, or None
    when it should not."""
    if verdict is Verdict.TOO_MANY:
        return RATE_WINDOW_SECONDS
    if verdict.status == 503:
        return random.randint(*RETRY_SPREAD_SECONDS)
    return None
