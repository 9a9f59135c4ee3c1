"""The agent's results on disk until the server has them (SQLite, from
Python's standard library: the agent has no database server).

Outcomes go in as the engine's writer saves them and come out oldest
first; they leave only once the server has stored them, so a result
survives an unreachable server, a refusal and a restart of the agent.
Bounded: past `max_results`, the oldest are given up (counted and
logged), so a server gone for good cannot fill the disk.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from datetime import datetime

logger = logging.getLogger(__name__)


class ResultBuffer:
    def __init__(self, path: str, max_results: int) -> None:
        if max_results < 1:
            raise ValueError("max_results must be 1 or more")
        self._max = max_results
        self._lock = threading.Lock()  # the writer adds, the sender takes
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        # WAL with synchronous=FULL: a result acknowledged to the writer
        # survives a crash of the agent or of the machine.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS outcomes ("
            " id INTEGER PRIMARY KEY AUTOINCREMENT,"
            " started_at TEXT NOT NULL,"
            " body TEXT NOT NULL)"
        )
        self.given_up = 0
        # Kept in memory: count(*) reads the whole table.
        self._size = self._db.execute("SELECT count(*) FROM outcomes").fetchone()[0]

    def add(self, outcomes: list[dict]) -> None:
        rows = [(o["started_at"], json.dumps(o)) for o in outcomes]
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT INTO outcomes (started_at, body) VALUES (?, ?)", rows
            )
            self._size += len(rows)
            over = self._size - self._max
            if over > 0:
                self._db.execute(
                    "DELETE FROM outcomes WHERE id IN "
                    "(SELECT id FROM outcomes ORDER BY id LIMIT ?)",
                    (over,),
                )
                self.given_up += over
                self._size -= over
                logger.warning(
                    "Agent buffer full (%d results): gave up the %d oldest",
                    self._max,
                    over,
                )

    def oldest(self, limit: int) -> list[tuple[int, dict]]:
        return [
            (row_id, json.loads(body)) for row_id, body in self.oldest_encoded(limit)
        ]

    def oldest_encoded(
        self, limit: int, max_bytes: int | None = None
    ) -> list[tuple[int, str]]:
        """The oldest outcomes as stored (JSON text, for sending as is),
        at most `limit` of them and, past the first, `max_bytes` of text."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, body FROM outcomes ORDER BY id LIMIT ?", (limit,)
            ).fetchall()
        if max_bytes is None:
            return rows
        taken, size = [], 0
        for row in rows:
            size += len(row[1])
            if taken and size > max_bytes:
                break
            taken.append(row)
        return taken

    def remove(self, ids: list[int]) -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            before = self._db.total_changes
            self._db.executemany(
                "DELETE FROM outcomes WHERE id = ?", [(i,) for i in ids]
            )
            self._size -= self._db.total_changes - before

    def remove_through(self, last_id: int) -> None:
        """Remove every outcome up to `last_id`: a batch taken oldest
        first, in one statement."""
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            before = self._db.total_changes
            self._db.execute("DELETE FROM outcomes WHERE id <= ?", (last_id,))
            self._size -= self._db.total_changes - before

    def size(self) -> int:
        return self._size

    def oldest_started_at(self) -> datetime | None:
        with self._lock:
            row = self._db.execute(
                "SELECT started_at FROM outcomes ORDER BY id LIMIT 1"
            ).fetchone()
        return None if row is None else datetime.fromisoformat(row[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
