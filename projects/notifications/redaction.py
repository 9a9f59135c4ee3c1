"""URLs fit to send or log: no credentials, no secret-looking query values.

A project's URL may carry a password (`https://user:pass@host/`) or a token
in its query (`?api_key=...`). Anything that leaves the monitor (webhook
payloads, e-mails, Apprise messages, log lines) carries `redact_url(url)`
instead: the userinfo is removed and the value of every query (or
fragment) parameter whose name looks secret is replaced by `***`.
Everything else stays byte for byte, so the URL is still recognisable.

Plain string work, no URL parser: it never raises, whatever the text.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

MASK = "***"
SECRET_NAMES = frozenset(
    {
        "token",
        "key",
        "api_key",
        "apikey",
        "secret",
        "password",
        "passwd",
        "pwd",
        "auth",
        "signature",
        "sig",
        "access_token",
        "code",
    }
)
# "signature" too: presigned links carry X-Amz-Signature and the like.
SECRET_PARTS = ("token", "secret", "key", "pass", "signature")

# scheme:, then //authority, then the rest (path, query, fragment).
_AUTHORITY = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*:)?//([^/?#]*)(.*)$", re.DOTALL)


def redact_url(url: str) -> str:
    if not isinstance(url, str):
        return ""
    match = _AUTHORITY.match(url)
    if match:
        scheme, authority, rest = match.groups()
        head = f"{scheme or ''}//{authority.rpartition('@')[2]}"
    else:
        head, rest = "", url
    before_fragment, hash_mark, fragment = rest.partition("#")
    path, question_mark, query = before_fragment.partition("?")
    return (
        head
        + path
        + question_mark
        + _masked_parameters(query)
        + hash_mark
        + _masked_parameters(fragment)
    )


def is_secret_name(name: str) -> bool:
    name = unquote_plus(name).strip().lower()
    return name in SECRET_NAMES or any(part in name for part in SECRET_PARTS)


def _masked_parameters(text: str) -> str:
    return "&".join(_masked_parameter(pair) for pair in text.split("&"))


def _masked_parameter(pair: str) -> str:
    name, equals, value = pair.partition("=")
    if equals and value and is_secret_name(name):
        return f"{name}={MASK}"
    return pair
