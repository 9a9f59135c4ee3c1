"""The engine's two edges, for an agent: projects come from the server
(ServerTargets, a TargetSource) and results go to the disk buffer
(BufferStore, a ResultStore) for the sender to deliver."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from datetime import datetime

from polling.agents.buffer import ResultBuffer
from polling.agents.client import AgentClient, AgentRevoked, ServerUnavailable
from polling.engine.pacing import no_pause
from polling.engine.types import Outcome, Target
from polling.engine.wire import outcome_to_json, target_from_json
from polling.engine.writer import StoreUnavailable

logger = logging.getLogger(__name__)

# Project ids asked for in one call, when the agent lacks many (it has
# just become its region's active agent).
IDS_PER_CALL = 2000
# How often a sync asks for the ids of all the agent's projects. Every
# sync brings the projects saved since the last (changed, or no longer
# the agent's: within AGENT_SYNC_SECONDS); the full list adds the deleted
# ones, whose results the server refuses meanwhile. Reading it costs the
# server a read of every project: at 1 s syncs and 300,000 projects, the
# better part of a core.
IDS_EVERY_SECONDS = 30.0


class ServerTargets:
    """The agent's projects, as the server hands them out at each sync.

    A sync the server does not answer changes nothing (the engine keeps
    polling what it has: the last ids are given back); a refused token
    empties the list and calls `on_revoked`."""

    def __init__(
        self,
        client: AgentClient,
        report: Callable[[], dict],
        first: dict,
        on_revoked: Callable[[], None],
    ) -> None:
        self._client = client
        self._report = report
        self._first: dict | None = first
        self._on_revoked = on_revoked
        self._ids: list[int] = _ids(first)
        # Ids named but not loaded (a page the server did not answer):
        # between full lists of ids, only these can still be missing.
        self._missing: set[int] = set()
        self.active = bool(first["active"])
        self._unreachable = False
        self._ids_due_at = time.monotonic() + IDS_EVERY_SECONDS

    def load_all(self, pause: Callable[[], None] = no_pause) -> list[Target]:
        answer, self._first = self._first, None
        if answer is None:
            answer = self._sync(None)
            if answer is None:
                return []
        targets = [target_from_json(t) for t in answer["targets"]]
        if not answer["complete"]:
            # A large region's first answer names its projects: their
            # targets come by id, a page at a time. A page the server did
            # not answer is asked for again at the next sync.
            for first in range(0, len(answer["ids"]), IDS_PER_CALL):
                targets += self.load_some(answer["ids"][first : first + IDS_PER_CALL])
                pause()
        self._ids = _ids(answer)
        self._missing = set(self._ids).difference(t.project_id for t in targets)
        return targets

    def load_changes(
        self,
        since: datetime,
        known: Callable[[int], bool],
        pause: Callable[[], None] = no_pause,
    ) -> tuple[list[int], list[Target]]:
        was_active = self.active
        answer = self._sync(since.isoformat(), ids=self._ids_due())
        if answer is not None and self.active and not was_active:
            # Just made the region's active agent: it needs every id now.
            answer = self._sync(since.isoformat(), ids=True)
        if answer is None:
            return self._ids, []
        targets = [target_from_json(t) for t in answer["targets"]]
        loaded = {t.project_id for t in targets}
        if answer["complete"]:
            ids = candidates = [t.project_id for t in targets]
        elif "ids" in answer:
            ids = candidates = answer["ids"]
            self._ids_due_at = time.monotonic() + IDS_EVERY_SECONDS
        else:
            # Most syncs: a few projects saved, none removed. Each is
            # answered without a pass over every project (300,000 each
            # second cost an agent a tenth of its CPU).
            gone = set(answer["removed"])
            ids = [pid for pid in self._ids if pid not in gone] if gone else self._ids
            if loaded:
                ids = ids + list(loaded.difference(ids))
            candidates = [pid for pid in self._missing if pid not in gone]
        unknown = [pid for pid in candidates if pid not in loaded and not known(pid)]
        fetched: list[Target] = []
        for first in range(0, len(unknown), IDS_PER_CALL):
            fetched += self.load_some(unknown[first : first + IDS_PER_CALL])
        self._missing = set(unknown).difference(t.project_id for t in fetched)
        self._ids = ids
        return ids, targets + fetched

    def load_some(self, project_ids: Collection[int]) -> list[Target]:
        try:
            answer = self._client.targets(list(project_ids))
        except ServerUnavailable:
            return []  # asked again at the next sync: still unknown then
        except AgentRevoked as error:
            self._revoked(error)
            return []
        return [target_from_json(t) for t in answer["targets"]]

    def close(self) -> None:
        pass

    def _ids_due(self) -> bool:
        return time.monotonic() >= self._ids_due_at

    def _sync(self, since: str | None, *, ids: bool = True) -> dict | None:
        try:
            answer = self._client.sync(since, self._report(), ids=ids)
        except ServerUnavailable as error:
            if not self._unreachable:
                logger.warning(
                    "Cannot reach the server (%s); polling the projects it last gave",
                    error,
                )
            self._unreachable = True
            return None
        except AgentRevoked as error:
            self._revoked(error)
            return {"active": False, "complete": True, "targets": [], "ids": []}
        if self._unreachable:
            logger.info("The server answers again")
            self._unreachable = False
        if bool(answer["active"]) != self.active:
            self.active = bool(answer["active"])
            logger.info(
                "This agent %s its region's projects",
                "now polls" if self.active else "stands by: another agent polls",
            )
        return answer

    def _revoked(self, error: Exception) -> None:
        logger.error("The server refused this agent's token: %s", error)
        self._ids = []
        self._on_revoked()


def _ids(answer: dict) -> list[int]:
    """The ids of all the projects a sync's answer names."""
    if answer["complete"]:
        return [t["project_id"] for t in answer["targets"]]
    return list(answer["ids"])


class BufferStore:
    """Saves outcomes to the disk buffer, and tells the sender."""

    def __init__(self, buffer: ResultBuffer, on_saved: Callable[[], None]) -> None:
        self._buffer = buffer
        self._on_saved = on_saved

    def save(self, outcomes: Sequence[Outcome]) -> int:
        rows = [outcome_to_json(outcome) for outcome in outcomes]
        try:
            self._buffer.add(rows)
        except sqlite3.OperationalError as error:  # a full or locked disk
            raise StoreUnavailable(str(error)) from error
        self._on_saved()
        return len(rows)

    def close(self) -> None:
        pass

    def reachable(self) -> bool:
        return True
