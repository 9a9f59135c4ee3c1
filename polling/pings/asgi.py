"""The fast path of pings: an ASGI application that answers /ping/<key>
and /ping/<key>/fail on the web worker's event loop, before Django's
middleware and URL resolver, and hands every other request to `site`.

Through Django's middleware a ping cost the web process about 440 µs of
CPU before the view ran (a preview ping, which stores nothing, measured
under gunicorn's threaded worker at 701 µs); here the whole request costs
a fraction of that (docs/benchmarks.md#ping-endpoint). The rules are the
view's (rules.py, answers.py) and so is the writer. A ping this path would
answer otherwise than Django does (a host not in ALLOWED_HOSTS, plain HTTP
when SECURE_SSL_REDIRECT is on, X-Forwarded-Host in use, a method the
endpoint refuses) goes to Django, which answers it as it always has.

It also runs the ASGI lifespan: as the worker shuts down, after its last
request, the ping writer stores every ping it accepted.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils import timezone

from polling.engine.heartbeats import MAX_MESSAGE_BYTES
from polling.pings.answers import Verdict, retry_after
from polling.pings.rules import PING_METHODS, Ping, is_preview, message_of
from polling.pings.waiting import record_async, stop_shared_writer

# Django's <uuid:key> converter: lower-case only, as the URL conf matches.
PING_PATH = re.compile(
    r"/ping/(?P<key>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"(?P<fail>/fail)?"
)
# A body that has not arrived by then is not waited for (gunicorn's --timeout).
BODY_SECONDS = 30.0


class PingFastPath:
    def __init__(self, site) -> None:
        self.site = site

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        match = scope["type"] == "http" and PING_PATH.fullmatch(scope["path"])
        if not match or not answered_here(scope):
            await self.site(scope, receive, send)
            return
        key, failed = uuid.UUID(match["key"]), bool(match["fail"])
        await serve_ping(scope, receive, send, key, failed)


async def serve_ping(scope, receive, send, key: uuid.UUID, failed: bool) -> None:
    headers = dict(scope["headers"])
    agent = headers.get(b"user-agent", b"").decode("latin-1")
    if is_preview(scope["method"], agent):
        await respond(send, scope, Verdict.PREVIEW)
        return
    try:
        body = await asyncio.wait_for(read_body(receive), BODY_SECONDS)
    except (TimeoutError, ConnectionAbortedError):
        return  # never sent whole: not a ping; the server closes it
    ping = Ping(key, failed, message_of(body), timezone.now())
    await respond(send, scope, await record_async(ping))


async def read_body(receive) -> bytes:
    """The body's first MAX_MESSAGE_BYTES; the rest is read and dropped."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionAbortedError
        if size < MAX_MESSAGE_BYTES:
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
        if not message.get("more_body", False):
            return b"".join(chunks)


async def respond(send, scope, verdict: Verdict) -> None:
    body = f"{verdict.text}\n".encode()
    headers = [
        (b"content-type", b"text/plain"),
        (b"content-length", str(len(body)).encode()),
        (b"x-content-type-options", b"nosniff"),
    ]
    if (seconds := retry_after(verdict)) is not None:
        headers.append((b"retry-after", str(seconds).encode()))
    if settings.SECURE_HSTS_SECONDS and is_secure(scope):
        headers.append((b"strict-transport-security", _hsts().encode()))
    await send(
        {"type": "http.response.start", "status": verdict.status, "headers": headers}
    )
    await send({"type": "http.response.body", "body": body})


def answered_here(scope) -> bool:
    """Whether Django would answer this ping as the fast path does."""
    if scope["method"] not in PING_METHODS or settings.USE_X_FORWARDED_HOST:
        return False
    if settings.SECURE_SSL_REDIRECT and not is_secure(scope):
        return False
    return host_allowed(dict(scope["headers"]).get(b"host", b"").decode("latin-1"))


def host_allowed(host: str) -> bool:
    """Django's check of the Host header (HttpRequest.get_host)."""
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    domain, _ = split_domain_port(host)
    return bool(domain) and validate_host(domain, allowed)


def is_secure(scope) -> bool:
    """Django's HttpRequest.is_secure(), SECURE_PROXY_SSL_HEADER included."""
    if settings.SECURE_PROXY_SSL_HEADER:
        header, secure_value = settings.SECURE_PROXY_SSL_HEADER
        name = header.removeprefix("HTTP_").lower().replace("_", "-").encode()
        value = dict(scope["headers"]).get(name)
        if value is not None:
            return value.decode("latin-1").split(",", 1)[0].strip() == secure_value
    return scope.get("scheme") == "https"


def _hsts() -> str:
    value = f"max-age={settings.SECURE_HSTS_SECONDS}"
    if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS:
        value += "; includeSubDomains"
    if settings.SECURE_HSTS_PRELOAD:
        value += "; preload"
    return value


async def lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            # After the last request: store what the writer still holds.
            await asyncio.to_thread(stop_shared_writer)
            await send({"type": "lifespan.shutdown.complete"})
            return


def quiet_stored_pings() -> None:
    """Leave pings answered below 400 out of the access log: each is a
    stored row already, and writing its line cost the web process about
    80 µs, a fifth of a ping's CPU in a herd. Refused pings (404, 429,
    503) are still logged."""
    logging.getLogger("uvicorn.access").addFilter(_not_a_stored_ping)


def _not_a_stored_ping(record: logging.LogRecord) -> bool:
    # uvicorn's arguments: client, method, path, HTTP version, status.
    args = record.args
    if not isinstance(args, tuple) or len(args) != 5:
        return True
    return not (str(args[2]).startswith("/ping/") and int(args[4]) < 400)
