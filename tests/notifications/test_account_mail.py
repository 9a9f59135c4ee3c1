"""Account e-mails (invitations, allauth's password resets) leave the
request as AccountEmail rows; the tasks process's step sends them through
a real SMTP server on 127.0.0.1, retries what the server refuses for now,
gives up on what it refuses for good, and forgets the link once done."""

from __future__ import annotations

import re

import pytest

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from projects.models import AccountEmail, Role
from projects.notifications.account_mail import deliver_account_mail
from projects.notifications.config import DeliveryConfig
from projects.schedules import SCHEDULES
from projects.teams.account_mail import DELIVER_TASK
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db

CONFIG = DeliveryConfig(timeout_seconds=2)
INVITE = reverse("teams:invite")
State = AccountEmail.State


@pytest.fixture
def smtp_down(settings):
    """Nothing listens on port 9 (discard) on 127.0.0.1."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = 9
    settings.EMAIL_USE_TLS = False


@pytest.fixture
def manager(a):
    return client_of(member(a.team, Role.MANAGER, "mona"))


def invite(client: Client, email: str = "new@example.test"):
    return client.post(INVITE, {"email": email, "role": Role.VIEWER})


def deliver(clock) -> int:
    """One run of the tasks process's step, at the clock's time, which
    first catches up with the rows the requests just queued."""
    clock.current = max(clock.current, timezone.now())
    return deliver_account_mail(now=clock.now, config=CONFIG)


def test_an_invitation_is_queued_not_sent_by_the_request(manager, smtp_server):
    response = invite(manager)

    assert response.status_code == 302
    assert smtp_server.messages == []
    queued = AccountEmail.objects.get()
    assert queued.state == State.PENDING
    assert queued.to == "new@example.test"


def test_the_tasks_step_delivers_the_invitation(manager, smtp_server, clock):
    invite(manager)

    assert deliver(clock) == 1

    (message,) = smtp_server.messages
    assert message["To"] == "new@example.test"
    assert message["Subject"] == "You are invited to Alpha on the uptime monitor"
    assert "/teams/join/" in message.get_payload()
    delivered = AccountEmail.objects.get()
    assert delivered.state == State.DELIVERED
    assert delivered.attempts == 1
    assert delivered.body == ""  # the link is not kept once it is sent


def test_a_mail_server_that_is_down_does_not_fail_the_invitation(manager, smtp_down):
    response = invite(manager)

    assert response.status_code == 302
    assert AccountEmail.objects.get().state == State.PENDING


def test_a_password_reset_is_queued_by_allauths_adapter(a, smtp_down):
    user = member(a.team, Role.VIEWER, "vera")

    response = Client().post(reverse("account_reset_password"), {"email": user.email})

    assert response.status_code == 302
    queued = AccountEmail.objects.get()
    assert queued.to == user.email
    assert re.search(r"/accounts/password/reset/key/\S+/", queued.body)


def test_an_unreachable_server_is_retried_later(a, smtp_down, clock):
    member(a.team, Role.VIEWER, "vera")
    Client().post(reverse("account_reset_password"), {"email": "vera@example.test"})

    deliver(clock)

    waiting = AccountEmail.objects.get()
    assert waiting.state == State.PENDING
    assert waiting.attempts == 1
    assert waiting.last_error.startswith("mail server unreachable")
    assert waiting.next_attempt_at > clock.now()
    assert deliver(clock) == 0  # not due yet


def test_a_451_is_retried_and_delivered_later(manager, smtp_server, clock):
    smtp_server.handler.refuse_recipients_with = "451 Try again later"
    invite(manager)

    deliver(clock)
    smtp_server.handler.refuse_recipients_with = None
    clock.advance(60)
    deliver(clock)

    assert len(smtp_server.messages) == 1
    delivered = AccountEmail.objects.get()
    assert delivered.state == State.DELIVERED
    assert delivered.attempts == 2
    assert delivered.last_error == ""


def test_a_550_is_given_up_on_and_the_link_forgotten(manager, smtp_server, clock):
    smtp_server.handler.refuse_recipients_with = "550 No such user"
    invite(manager)

    deliver(clock)

    failed = AccountEmail.objects.get()
    assert failed.state == State.FAILED
    assert failed.last_error == "recipients refused (SMTP 550)"
    assert failed.body == ""


def test_a_claimed_message_is_not_sent_twice(manager, smtp_server, clock):
    from projects.notifications.account_mail import claim

    invite(manager)
    queued = AccountEmail.objects.get()

    assert claim(queued.pk, clock.now(), CONFIG) is not None
    assert claim(queued.pk, clock.now(), CONFIG) is None
    assert deliver(clock) == 0
    assert smtp_server.messages == []


def test_superusers_see_the_outbox_without_the_link(manager, smtp_server, a):
    invite(manager)
    root = client_of(User.objects.create_superuser("root"))
    queued = AccountEmail.objects.get()
    change = reverse("admin:projects_accountemail_change", args=[queued.pk])

    listing = root.get(reverse("admin:projects_accountemail_changelist"))
    page = root.get(change).content.decode()

    assert "new@example.test" in listing.content.decode()
    assert "Pending" in page
    assert "/teams/join/" not in page
    assert manager.get(change).status_code == 403


def test_the_sweeper_runs_the_step_every_minute():
    (job,) = [job for job in SCHEDULES if job.func == DELIVER_TASK]
    assert job.minutes == 1
