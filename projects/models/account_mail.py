from __future__ import annotations

from django.db import models
from django.utils import timezone

from projects.models.project import MAX_ERROR_MESSAGE_LENGTH


class AccountEmail(models.Model):
    """The outbox of account e-mails: invitations, password resets, address
    confirmations. A web request writes the row; the tasks process sends
    it (projects/teams/account_mail.py), so no request waits on a mail
    server and a refused message is retried.

    The body holds what the link is worth (a reset key, an invitation's
    signature): it is emptied once the message is delivered or given up
    on, and the admin never shows it.
    """

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    to = models.CharField(max_length=1000, help_text="Comma-separated addresses.")
    subject = models.CharField(max_length=300)
    body = models.TextField(blank=True)
    html = models.TextField(blank=True)
    state = models.CharField(max_length=9, choices=State, default=State.PENDING)
    created_at = models.DateTimeField(default=timezone.now)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    # Claimed by moving this forward (compare-and-set), as Notification is.
    claimed_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=MAX_ERROR_MESSAGE_LENGTH, blank=True)

    class Meta:
        indexes = [
            # Messages due for delivery: deliver_account_mail().
            models.Index(
                fields=["next_attempt_at"],
                condition=models.Q(state="pending"),
                name="accountemail_due",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject} to {self.to} ({self.state})"
