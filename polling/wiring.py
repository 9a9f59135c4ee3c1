"""Build the engine from Django settings, with the database at its edges."""

from __future__ import annotations

from django.conf import settings
from django.db import connection

from polling.engine.config import PollerConfig
from polling.engine.coordinator import Coordinator
from polling.engine.shards import Ownership
from polling.engine.transport import set_source_address
from polling.engine.writer import ResultStore
from polling.leases import LeaseFence, LeaseKeeper
from polling.regions import (
    REGION_SPREAD_SECONDS,
    phase_fraction,
    region_id,
    region_name,
)
from polling.store import DatabaseResultStore, DatabaseTargetSource
from polling.writer_process import ProcessStore


def config_from_settings(**overrides) -> PollerConfig:
    # Every handle of this process sends from POLLER_SOURCE_ADDRESS.
    set_source_address(settings.POLLER_SOURCE_ADDRESS)
    """The poller's knobs from settings; overrides that are None are ignored."""
    values = {
        "max_concurrent_http": settings.MAX_CONCURRENT_HTTP,
        "service_check_concurrency": settings.SERVICE_CHECK_CONCURRENCY,
        "reload_interval": settings.POLLER_RELOAD_INTERVAL,
        "task_queue_size": settings.POLLER_TASK_QUEUE_SIZE,
        "result_queue_size": settings.POLLER_RESULT_QUEUE_SIZE,
        "recheck_seconds": settings.POLLER_RECHECK_SECONDS,
        "stop_timeout": settings.POLLER_STOP_TIMEOUT,
        "blocked_networks": tuple(settings.POLL_BLOCKED_NETWORKS),
        "phase_fraction": phase_fraction(region_id()),
        "region": region_name(),
        "phase_spread_seconds": REGION_SPREAD_SECONDS,
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return PollerConfig(**values)


def shares_projects() -> bool:
    """Whether pollers share the projects through shard leases: on
    PostgreSQL. SQLite keeps one poller (polling/sqlite_lock.py)."""
    return connection.vendor == "postgresql"


def result_store(*, fence: LeaseFence | None = None) -> ResultStore:
    """Where the writer saves: through a child process of its own, unless
    POLLER_WRITER_PROCESS is off (polling/writer_process.py says why)."""
    if settings.POLLER_WRITER_PROCESS:
        return ProcessStore(fence=fence)
    return DatabaseResultStore(fence=fence)


def database_coordinator(config: PollerConfig) -> Coordinator:
    """A Coordinator that polls every enabled project and saves to the
    database: the only poller."""
    return Coordinator(
        config,
        source=DatabaseTargetSource(region_id=region_id()),
        store=result_store(),
    )


def shared_coordinator(
    config: PollerConfig, *, node_id: int
) -> tuple[Coordinator, LeaseKeeper]:
    """A Coordinator that polls the shards its LeaseKeeper holds, and saves
    only their results. Start the coordinator, then the keeper."""
    count = settings.POLLER_SHARDS
    coordinator: Coordinator | None = None

    def on_change(ownership: Ownership) -> None:
        coordinator.set_ownership(ownership)

    def settle(timeout: float) -> bool:
        return coordinator.settle(timeout)

    keeper = LeaseKeeper(
        node_id=node_id,
        shard_count=count,
        region_id=region_id(),
        ttl=settings.POLLER_LEASE_TTL,
        tick=settings.POLLER_LEASE_TICK,
        on_change=on_change,
        settle=settle,
    )
    fence = LeaseFence(keeper)
    coordinator = Coordinator(
        config,
        source=DatabaseTargetSource(region_id=region_id()),
        store=result_store(fence=fence),
        ownership=Ownership.nothing(count),
        lease_statements=lambda: keeper.statements + fence.statements,
    )
    return coordinator, keeper
