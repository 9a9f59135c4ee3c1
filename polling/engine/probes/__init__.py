"""Each kind of check's probe, chosen by the scheme of the target's URL:
one registry (PROBES), no `startswith` branches.

Every kind is a module here with the same shape: `SCHEMES`, the URL
schemes it serves, and `poll_steps(handle, task, started_at)`, a generator
that yields the exchanges its poll needs and returns the Outcome, never
raising (probe.py explains how exchanges are run). Its rules, shared by
the admin, the API and the YAML import, are the module of the same name in
projects/checks/kinds/. To add a kind, write both and list the probe in
KIND_MODULES.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from datetime import datetime
from typing import Any

from polling.engine.blocked import Network
from polling.engine.probes import (
    dns,
    flow,
    grpc,
    http,
    icmp,
    mail,
    mysql,
    postgres,
    redis,
    ssh,
    tcp,
    udp,
    websocket,
)
from polling.engine.transport import Exchange, Transport
from polling.engine.types import Outcome, Target, Task

PollSteps = Generator[Exchange, Any, Outcome]
Probe = Callable[[Transport, Task, datetime], PollSteps]

KIND_MODULES = (
    http,
    tcp,
    ssh,
    udp,
    dns,
    icmp,
    postgres,
    mysql,
    redis,
    grpc,
    mail,
    websocket,
    flow,
)
PROBES: dict[str, Probe] = {
    scheme: module.poll_steps for module in KIND_MODULES for scheme in module.SCHEMES
}


# Kinds whose protocol needs a blocking driver: the side pool runs them
# (engine/side_pool.py), each module with `SCHEMES` and `check(task,
# started_at, blocked_networks)`, which blocks and returns the Outcome,
# never raising.
Driver = Callable[[Task, datetime, Sequence[Network]], Outcome]
DRIVER_MODULES = (postgres, mysql, redis)
DRIVERS: dict[str, Driver] = {
    scheme: module.check for module in DRIVER_MODULES for scheme in module.SCHEMES
}


def driver_for(url: str) -> Driver | None:
    """The blocking driver check of the URL's scheme; None when its kind
    has none."""
    scheme, sep, _ = url.partition("://")
    return DRIVERS.get(scheme.lower()) if sep else None


def probe_of(target: Target) -> Probe | None:
    """The probe of a target: a flow's, when it carries steps (a flow has
    no URL, so no scheme chooses it); else its URL's scheme's."""
    return flow.poll_steps if target.steps else probe_for(target.url)


def probe_for(url: str) -> Probe | None:
    """The probe of the URL's scheme; None when no kind serves it."""
    scheme, sep, _ = url.partition("://")
    return PROBES.get(scheme.lower()) if sep else None
