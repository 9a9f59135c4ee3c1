"""URLs as they may be shown or sent: without their secrets.

A project's URL may carry credentials (https://user:password@host/) and
tokens in its query (?api_key=…). Messages, payloads and logs that leave
the product show it through redact_url(): the userinfo removed, and the
value of every query parameter whose name looks secret masked. The rest
stays as written, so a person can still tell which URL it is.

Pure and free of Django and polling, so that `projects` and `polling`
may both use it (the poller's engine logs project ids instead).
"""

from __future__ import annotations

from urllib.parse import unquote_plus, urlsplit, urlunsplit

MASK = "***"
# Query parameter names whose values are masked, compared case-blind...
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
# ...and any name containing one of these.
SECRET_PARTS = ("token", "secret", "key", "password", "signature", "credential")


def redact_url(url: str) -> str:
    """`url` without userinfo, its secret-looking query (and fragment)
    values masked. Text urlsplit() cannot read comes back as MASK."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a port that is no number)
    except ValueError:
        return MASK
    return urlunsplit(
        (
            parts.scheme,
            parts.netloc.rpartition("@")[2],
            parts.path,
            _masked(parts.query),
            _masked(parts.fragment),  # OAuth puts access_token=… there
        )
    )


def is_secret_name(name: str) -> bool:
    name = name.casefold()
    return name in SECRET_NAMES or any(part in name for part in SECRET_PARTS)


def _masked(query: str) -> str:
    """Each name=value pair as written, unless the name looks secret. Not
    parse_qsl(): it would decode and re-encode what it keeps."""
    if "=" not in query:
        return query
    pairs = []
    for pair in query.split("&"):
        name, equals, value = pair.partition("=")
        if value and is_secret_name(unquote_plus(name)):
            value = MASK
        pairs.append(f"{name}{equals}{value}")
    return "&".join(pairs)
