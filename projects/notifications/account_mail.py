"""Sending account e-mails (queued by projects.teams.account_mail): claim,
send, write down, as deliver_due does for alerts. One message at a time:
they are few (someone asking for a reset, a manager inviting), and a run
that finds a hanging server holds one worker for one timeout per message.

A refused or unreachable server is retried on the alerts' schedule
(backoff.py) for up to a day; an SMTP 5xx is final. The body, which holds
a reset key or an invitation's signature, is emptied once the message is
delivered or given up on.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db.models import Q
from django.utils import timezone

from projects.models import AccountEmail
from projects.notifications import backoff
from projects.notifications.config import DeliveryConfig
from projects.notifications.outgoing import DeliveryError
from projects.notifications.transports.email import (
    message_id,
    recipients,
    send_message,
)

logger = logging.getLogger(__name__)

BATCH_SIZE = 50
State = AccountEmail.State
FORGOTTEN = {"body": "", "html": ""}


def deliver_account_mail(
    *,
    now: Callable[[], datetime] = timezone.now,
    send: Callable[..., None] = send_message,
    config: DeliveryConfig | None = None,
) -> int:
    """Sends the account e-mails due now; returns how many sends were
    attempted. The tasks process runs it after each queued message and
    every minute (the sweeper, which also takes the retries)."""
    config = config or DeliveryConfig.from_settings()
    attempted = 0
    for pk in due_ids(now()):
        email = claim(pk, now(), config)
        if email is None:
            continue  # another run has it
        record(email, send_one(email, send=send, config=config), now())
        attempted += 1
    return attempted


def due_ids(now: datetime) -> list[int]:
    due = _claimable(now).filter(next_attempt_at__lte=now).order_by("next_attempt_at")
    return list(due.values_list("pk", flat=True)[:BATCH_SIZE])


def claim(pk: int, now: datetime, config: DeliveryConfig) -> AccountEmail | None:
    until = now + timedelta(seconds=config.claim_seconds)
    if not _claimable(now).filter(pk=pk).update(claimed_until=until):
        return None
    return AccountEmail.objects.get(pk=pk)


def _claimable(now: datetime):
    return AccountEmail.objects.filter(state=State.PENDING).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lte=now)
    )


def send_one(
    email: AccountEmail, *, send: Callable[..., None], config: DeliveryConfig
) -> DeliveryError | None:
    """Sends with no transaction open; returns the failure, if any."""
    message = EmailMultiAlternatives(
        subject=email.subject,
        body=email.body,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=recipients(email.to),
        # The same Message-ID on every retry: a client drops a duplicate.
        headers={"Message-ID": message_id(f"account:{email.pk}")},
        connection=get_connection(timeout=config.timeout_seconds),
    )
    if email.html:
        message.attach_alternative(email.html, "text/html")
    try:
        send(message, timeout=config.timeout_seconds)
    except DeliveryError as failure:
        return failure
    except Exception as failure:
        # A bug must not lose the message: it is retried.
        logger.exception("account e-mail %s: unexpected error", email.pk)
        return DeliveryError(f"internal error: {type(failure).__name__}")
    return None


def record(
    email: AccountEmail,
    error: DeliveryError | None,
    now: datetime,
    *,
    rng: random.Random | None = None,
) -> str:
    """Writes the attempt down; returns the message's new state."""
    changes = {"attempts": email.attempts + 1, "claimed_until": None}
    if error is None:
        changes |= {"state": State.DELIVERED, "delivered_at": now, "last_error": ""}
    else:
        retry_at = _retry_at(email, error, changes["attempts"], now, rng)
        changes["last_error"] = error.reason
        changes |= (
            {"state": State.FAILED}
            if retry_at is None
            else {"state": State.PENDING, "next_attempt_at": retry_at}
        )
    if changes["state"] != State.PENDING:
        changes |= FORGOTTEN
    AccountEmail.objects.filter(pk=email.pk).update(**changes)
    _log(email, error, changes["state"])
    return changes["state"]


def _retry_at(email, error, attempts, now, rng) -> datetime | None:
    """When to try again; None when the failure is final."""
    if error.permanent:
        return None
    retry_at = now + backoff.retry_delay(attempts, rng=rng)
    return None if backoff.gives_up(email.created_at, retry_at) else retry_at


def _log(email: AccountEmail, error: DeliveryError | None, state: str) -> None:
    # Never the body: it holds the link.
    if error is None:
        logger.info("account e-mail %s delivered", email.pk)
    else:
        logger.warning(
            "account e-mail %s failed (%s): %s", email.pk, state, error.reason
        )
