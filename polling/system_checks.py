"""System checks for the poller's settings: bad values fail at startup."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register

from polling.engine.config import MAX_CONCURRENT_LIMIT, MAX_SERVICE_CHECK_CONCURRENCY


def parse_bind(bind: str) -> tuple[str, int]:
    """Split "host:port" (or "[::1]:port"; port 0 picks a free one); raises
    ValueError when malformed."""
    host, sep, port = bind.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"expected host:port, got {bind!r}")
    return host.strip("[]"), int(port)


# The last of 10 retries waits 512 s (polling/sync_sender.py), past the
# pollers' own periodic reload: more would only add calls.
MAX_SYNC_RETRIES = 10

# runpoller runs the checks of this tag (and the models'), not every check:
# the URLs' check would import every page and the admin into the poller.
POLLER_CHECKS = "poller"


@register(POLLER_CHECKS)
def poller_settings_check(app_configs, **kwargs) -> list[Error]:
    errors = []

    def require(ok: bool, message: str, error_id: str) -> None:
        if not ok:
            errors.append(Error(message, id=error_id))

    require(
        1 <= settings.MAX_CONCURRENT_HTTP <= MAX_CONCURRENT_LIMIT,
        f"MAX_CONCURRENT_HTTP must be from 1 to {MAX_CONCURRENT_LIMIT}.",
        "polling.E001",
    )
    require(
        settings.MIN_POLL_INTERVAL >= 1,
        "MIN_POLL_INTERVAL must be at least 1.",
        "polling.E002",
    )
    require(
        settings.POLLER_RELOAD_INTERVAL > 0,
        "POLLER_RELOAD_INTERVAL must be a positive number of seconds.",
        "polling.E003",
    )
    require(
        settings.POLLER_TASK_QUEUE_SIZE >= 1 and settings.POLLER_RESULT_QUEUE_SIZE >= 1,
        "POLLER_TASK_QUEUE_SIZE and POLLER_RESULT_QUEUE_SIZE must be at least 1.",
        "polling.E004",
    )
    try:
        parse_bind(settings.POLLER_CONTROL_BIND)
    except ValueError as error:
        errors.append(Error(f"POLLER_CONTROL_BIND: {error}", id="polling.E005"))
    require(
        settings.POLLER_CONTROL_URL.startswith(("http://", "https://")),
        "POLLER_CONTROL_URL must start with http:// or https://.",
        "polling.E006",
    )
    require(
        settings.POLLER_SHARDS >= 1,
        "POLLER_SHARDS must be at least 1.",
        "polling.E007",
    )
    require(
        0 < settings.POLLER_LEASE_TICK <= settings.POLLER_LEASE_TTL / 2,
        "POLLER_LEASE_TICK must be positive and at most half of "
        "POLLER_LEASE_TTL, so a lease is renewed at least twice before it "
        "could expire.",
        "polling.E008",
    )
    require(
        1 <= settings.SERVICE_CHECK_CONCURRENCY <= MAX_SERVICE_CHECK_CONCURRENCY,
        f"SERVICE_CHECK_CONCURRENCY must be from 1 to {MAX_SERVICE_CHECK_CONCURRENCY}.",
        "polling.E010",
    )
    require(
        0 <= settings.POLLER_SYNC_RETRIES <= MAX_SYNC_RETRIES,
        f"POLLER_SYNC_RETRIES must be from 0 to {MAX_SYNC_RETRIES}.",
        "polling.E011",
    )
    # Here, not at the top: this module loads in every process (the app's
    # ready()), and the engine's module brings pycurl, which only the
    # poller uses.
    from polling.engine.blocked import parse_networks

    try:
        parse_networks(settings.POLL_BLOCKED_NETWORKS)
    except ValueError as error:
        errors.append(Error(f"POLL_BLOCKED_NETWORKS: {error}", id="polling.E009"))
    return errors
