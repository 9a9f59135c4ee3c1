"""Passwords in the URLs of service checks (postgres://, mysql://,
redis://, ...) are write-only, like a channel's secret: stored and used
by the poller, never shown again. Every surface shows `masked_url(url)`,
where the password reads `***`; a form that gets the masked URL back
keeps the stored password (`unmasked_url`), but only while the URL still
leads to the same scheme, host, port and user: sending the stored
password to another server takes typing it again.

Plain string work on urlsplit's parts; a URL it cannot read is left as
it is (the validators say what is wrong with it).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from projects.checks.kinds import kind_of

MASK = "***"
RETYPE = (
    "Type the password again: the stored one is only kept while the URL "
    "leads to the same server and user."
)


def masked_url(url: str) -> str:
    """The URL with its password masked, for a kind whose credentials are
    secret; any other URL as it is."""
    parts = _parts(url)
    if parts is None or parts.password is None or not _secret(url):
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    return url.replace(parts.netloc, f"{user}:{MASK}@{host}", 1)


def unmasked_url(submitted: str, stored: str) -> str:
    """The URL to store for `submitted`: with the stored password in place
    of the mask. Raises ValidationError when the mask came back for a URL
    that leads elsewhere, or when there is no password to keep."""
    parts = _parts(submitted)
    if parts is None or parts.password != MASK or not _secret(submitted):
        return submitted
    old = _parts(stored) if stored else None
    if old is None or old.password is None or _where(old) != _where(parts):
        raise ValidationError(RETYPE)
    host = parts.netloc.rpartition("@")[2]
    old_userinfo = old.netloc.rpartition("@")[0]
    return submitted.replace(parts.netloc, f"{old_userinfo}@{host}", 1)


def _secret(url: str) -> bool:
    kind = kind_of(url)
    return kind is not None and kind.secret_credentials


def _parts(url: str):
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - urlsplit checks the port lazily
    except (ValueError, TypeError, AttributeError):
        return None
    return parts


def _where(parts) -> tuple:
    return (parts.scheme.lower(), parts.hostname, parts.port, parts.username)
