"""The agent's disk buffer: oldest first, kept across restarts, bounded."""

from __future__ import annotations

import json

from polling.agents.buffer import ResultBuffer


def outcome(number: int) -> dict:
    return {"project_id": number, "started_at": f"2026-11-29T12:00:{number:02d}+00:00"}


def test_results_come_out_oldest_first_and_leave_once_removed(tmp_path):
    buffer = ResultBuffer(str(tmp_path / "b.sqlite3"), max_results=100)
    buffer.add([outcome(1), outcome(2)])
    buffer.add([outcome(3)])

    batch = buffer.oldest(2)
    assert [o["project_id"] for _, o in batch] == [1, 2]
    buffer.remove([row_id for row_id, _ in batch])

    assert buffer.size() == 1
    assert [o["project_id"] for _, o in buffer.oldest(10)] == [3]
    assert buffer.oldest_started_at().second == 3


def test_what_was_added_is_there_after_a_restart(tmp_path):
    path = str(tmp_path / "b.sqlite3")
    first = ResultBuffer(path, max_results=100)
    first.add([outcome(1), outcome(2)])
    first.close()

    again = ResultBuffer(path, max_results=100)
    assert again.size() == 2
    assert [o["project_id"] for _, o in again.oldest(10)] == [1, 2]


def test_past_its_bound_the_oldest_are_given_up_and_counted(tmp_path):
    buffer = ResultBuffer(str(tmp_path / "b.sqlite3"), max_results=3)
    buffer.add([outcome(n) for n in range(1, 6)])

    assert buffer.size() == 3
    assert buffer.given_up == 2
    assert [o["project_id"] for _, o in buffer.oldest(10)] == [3, 4, 5]


def test_a_batch_is_sent_as_stored_and_removed_up_to_its_last(tmp_path):
    buffer = ResultBuffer(str(tmp_path / "b.sqlite3"), max_results=100)
    buffer.add([outcome(n) for n in range(1, 5)])

    batch = buffer.oldest_encoded(3)
    assert [json.loads(body)["project_id"] for _, body in batch] == [1, 2, 3]
    buffer.add([outcome(5)])  # the writer adds while the batch is out
    buffer.remove_through(batch[-1][0])

    assert buffer.size() == 2
    assert [o["project_id"] for _, o in buffer.oldest(10)] == [4, 5]


def test_a_batch_stops_at_its_byte_bound_but_takes_at_least_one(tmp_path):
    buffer = ResultBuffer(str(tmp_path / "b.sqlite3"), max_results=100)
    buffer.add([outcome(n) for n in range(1, 5)])
    one = len(buffer.oldest_encoded(1)[0][1])

    assert len(buffer.oldest_encoded(10, max_bytes=2 * one)) == 2
    assert len(buffer.oldest_encoded(10, max_bytes=1)) == 1
