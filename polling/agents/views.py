"""The server's side of the agent protocol, under /api/v1/agent/.

Each view is a column of guard clauses: the token, then the body, then
the work. An agent reads only its region's projects (of its team, when it
has one) and writes only their results; results go through the same
writer steps as a poller's (state, rollups, incidents, region quorum).
"""

from __future__ import annotations

import json
from datetime import datetime

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from polling.agents import assignments
from polling.agents.auth import Refused, calling_agent
from polling.engine.wire import WireError, outcome_from_json, target_to_json
from polling.engine.writer import StoreUnavailable
from polling.regions import REGION_SPREAD_SECONDS, phase_fraction
from polling.store import DatabaseResultStore
from projects.models import Agent

# The most outcomes one call may carry; an agent sends 500 at a time.
MAX_OUTCOMES = 2000
MAX_IDS = 10_000
# A first sync carries every target up to this many (a few MB of JSON,
# made in about a second); past it only their ids, and the agent asks for
# the targets by id, a page at a time: a region of 300,000 projects in
# one answer took longer than the agent waits for one.
MAX_TARGETS_AT_ONCE = 5000


@csrf_exempt
@require_POST
def sync(request: HttpRequest) -> JsonResponse:
    """The agent checks in; the answer says whether it is the region's
    active agent, the settings its engine runs with, and its projects:
    all of them when it sends no `since` (only their ids past
    MAX_TARGETS_AT_ONCE); else the targets of those saved since then,
    the ids of those saved since then that it no longer polls
    (`removed`), and, unless it sends `"ids": false`, the ids of all
    (which catch deleted projects, and cost a read of every project)."""
    try:
        agent = calling_agent(request)
    except Refused as refusal:
        return _error(401, str(refusal))
    try:
        body = _json_body(request)
        report = _report(body)
        since = _time(body.get("since"), "since")
    except ValueError as error:
        return _error(400, str(error))
    active = assignments.check_in(agent, report, timezone.now())
    answer = {"active": active, "config": _config(agent)}
    if not active:
        answer.update(complete=since is None, ids=[], targets=[])
    elif since is None:
        ids = assignments.polled_ids(agent)
        if len(ids) > MAX_TARGETS_AT_ONCE:
            answer.update(complete=False, ids=ids, targets=[])
        else:
            targets = assignments.all_targets(agent)
            answer.update(complete=True, targets=[target_to_json(t) for t in targets])
    else:
        targets, removed = assignments.changed_targets(agent, since)
        answer.update(
            complete=False,
            targets=[target_to_json(t) for t in targets],
            removed=removed,
        )
        if body.get("ids", True):
            answer.update(ids=assignments.polled_ids(agent))
    return JsonResponse(answer)


@csrf_exempt
@require_POST
def targets(request: HttpRequest) -> JsonResponse:
    """The targets of these project ids that the agent polls."""
    try:
        agent = calling_agent(request)
    except Refused as refusal:
        return _error(401, str(refusal))
    try:
        ids = _ids(_json_body(request).get("ids"))
    except ValueError as error:
        return _error(400, str(error))
    found = assignments.some_targets(agent, ids)
    return JsonResponse({"targets": [target_to_json(t) for t in found]})


@csrf_exempt
@require_POST
def results(request: HttpRequest) -> JsonResponse:
    """Save the agent's outcomes as its region's polls, each (project,
    region, window) once however often it is sent; those of projects the
    agent does not poll are refused (counted, not saved)."""
    try:
        agent = calling_agent(request)
    except Refused as refusal:
        return _error(401, str(refusal))
    try:
        outcomes = _outcomes(_json_body(request).get("outcomes"))
    except ValueError as error:
        return _error(400, str(error))
    allowed = assignments.allowed_ids(agent, {o.project_id for o in outcomes})
    kept = [o for o in outcomes if o.project_id in allowed]
    try:
        saved = DatabaseResultStore(region_id=agent.region_id).save(kept) if kept else 0
    except StoreUnavailable:
        response = _error(503, "The database is unavailable; send them again.")
        response["Retry-After"] = "5"
        return response
    return JsonResponse(
        {
            "received": len(outcomes),
            "saved": saved,
            "refused": len(outcomes) - len(kept),
        }
    )


def _config(agent: Agent) -> dict:
    return {
        "region": agent.region.name,
        "phase_fraction": phase_fraction(agent.region_id),
        "phase_spread_seconds": REGION_SPREAD_SECONDS,
        # The server's policy, not the agent's: untrusted teams' projects
        # may not reach these networks from an agent either.
        "blocked_networks": list(settings.POLL_BLOCKED_NETWORKS),
    }


def _json_body(request: HttpRequest) -> dict:
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise ValueError("The body is not JSON.") from None
    if not isinstance(body, dict):
        raise ValueError("The body is a JSON object.")
    return body


def _report(body: dict) -> assignments.AgentReport:
    buffered = body.get("buffered_results", 0)
    if not isinstance(buffered, int) or isinstance(buffered, bool) or buffered < 0:
        raise ValueError("buffered_results: expected a count (0 or more).")
    return assignments.AgentReport(
        version=str(body.get("version", "")),
        host=str(body.get("host", "")),
        buffered_results=buffered,
        buffered_oldest_at=_time(body.get("buffered_oldest_at"), "buffered_oldest_at"),
    )


def _time(value: object, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ValueError(f"{name}: expected an ISO 8601 time with its zone.")
    return parsed


def _ids(value: object) -> list[int]:
    if not isinstance(value, list) or len(value) > MAX_IDS:
        raise ValueError(f"ids: expected a list of at most {MAX_IDS} project ids.")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise ValueError("ids: expected project ids (integers).")
    return value


def _outcomes(value: object) -> list:
    if not isinstance(value, list) or len(value) > MAX_OUTCOMES:
        raise ValueError(f"outcomes: expected a list of at most {MAX_OUTCOMES}.")
    outcomes = []
    for index, item in enumerate(value):
        try:
            outcomes.append(outcome_from_json(item))
        except WireError as error:
            raise ValueError(f"outcomes[{index}]: {error}") from None
    return outcomes


def _error(status: int, message: str) -> JsonResponse:
    return JsonResponse({"detail": message}, status=status)
