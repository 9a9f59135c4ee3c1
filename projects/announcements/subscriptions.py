"""Subscribing to a status page, confirming, unsubscribing.

Each subscriber gets a NotificationChannel of its own (e-mail or
webhook, never a default, attached to no project), so its messages go
through the outbox with its retries, digests and delivery log. An e-mail
address or a webhook hears nothing but the confirmation until it is
confirmed; every message carries the unsubscribe link. Nothing here
sends: it queues.

A webhook confirms as Amazon SNS's HTTP subscriptions do: its first
delivery, `status.confirm`, carries a confirm link with the subscriber's
secret token, and the receiver (or a person) POSTs to it. Only who reads
what arrives at the URL can confirm, so a visitor cannot make this server
post a page's news to a URL that did not ask for it.
"""

from __future__ import annotations

import ipaddress
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from projects.checks.blocked_targets import literal_address
from projects.models import NotificationChannel, StatusPage, Subscriber
from projects.notifications import outbox
from projects.notifications.outbound_guard import subscriber_guard
from projects.notifications.signing import new_secret

CONFIRM_EVENT = "status.confirm"
RATE_WINDOW = timedelta(hours=1)
# A subscription not confirmed within a day is dropped: a confirm link is
# opened within minutes, and unconfirmed rows would pile up in the team's
# channel list (S4-13).
UNCONFIRMED_LIFETIME = timedelta(days=1)
LOCAL_SUFFIXES = (".localhost", ".local", ".internal")


def rate_limited(address: str | None, now: datetime) -> bool:
    """Whether this client has subscribed STATUS_SUBSCRIBE_RATE_LIMIT
    times in the last hour (counted in the database, so every web process
    agrees). An IPv4 client is its address; an IPv6 client is its /64, the
    network one host is usually given, so rotating addresses within it
    does not reset the count."""
    if not address:
        return False
    recent = Subscriber.objects.filter(created_at__gte=now - RATE_WINDOW)
    network = client_network(address)
    if network is None or network.num_addresses == 1:
        count = recent.filter(created_from=address).count()
    else:
        # The few IPv6 rows of the last hour, matched here: the database
        # stores addresses compressed, so a prefix is no string prefix.
        others = recent.filter(created_from__contains=":").values_list(
            "created_from", flat=True
        )
        count = sum(1 for other in others if client_network(other) == network)
    return count >= settings.STATUS_SUBSCRIBE_RATE_LIMIT


def client_network(address: str):
    """The network a client's address counts as: the address itself for
    IPv4, its /64 for IPv6; None when it is no address."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is None:
        return ipaddress.ip_network(f"{parsed}/64", strict=False)
    return ipaddress.ip_network(parsed)


def prune_unconfirmed(now: datetime | None = None) -> int:
    """Delete subscribers not confirmed within UNCONFIRMED_LIFETIME, with
    their channels and queued messages (the "prune unconfirmed
    subscribers" task); returns how many."""
    cutoff = (now or timezone.now()) - UNCONFIRMED_LIFETIME
    stale = Subscriber.objects.filter(confirmed_at__isnull=True, created_at__lt=cutoff)
    count = 0
    for subscriber in stale.iterator():
        subscriber.delete()  # its post_delete takes the channel along
        count += 1
    return count


def validate_webhook_url(url: str) -> None:
    """http(s) only, and no address the delivery's guard would refuse
    (outbound_guard.subscriber_guard): not POLL_BLOCKED_NETWORKS, and
    nothing but a public address unless STATUS_WEBHOOK_ALLOW_PRIVATE (then
    still never link-local or a metadata address). A visitor is never
    trusted. Only addresses written in the URL are checked here; a name is
    checked when the delivery connects, on what it resolves to then."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("Enter an http:// or https:// URL.")
    guard = subscriber_guard(
        settings.POLL_BLOCKED_NETWORKS,
        allow_private=settings.STATUS_WEBHOOK_ALLOW_PRIVATE,
    )
    host = parts.hostname.lower().rstrip(".")
    address = literal_address(host)
    if address is None:
        local = host == "localhost" or host.endswith(
            (".localhost", ".local", ".internal")
        )
        if local and not settings.STATUS_WEBHOOK_ALLOW_PRIVATE:
            raise ValidationError("That address is not reachable from here.")
        return
    if guard.refusal(str(address)):
        raise ValidationError("That address is not reachable from here.")


def subscribe(
    page: StatusPage,
    *,
    email: str = "",
    webhook_url: str = "",
    address: str | None,
    now: datetime,
    user=None,
) -> Subscriber | None:
    """A new subscriber, unconfirmed, with its confirmation queued; None
    when the address is already
    subscribed to the page, which the visitor is not told (nobody learns
    who subscribes). `user`: the member subscribing to a private page."""
    try:
        with transaction.atomic():
            subscriber = Subscriber.objects.create(
                page=page,
                email=email,
                webhook_url=webhook_url,
                created_from=address,
                created_at=now,
                user=user,
            )
            subscriber.channel = _channel_for(subscriber)
            subscriber.save(update_fields=["channel"])
            queue_confirmation(subscriber, now)
    except IntegrityError:
        return None
    return subscriber


def _channel_for(subscriber: Subscriber) -> NotificationChannel:
    """The subscriber's own channel. A webhook's has a Standard Webhooks
    secret of its own, shown once to whoever subscribed (the form's answer)
    and never again, so its receiver can verify every delivery."""
    kind = NotificationChannel.Kind.EMAIL if subscriber.email else "webhook"
    return NotificationChannel.objects.create(
        name=f"Status page subscriber {subscriber.pk} ({subscriber.page.slug})",
        kind=kind,
        url=subscriber.email or subscriber.webhook_url,
        secret="" if subscriber.email else new_secret(),
        is_default=False,
        team_id=subscriber.page.team_id,  # the page's team sees its deliveries
    )


def queue_confirmation(subscriber: Subscriber, now: datetime) -> int:
    page = subscriber.page
    payload = {
        "version": 1,
        "event": CONFIRM_EVENT,
        "title": f"Confirm your subscription to {page.title}",
        "occurred_at": now.isoformat(),
        "message": _confirm_text(subscriber),
        "links": links(subscriber, confirm=True),
    }
    message = outbox.Message(
        event=CONFIRM_EVENT, key=f"{CONFIRM_EVENT}:{subscriber.pk}", payload=payload
    )
    return outbox.queue([(message, [subscriber.channel_id])])


def _confirm_text(subscriber: Subscriber) -> str:
    title = subscriber.page.title
    if subscriber.webhook_url:
        return (
            f"Someone asked for news of {title} at this URL. POST to the "
            "confirm link (no body needed) to start receiving it; if nobody "
            "here asked, ignore this request and nothing more will be sent."
        )
    return (
        f"Someone, we hope you, asked for news of {title} at this address. "
        "Open the confirm link to start receiving it; if it was not you, "
        "ignore this message and nothing more will be sent."
    )


def confirm(subscriber: Subscriber, now: datetime) -> bool:
    """Confirms once; says whether this call did."""
    return bool(
        Subscriber.objects.filter(pk=subscriber.pk, confirmed_at__isnull=True).update(
            confirmed_at=now
        )
    )


def unsubscribe(subscriber: Subscriber) -> None:
    """Forgets the subscriber and, with it, its channel and queued rows."""
    subscriber.delete()


def links(subscriber: Subscriber, *, confirm: bool = False) -> dict[str, str]:
    slug, token = subscriber.page.slug, subscriber.token
    found = {"status page": absolute(reverse("status_pages:page", args=[slug]))}
    if confirm:
        found["confirm"] = absolute(reverse("status_pages:confirm", args=[slug, token]))
    found["unsubscribe"] = absolute(
        reverse("status_pages:unsubscribe", args=[slug, token])
    )
    return found


def absolute(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path
