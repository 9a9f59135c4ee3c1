"""DueHeap: when each project is next due, earliest first."""

from __future__ import annotations

import heapq
import itertools


class DueHeap:
    """Due times keyed by project id, on one heap.

    Rescheduling and removal are lazy: the old heap entry stays behind and is
    skipped when it surfaces, so every operation is O(log n). A sequence
    number breaks ties, so entries never compare project ids by accident.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int]] = []
        self._current: dict[int, tuple[float, int]] = {}
        self._sequence = itertools.count()

    def __len__(self) -> int:
        return len(self._current)

    def __contains__(self, project_id: object) -> bool:
        return project_id in self._current

    def schedule(self, project_id: int, due: float) -> None:
        """Set (or move) the project's next due time."""
        sequence = next(self._sequence)
        self._current[project_id] = (due, sequence)
        heapq.heappush(self._heap, (due, sequence, project_id))
        if len(self._heap) > 2 * len(self._current) + 1024:
            self._compact()

    def remove(self, project_id: int) -> None:
        self._current.pop(project_id, None)

    def due(self, project_id: int) -> float | None:
        """The project's next due time, or None when it is not scheduled."""
        entry = self._current.get(project_id)
        return entry[0] if entry else None

    def pop_due(self, now: float, limit: int) -> list[tuple[int, float]]:
        """Remove and return up to `limit` (project_id, due) pairs due by now,
        earliest first."""
        popped = []
        while self._heap and self._heap[0][0] <= now and len(popped) < limit:
            due, sequence, project_id = heapq.heappop(self._heap)
            if self._current.get(project_id) == (due, sequence):
                del self._current[project_id]
                popped.append((project_id, due))
        return popped

    def next_due(self) -> float | None:
        """The earliest due time, or None when nothing is scheduled."""
        while self._heap:
            due, sequence, project_id = self._heap[0]
            if self._current.get(project_id) == (due, sequence):
                return due
            heapq.heappop(self._heap)
        return None

    def _compact(self) -> None:
        self._heap = [
            (due, sequence, project_id)
            for project_id, (due, sequence) in self._current.items()
        ]
        heapq.heapify(self._heap)
