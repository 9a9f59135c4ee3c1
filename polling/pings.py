"""The ping endpoint of heartbeat projects: /ping/<key>, /ping/<key>/fail.

No login: the key is the secret (a random UUID, 122 bits). Each ping is
stored through the poller's own store, in one transaction with the
project's state, rollups, incidents and notifications, so a ping is a
result like any poll. Pings are limited per project with Django's cache
(per process by default; shared by every web worker when REDIS_URL is set).
"""

from __future__ import annotations

import logging
import time
import uuid

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from polling.engine.heartbeats import MAX_MESSAGE_BYTES, ping_outcome
from polling.engine.writer import StoreUnavailable
from polling.store import DatabaseResultStore
from projects.models import Project

logger = logging.getLogger(__name__)

RATE_WINDOW_SECONDS = 60
PING_FIELDS = ["id", "enabled", "interval", "interval_unit", "grace_seconds"]


@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def ping(request: HttpRequest, key: uuid.UUID, failed: bool = False) -> HttpResponse:
    if not _allowed(key):
        return _answer(429, "too many pings for this project; try again soon")
    project = _heartbeat(key)
    if project is None:
        return _answer(404, "no heartbeat project has this ping URL")
    if not project.enabled:
        return _answer(200, "the project is paused; the ping was not recorded")
    try:
        _record(project, failed=failed, message=_message(request))
    except StoreUnavailable:
        logger.warning("Could not record a ping of project %s", project.pk)
        return _answer(503, "the database is unavailable; try again")
    return _answer(200, "OK")


def _heartbeat(key: uuid.UUID) -> Project | None:
    """The heartbeat project with this key, with the fields a ping needs.
    Plain SQL: building the ORM query cost a ping about a millisecond."""
    table = connection.ops.quote_name(Project._meta.db_table)
    key_value = Project._meta.get_field("ping_key").get_db_prep_value(key, connection)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(PING_FIELDS)} FROM {table} "
            "WHERE ping_key = %s AND kind = %s",
            [key_value, Project.Kind.HEARTBEAT],
        )
        row = cursor.fetchone()
    return None if row is None else Project(**dict(zip(PING_FIELDS, row, strict=True)))


def _record(project: Project, *, failed: bool, message: str) -> None:
    outcome = ping_outcome(
        project.pk,
        at=timezone.now(),
        failed=failed,
        message=message,
        interval_seconds=project.interval_seconds,
        grace_seconds=project.grace_seconds,
    )
    DatabaseResultStore().save([outcome])


def _message(request: HttpRequest) -> str:
    """The first 10 KB of the body as text. NUL becomes U+FFFD:
    PostgreSQL text cannot hold it."""
    body = request.read(MAX_MESSAGE_BYTES)
    return body.decode("utf-8", errors="replace").replace("\x00", "\ufffd").strip()


def _allowed(key: uuid.UUID) -> bool:
    """At most PING_RATE_LIMIT pings a minute per project (0: no limit),
    counted in fixed windows."""
    limit = settings.PING_RATE_LIMIT
    if not limit:
        return True
    window = int(time.time() // RATE_WINDOW_SECONDS)
    name = f"ping-rate:{key}:{window}"
    cache.add(name, 0, timeout=2 * RATE_WINDOW_SECONDS)
    try:
        return cache.incr(name) <= limit
    except ValueError:  # evicted between add and incr
        return True


def _answer(status: int, text: str) -> HttpResponse:
    response = HttpResponse(f"{text}\n", status=status, content_type="text/plain")
    if status == 429:
        response["Retry-After"] = str(RATE_WINDOW_SECONDS)
    return response
