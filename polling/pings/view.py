"""The ping endpoint as a Django view: /ping/<key>, /ping/<key>/fail.

The web process serves pings through the fast path in asgi.py, before
Django's middleware; this view serves the same pings wherever a request
does reach Django (the test client, a WSGI server, a request the fast path
hands on), with the same rules and the same writer.
"""

from __future__ import annotations

import uuid

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from polling.engine.heartbeats import MAX_MESSAGE_BYTES
from polling.pings.answers import Verdict, retry_after
from polling.pings.rules import PING_METHODS, Ping, is_preview, message_of
from polling.pings.waiting import record


@csrf_exempt
@require_http_methods(list(PING_METHODS))
def ping(request: HttpRequest, key: uuid.UUID, failed: bool = False) -> HttpResponse:
    if is_preview(request.method, request.headers.get("User-Agent", "")):
        return answer(Verdict.PREVIEW)
    body = request.read(MAX_MESSAGE_BYTES)
    return answer(record(Ping(key, failed, message_of(body), timezone.now())))


def answer(verdict: Verdict) -> HttpResponse:
    response = HttpResponse(
        f"{verdict.text}\n", status=verdict.status, content_type="text/plain"
    )
    if (seconds := retry_after(verdict)) is not None:
        response["Retry-After"] = str(seconds)
    return response
