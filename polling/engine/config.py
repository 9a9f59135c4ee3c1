from __future__ import annotations

from dataclasses import dataclass

# The most polls one runpoller may be told to run at once.
MAX_CONCURRENT_LIMIT = 5000
# The most driver checks one runpoller may run at once: each is a thread.
MAX_SERVICE_CHECK_CONCURRENCY = 500


@dataclass(frozen=True, slots=True)
class PollerConfig:
    """The poller's knobs. Built at run time, never at import."""

    max_concurrent_http: int = 100
    # Checks that need a blocking driver (databases, gRPC) run at most this
    # many at once, on the side pool (engine/side_pool.py).
    service_check_concurrency: int = 20
    reload_interval: float = 300
    task_queue_size: int = 1000
    result_queue_size: int = 2000
    write_batch_size: int = 500
    write_batch_seconds: float = 0.5
    # First polls after a (re)load are spread over min(interval, this).
    spread_seconds: float = 60
    # Every first poll comes phase_fraction (0 to 1) of min(this spread, a
    # quarter of the interval) later: pollers of different regions
    # (docs/regions.md) do not poll a project in the same second.
    phase_fraction: float = 0.0
    # The poller's region (POLLER_REGION): /metrics labels each poll with it.
    region: str = "default"
    phase_spread_seconds: float = 5.0
    # A failing project not yet confirmed down is polled again after
    # min(interval, this).
    recheck_seconds: float = 20
    status_log_seconds: float = 30
    # How long stopping may take (polls in flight, then saving results);
    # what is still unsaved after it is logged and counted.
    stop_timeout: float = 60
    # gc.freeze() after each load of the projects (engine/collector.py):
    # for a process that is only a poller, as runpoller's is.
    freeze_after_load: bool = False
    # Untrusted teams' polls never connect here (engine/blocked.py).
    blocked_networks: tuple[str, ...] = ()
