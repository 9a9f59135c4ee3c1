"""A target source and a result store with nothing behind them, for
engine tests that need neither a database nor polls."""

from __future__ import annotations


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
