"""What every kind's probe builds its Outcome from: the phases a poll
went through, summed over its exchanges, and the outcome itself."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from polling.engine.transport import Phases
from polling.engine.types import Outcome, StepRun, Target, Task

logger = logging.getLogger(__name__)

# The length of PollResult.error_message; the engine stays free of Django.
MAX_ERROR_LENGTH = 1000

_NO_PHASES = Phases()


@dataclass(slots=True)
class Trace:
    """What the exchanges of one poll added up to."""

    phases: Phases = _NO_PHASES  # frozen: shared until the first add
    tls_expires_at: datetime | None = None

    def add(self, phases: Phases, tls_expires_at: datetime | None = None) -> None:
        # No phases yet: take these as they are (Phases() + p is p's
        # equal), without comparing them field by field.
        self.phases = phases if self.phases is _NO_PHASES else self.phases + phases
        if tls_expires_at and (
            self.tls_expires_at is None or tls_expires_at < self.tls_expires_at
        ):
            self.tls_expires_at = tls_expires_at


def outcome(
    task: Task,
    started_at: datetime,
    trace: Trace,
    status_code: int | None,
    error: str,
    *,
    response_time_ms: int | None = None,
    message: str = "",
    rtt_us: tuple[int, int, int] | None = None,
    loss_percent: int | None = None,
    steps: tuple[StepRun, ...] = (),
) -> Outcome:
    """The Outcome of a poll: up exactly when `error` is empty."""
    dns, connect, tls, first_byte = (ms(us) for us in trace.phases)
    return Outcome(
        project_id=task.target.project_id,
        up=not error,
        started_at=started_at,
        due_at=task.due_at,
        status_code=status_code,
        response_time_ms=response_time_ms,
        error=error[:MAX_ERROR_LENGTH],
        dns_ms=dns,
        connect_ms=connect,
        tls_ms=tls,
        first_byte_ms=first_byte,
        tls_expires_at=trace.tls_expires_at,
        message=message,
        rtt_us=rtt_us,
        loss_percent=loss_percent,
        steps=steps,
    )


def unexpected(target: Target, error: BaseException) -> str:
    """The reason of a poll that raised where nothing should; logged by
    project id, never by URL (a URL may carry credentials)."""
    logger.warning(
        "Unexpected error polling project %s", target.project_id, exc_info=error
    )
    return f"unexpected error: {type(error).__name__}: {error}"


def ms(microseconds: int | None) -> int | None:
    """Microseconds as whole milliseconds; None stays None."""
    return None if microseconds is None else round(microseconds / 1000)
