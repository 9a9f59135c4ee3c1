"""One module per channel kind; each has `send(outgoing, *, timeout) -> Sent`
and raises DeliveryError."""

from __future__ import annotations

from projects.notifications.outgoing import Outgoing, Sent
from projects.notifications.transports import apprise, email, webhook

SENDERS = {"webhook": webhook.send, "email": email.send, "apprise": apprise.send}


def send(outgoing: Outgoing, *, timeout: float) -> Sent:
    return SENDERS[outgoing.kind](outgoing, timeout=timeout)
