"""Standard Webhooks signatures (https://www.standardwebhooks.com/).

The secret is `whsec_` followed by base64 of the key bytes; the signature
is base64 of HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>".
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 24


def new_secret() -> str:
    """A fresh signing secret in the spec's `whsec_<base64>` form."""
    key = base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()
    return SECRET_PREFIX + key


def secret_key(secret: str) -> bytes:
    """The HMAC key a secret stands for; raises ValueError when it is not
    `whsec_` followed by base64."""
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"A signing secret starts with {SECRET_PREFIX}.")
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except binascii.Error:
        raise ValueError("A signing secret is whsec_ followed by base64.") from None
    if len(key) < 16:
        raise ValueError("A signing secret needs at least 16 bytes of key.")
    return key


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header value: `v1,<base64 HMAC-SHA256>`."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signed_headers(
    secret: str, message_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three Standard Webhooks headers; unsigned when there is no
    secret."""
    headers = {"webhook-id": message_id, "webhook-timestamp": str(timestamp)}
    if secret:
        headers["webhook-signature"] = signature(secret, message_id, timestamp, body)
    return headers
