"""The poller's edge to the database: loading targets (targets.py) and
saving outcomes (results.py), with the heartbeat deadlines the writer moves
(deadlines.py). The names below are re-exported so `polling.store.X` keeps
working for the runpoller, the web's ping endpoint, tests and benchmarks.
"""

from polling.store.connections import (
    close_connection,
    is_connection_error,
    release_connection,
)
from polling.store.results import RESULT_FIELDS, DatabaseResultStore, Fence
from polling.store.targets import (
    DatabaseTargetSource,
    iter_targets,
    load_changes,
    load_targets,
    target_from_project,
)

__all__ = [
    "RESULT_FIELDS",
    "DatabaseResultStore",
    "DatabaseTargetSource",
    "Fence",
    "close_connection",
    "is_connection_error",
    "iter_targets",
    "load_changes",
    "load_targets",
    "release_connection",
    "target_from_project",
]
