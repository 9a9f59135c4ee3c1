"""A target source and a result store with nothing behind them, for
engine tests that need neither a database nor polls."""

from __future__ import annotations

import threading


class NoSource:
    def load_all(self, pause=None):
        return []

    def load_changes(self, since, known, pause=None):
        # Every target counts as changed: the coordinator compares them.
        targets = list(self.load_all(pause))
        return [target.project_id for target in targets], targets

    def load_some(self, project_ids):
        return []

    def close(self):
        pass


class NoStore:
    def save(self, outcomes):
        return len(outcomes)

    def close(self):
        pass


class ListSource(NoSource):
    """These targets, and nothing else, as a source."""

    def __init__(self, targets) -> None:
        self.targets = list(targets)

    def load_all(self, pause=None):
        return list(self.targets)

    def load_some(self, project_ids):
        wanted = set(project_ids)
        return [target for target in self.targets if target.project_id in wanted]


class RecordingStore(NoStore):
    """Keeps every outcome saved, in order."""

    def __init__(self) -> None:
        self.saved = []
        self._lock = threading.Lock()

    def save(self, outcomes):
        with self._lock:
            self.saved.extend(outcomes)
        return len(outcomes)

    def of(self, project_id: int) -> list:
        with self._lock:
            return [o for o in self.saved if o.project_id == project_id]
