"""An agent's projects between syncs (polling/agents/source.py): a sync
that names no removal and no new project costs no pass over every id,
and a project whose target the server did not give is asked for again
at the next sync."""

from __future__ import annotations

from datetime import UTC, datetime

from polling.agents.client import ServerUnavailable
from polling.agents.source import ServerTargets
from polling.engine.wire import target_to_json
from tests.support.scheduling import target


class FakeServer:
    """The agent's client, answering from a dict of targets; the first
    `fail_targets` calls for targets go unanswered."""

    def __init__(self, ids: list[int], fail_targets: int = 0) -> None:
        self.ids = ids
        self.fail_targets = fail_targets
        self.asked: list[list[int]] = []
        self.changes: list[dict] = []

    def sync(self, since, report, *, ids=True):
        answer = {"active": True, "complete": False, "targets": [], "removed": []}
        answer.update(self.changes.pop(0) if self.changes else {})
        return answer

    def targets(self, ids):
        self.asked.append(list(ids))
        if self.fail_targets:
            self.fail_targets -= 1
            raise ServerUnavailable("no answer")
        return {"targets": [target_to_json(target(pid)) for pid in ids]}


def source_for(server: FakeServer) -> ServerTargets:
    first = {"active": True, "complete": False, "ids": server.ids, "targets": []}
    return ServerTargets(server, dict, first, on_revoked=lambda: None)


SINCE = datetime(2026, 11, 29, tzinfo=UTC)


def test_targets_the_server_did_not_give_are_asked_for_at_the_next_sync():
    server = FakeServer([1, 2, 3], fail_targets=1)
    source = source_for(server)
    assert source.load_all() == []
    scheduled: set[int] = set()

    ids, targets = source.load_changes(SINCE, scheduled.__contains__)

    assert ids == [1, 2, 3]
    assert sorted(t.project_id for t in targets) == [1, 2, 3]
    assert server.asked == [[1, 2, 3], [1, 2, 3]]
    scheduled.update(ids)
    source.load_changes(SINCE, scheduled.__contains__)
    assert len(server.asked) == 2  # nothing missing any more


def test_a_quiet_sync_gives_the_same_ids_and_a_new_project_joins_them():
    server = FakeServer([1, 2])
    source = source_for(server)
    scheduled = {t.project_id for t in source.load_all()}
    before, _ = source.load_changes(SINCE, scheduled.__contains__)

    again, targets = source.load_changes(SINCE, scheduled.__contains__)
    assert again == before == [1, 2]
    assert targets == []

    server.changes = [{"targets": [target_to_json(target(7))], "removed": [1]}]
    ids, targets = source.load_changes(SINCE, scheduled.__contains__)
    assert ids == [2, 7]
    assert [t.project_id for t in targets] == [7]
    assert server.asked == [[1, 2]]  # the first load only
