"""Channel URLs shown without their secrets: enough to recognise the
destination, never the token in its path, query or password."""

from __future__ import annotations

from urllib.parse import urlsplit

MASK = "•••"


def masked_url(kind: str, url: str) -> str:
    if not url:
        return ""
    if kind == "email":
        return url  # addresses are who gets told, not a credential
    if kind == "apprise":
        return _masked_apprise(url)
    return _masked_http(url)


def _masked_http(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    rest = MASK if (parts.path.strip("/") or parts.query) else ""
    return f"{parts.scheme}://{host}/{rest}"


def _masked_apprise(url: str) -> str:
    """Apprise's own privacy rendering, which knows which part of each
    service's URL is a token; the scheme alone when it cannot parse it."""
    import apprise

    service = apprise.Apprise.instantiate(url)
    if service is None:
        return f"{urlsplit(url).scheme}://{MASK}"
    return service.url(privacy=True)


def masked_secret(secret: str) -> str:
    """Only the Standard Webhooks prefix, which every such secret shares."""
    if not secret:
        return ""
    return f"whsec_{MASK}" if secret.startswith("whsec_") else MASK
