"""Links in notifications: absolute URLs, and the signed acknowledge link.

The acknowledge link needs no login: its signature is the permission. It
names one incident and expires after ACKNOWLEDGE_LINK_DAYS. The incidents
pages check the tokens made here; this module imports nothing of theirs,
so notifications never need incidents back.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.urls import reverse

# This module's old name, kept as the salt: a new salt would void every
# acknowledge link already sent.
_SALT = "projects.incidents.acknowledge"


def absolute_url(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path


def acknowledge_token(incident_id: int) -> str:
    return signing.TimestampSigner(salt=_SALT).sign_object({"incident": incident_id})


def acknowledge_url(incident_id: int) -> str:
    """The link that acknowledges this incident, for a message's `links`."""
    token = acknowledge_token(incident_id)
    return absolute_url(reverse("incidents:acknowledge_link", args=[token]))


def incident_from_token(token: str) -> int:
    """The incident id a token names. Raises signing.SignatureExpired for
    an old link and signing.BadSignature for a forged or damaged one."""
    max_age = timedelta(days=settings.ACKNOWLEDGE_LINK_DAYS)
    value = signing.TimestampSigner(salt=_SALT).unsign_object(token, max_age=max_age)
    return int(value["incident"])
