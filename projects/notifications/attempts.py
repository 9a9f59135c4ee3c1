"""What one send came to: made by the delivery step, written down by the
recording step. Its own module, so neither of those needs the other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from projects.models import Notification
from projects.notifications.outgoing import DeliveryError, Sent

# A transport: transports.send, or a test's stand-in.
Sender = Callable[..., Sent]


@dataclass(frozen=True, slots=True)
class Result:
    """What one send came to, for the delivery log."""

    notification: Notification
    attempted_at: datetime
    duration_ms: int
    sent: Sent | None = None
    error: DeliveryError | None = None
