"""What a transport needs to send one message, with no ORM in it: sends run
on worker threads, outside any transaction."""

from __future__ import annotations

from dataclasses import dataclass, field

from projects.notifications.outbound_guard import Guard


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One notification on its way to one channel."""

    key: str  # stable across retries: the webhook-id, the e-mail Message-ID
    event: str
    payload: dict = field(hash=False, compare=False)
    kind: str = "webhook"
    url: str = field(default="", repr=False)  # may hold credentials
    secret: str = field(default="", repr=False)
    channel_name: str = ""
    # Where it may not connect (an untrusted team's channel, a subscriber's
    # webhook); None: anywhere (projects/notifications/outbound_guard.py).
    guard: Guard | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Sent:
    """A transport's answer when the message was accepted."""

    http_status: int | None = None


class DeliveryError(Exception):
    """A send that did not go through, with a short readable reason that
    never contains the channel's URL or secret.

    `permanent` failures (a 4xx other than 408/429, an SMTP 5xx) are not
    retried; `retry_after` is the wait a receiver asked for."""

    def __init__(
        self,
        reason: str,
        *,
        http_status: int | None = None,
        permanent: bool = False,
        retry_after: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.http_status = http_status
        self.permanent = permanent
        self.retry_after = retry_after
