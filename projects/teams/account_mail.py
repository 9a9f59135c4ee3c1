"""Account e-mails (invitations, password resets, address confirmations)
leave the web request as a row of the AccountEmail outbox; the tasks
process sends them (projects.notifications.account_mail). A mail server
that is slow, down or refusing never holds up or fails the page, and a
refused message is retried and shows in the admin.

Nothing here imports the delivery code: the run is asked for by the
task's name, as projects.notifications.trigger does for alerts.
"""

from __future__ import annotations

import logging

from django.core.mail import EmailMessage
from django.db import transaction

from projects.models import AccountEmail

logger = logging.getLogger(__name__)

DELIVER_TASK = "projects.notifications.account_mail.deliver_account_mail"


def queue_email(message: EmailMessage) -> AccountEmail:
    """Queue a rendered message for the tasks process; sends nothing."""
    queued = AccountEmail.objects.create(
        to=", ".join(message.to),
        subject=message.subject,
        body=message.body,
        html=html_of(message),
    )
    transaction.on_commit(request_delivery, robust=True)
    return queued


def html_of(message: EmailMessage) -> str:
    alternatives = getattr(message, "alternatives", None) or []
    return next((content for content, kind in alternatives if kind == "text/html"), "")


def request_delivery() -> None:
    """Asks the tasks process to send now rather than at its next sweep
    (within a minute)."""
    from django_q.tasks import async_task

    try:
        async_task(DELIVER_TASK, task_name="deliver account e-mails")
    except Exception:
        # The sweeper sends it within a minute anyway; never fail the page.
        logger.exception("could not ask the tasks process to send account e-mail")
