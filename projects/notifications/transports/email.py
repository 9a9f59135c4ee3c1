"""E-mail through Django's e-mail backend (configured from EMAIL_URL).

A message whose payload has an unsubscribe link (a status page
subscriber's) carries it as List-Unsubscribe (RFC 2369) with
List-Unsubscribe-Post (RFC 8058), so mail clients offer a one-click
unsubscribe and large mailbox providers accept it as bulk mail should be.
"""

from __future__ import annotations

import hashlib
import smtplib

from django.conf import settings
from django.core.mail import EmailMessage, EmailMultiAlternatives, get_connection

from projects.notifications.messages import render
from projects.notifications.outgoing import DeliveryError, Outgoing, Sent


def send(outgoing: Outgoing, *, timeout: float) -> Sent:
    rendered = render(outgoing.payload)
    message = EmailMultiAlternatives(
        subject=rendered.subject,
        body=rendered.text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=recipients(outgoing.url),
        headers={"Message-ID": message_id(outgoing.key), **list_headers(outgoing)},
        connection=get_connection(timeout=timeout),
    )
    message.attach_alternative(rendered.html, "text/html")
    send_message(message, timeout=timeout)
    return Sent()


def send_message(message: EmailMessage, *, timeout: float) -> None:
    """Send one message; a failure is a DeliveryError (an SMTP 5xx is
    permanent). Account e-mails (projects/teams/account_mail.py) use it too.
    `timeout` only names the wait in the error: the message's connection
    carries the real one."""
    try:
        message.send()
    except smtplib.SMTPException as error:
        raise _delivery_error(error) from None
    except TimeoutError:
        raise DeliveryError(f"timed out after {timeout:g} s") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise DeliveryError(f"mail server unreachable ({reason})") from None


def list_headers(outgoing: Outgoing) -> dict[str, str]:
    """The RFC 2369 and RFC 8058 headers, for a message with an
    unsubscribe link; none for the others."""
    links = outgoing.payload.get("links")
    link = links.get("unsubscribe") if isinstance(links, dict) else None
    if not isinstance(link, str) or not link.startswith(("https://", "http://")):
        return {}
    return {
        "List-Unsubscribe": f"<{link}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }


def recipients(addresses: str) -> list[str]:
    return [address.strip() for address in addresses.split(",") if address.strip()]


def message_id(key: str) -> str:
    """The same Message-ID on every retry, so mail clients can drop a
    duplicate."""
    domain = settings.DEFAULT_FROM_EMAIL.rpartition("@")[2].strip("> ") or "localhost"
    return f"<{hashlib.sha256(key.encode()).hexdigest()[:32]}@{domain}>"


def _delivery_error(error: smtplib.SMTPException) -> DeliveryError:
    """SMTP 5xx replies are permanent; 4xx and dropped connections are not."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in error.recipients.values()]
        return DeliveryError(
            f"recipients refused (SMTP {', '.join(map(str, sorted(set(codes))))})",
            permanent=all(code >= 500 for code in codes),
        )
    code = getattr(error, "smtp_code", None)
    if isinstance(code, int):
        return DeliveryError(
            f"SMTP {code}: {_smtp_text(error)}".strip(": "), permanent=code >= 500
        )
    return DeliveryError(f"SMTP error: {type(error).__name__}")


def _smtp_text(error: smtplib.SMTPException) -> str:
    text = getattr(error, "smtp_error", b"")
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text)[:200]
