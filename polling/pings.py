"""The ping endpoint of heartbeat projects: /ping/<key>, /ping/<key>/fail.

No login: the key is the secret (a random UUID, 122 bits). Each ping is
stored through the poller's own store, in one transaction with the
project's state, rollups, incidents and notifications, so a ping is a
result like any poll. Pings are limited per project, counted in the
database (PingCount), so the limit holds across web workers and machines.

A link unfurler (Slack, Teams, a chat app's preview) fetches a URL
pasted in a message; that must not count as the job having run. HEAD
requests and GETs from known preview agents are answered but not recorded.
"""

from __future__ import annotations

import logging
import time
import uuid

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from polling.engine.heartbeats import MAX_MESSAGE_BYTES, ping_outcome
from polling.engine.writer import StoreUnavailable
from polling.store import DatabaseResultStore
from projects.models import PingCount, Project

logger = logging.getLogger(__name__)

RATE_WINDOW_SECONDS = 60
# Lower-case parts of the User-Agent of link unfurlers and crawlers.
PREVIEW_AGENTS = (
    "slackbot",
    "slack-imgproxy",
    "twitterbot",
    "facebookexternalhit",
    "facebot",
    "discordbot",
    "telegrambot",
    "whatsapp",
    "linkedinbot",
    "googlebot",
    "bingbot",
    "applebot",
    "skypeuripreview",
    "microsoftpreview",
    "mattermost",
    "redditbot",
    "embedly",
    "iframely",
    "pinterestbot",
    "vkshare",
    "mastodon",
)
PING_FIELDS = ["id", "enabled", "interval", "interval_unit", "grace_seconds"]


@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def ping(request: HttpRequest, key: uuid.UUID, failed: bool = False) -> HttpResponse:
    if _is_preview(request):
        return _answer(200, "a link preview or HEAD request; not recorded as a ping")
    project = _heartbeat(key)
    if project is None:
        return _answer(404, "no heartbeat project has this ping URL")
    if not within_rate_limit(project.pk):
        return _answer(429, "too many pings for this project; try again soon")
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


def _is_preview(request: HttpRequest) -> bool:
    if request.method == "HEAD":
        return True
    agent = request.headers.get("User-Agent", "").lower()
    return request.method == "GET" and any(bot in agent for bot in PREVIEW_AGENTS)


def within_rate_limit(project_id: int, *, now: float | None = None) -> bool:
    """At most PING_RATE_LIMIT pings a minute per project (0: no limit),
    counted in fixed windows in the database."""
    limit = settings.PING_RATE_LIMIT
    if not limit:
        return True
    minute = int((time.time() if now is None else now) // RATE_WINDOW_SECONDS)
    return count_ping(project_id, minute) <= limit


def count_ping(project_id: int, minute: int) -> int:
    """Add one to the project's count of this minute and return it. One
    statement, so concurrent pings on any worker each get their own number;
    the first ping of a minute clears the project's older minutes."""
    table = connection.ops.quote_name(PingCount._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (project_id, minute, count) VALUES (%s, %s, 1) "
            "ON CONFLICT (project_id, minute) "
            f"DO UPDATE SET count = {table}.count + 1 RETURNING count",
            [project_id, minute],
        )
        (count,) = cursor.fetchone()
        if count == 1:
            cursor.execute(
                f"DELETE FROM {table} WHERE project_id = %s AND minute < %s",
                [project_id, minute],
            )
    return count


def _answer(status: int, text: str) -> HttpResponse:
    response = HttpResponse(f"{text}\n", status=status, content_type="text/plain")
    if status == 429:
        response["Retry-After"] = str(RATE_WINDOW_SECONDS)
    return response
