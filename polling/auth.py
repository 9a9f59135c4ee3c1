"""The bearer token shared by the control endpoint and its client."""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings

TOKEN_PURPOSE = b"uptime-monitor poller control v1"


def control_token() -> str:
    """POLLER_CONTROL_TOKEN, or else one derived from SECRET_KEY, so a web
    process and a poller sharing settings agree with no configuration."""
    if settings.POLLER_CONTROL_TOKEN:
        return settings.POLLER_CONTROL_TOKEN
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, TOKEN_PURPOSE, hashlib.sha256).hexdigest()


def token_matches(authorization: str | None, expected: str) -> bool:
    """Compare an Authorization header with the token in constant time."""
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), expected.encode())
