"""The capacity benchmark's scenarios, one table row each, and the sizing
rule that sets the concurrency of the slow and mixed ones."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from polling.engine.config import PollerConfig

# Mean response time of each target kind, in seconds, for the sizing rule.
MEAN_RESPONSE_SECONDS = {"fast": 0.002, "slow": 1.0}
# How long a poll of each check kind holds its slot (bench/kinds.py's
# targets, all on loopback): a ping sends its 3 echoes a second apart
# (docs/checks.md), so it holds one for about 2 s; the others answer in
# milliseconds.
KIND_HOLD_SECONDS = {
    "http": 0.002,
    "icmp": 2.0,
    "dns": 0.002,
    "smtp": 0.01,
    "ws": 0.01,
    "grpc": 0.01,
    "redis": 0.005,
    "postgres": 0.02,
}
SLOW_DELAY_MS = 1000
HANG_EVERY = 20  # mixed: one project in 20 (5 %) hangs until its timeout
HEADROOM = 1.25  # run below saturation: queueing grows without bound at 100 %
DEFAULT_CONCURRENCY = PollerConfig().max_concurrent_http
SPREAD_SECONDS = PollerConfig().spread_seconds
QUICK_PROJECTS_DIVISOR = 20
QUICK_INTERVAL_DIVISOR = 6


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    # "engine", "naive", "bare", "writer", "internet", "internet-loop" or
    # "kinds" (projects of several check kinds, bench/kinds.py)
    kind: str
    projects: int = 0
    interval: int = 60  # seconds
    # "fast", "slow" (1 s responses), "mixed" or "internet" (bench/internet.py)
    target: str = "fast"
    concurrency: int | None = None  # None: the sizing rule
    measure: float = 120  # seconds measured after the first polls' spread
    # Demand beyond capacity on purpose: polls/s is the ceiling, and ticks
    # are missed by design.
    saturation: bool = False
    # bare only: which client ("httpx", "pycurl" or "curl", the probe's
    # handle) and whether every request is https with a fresh handshake.
    client: str = "httpx"
    tls: bool = False
    # The window is part of the target: --duration leaves it alone.
    fixed_measure: bool = False
    # "kinds" only: how many projects of each check kind (bench/kinds.py),
    # in order; `projects` is their sum.
    mix: tuple[tuple[str, int], ...] = ()

    @property
    def wanted_polls_per_s(self) -> float:
        return self.projects / self.interval if self.projects else 0.0

    @property
    def timeout(self) -> int:
        """Each project's timeout: 10 s, but shorter than the interval."""
        return min(10, max(self.interval // 2, 1))

    @property
    def failure_share(self) -> float:
        return 1 / HANG_EVERY if self.target == "mixed" else 0.0

    @property
    def warmup(self) -> float:
        """First polls are spread over min(interval, the engine's spread)."""
        return min(self.interval, SPREAD_SECONDS)

    def max_concurrent(self) -> int:
        if self.concurrency is not None:
            return self.concurrency
        if self.mix:
            return kinds_concurrency(self.mix, self.interval)
        return sized_concurrency(
            self.wanted_polls_per_s,
            mean_response=MEAN_RESPONSE_SECONDS[
                "slow" if self.target == "slow" else "fast"
            ],
            failure_share=self.failure_share,
            timeout=self.timeout,
        )

    def quick(self, measure: float) -> Scenario:
        """A smaller, shorter version for a smoke run."""
        if self.mix:
            return replace(
                with_projects(self, self.projects // QUICK_PROJECTS_DIVISOR),
                interval=max(self.interval // QUICK_INTERVAL_DIVISOR, 1),
                measure=measure,
            )
        return replace(
            self,
            projects=max(self.projects // QUICK_PROJECTS_DIVISOR, 20)
            if self.projects
            else 0,
            interval=max(self.interval // QUICK_INTERVAL_DIVISOR, 1),
            measure=measure,
        )


def sized_concurrency(
    polls_per_s: float, *, mean_response: float, failure_share: float, timeout: float
) -> int:
    """The sizing rule, with headroom, rounded up to a multiple of 10:

    concurrency ≈ polls/s x mean response time
                  + polls/s x failure share x timeout
    """
    needed = polls_per_s * mean_response + polls_per_s * failure_share * timeout
    return max(math.ceil(needed * HEADROOM / 10) * 10, 10)


def kinds_concurrency(mix, interval: int) -> int:
    """The sizing rule over a mix of kinds, each holding its slot for its
    KIND_HOLD_SECONDS; never below the default limit."""
    needed = sum(count / interval * KIND_HOLD_SECONDS[kind] for kind, count in mix)
    return max(math.ceil(needed * HEADROOM / 10) * 10, DEFAULT_CONCURRENCY)


def with_projects(scenario: Scenario, projects: int) -> Scenario:
    """The scenario with `projects` in all; a mix keeps its proportions
    (at least 5 projects of each kind)."""
    if not scenario.mix:
        return replace(scenario, projects=projects)
    total = scenario.projects
    mix = tuple(
        (kind, max(count * projects // total, 5)) for kind, count in scenario.mix
    )
    return replace(scenario, mix=mix, projects=sum(count for _, count in mix))


def _kinds(name: str, *mix: tuple[str, int]) -> Scenario:
    projects = sum(count for _, count in mix)
    return Scenario(name, "kinds", projects, target="kinds", mix=mix)


def _engine(name: str, projects: int, **options) -> Scenario:
    return Scenario(name, "engine", projects, **options)


def _bare(name: str, concurrency: int, client: str, **options) -> Scenario:
    return Scenario(
        name, "bare", concurrency=concurrency, client=client, measure=30, **options
    )


# Saturation: 30,000 polls/s wanted (30,000 projects every second), more
# than one process can make. (Until 2026-11-24 it was every 3 s: 10,000
# polls/s, which the engine on a CurlMulti per thread came to keep up with.)
_SATURATED = {"interval": 1, "saturation": True, "measure": 60}
SCALE_CONCURRENCY = 50
# The default MAX_CONCURRENT_HTTP since issue #32 (monitor/settings.py):
# 100,000 projects at 60 s with 3 % hanging for 10 s need about 710.
INTERNET_CONCURRENCY = 1000
# Issue #43's service checks, in the order the report lists them.
SERVICE_KINDS = ("smtp", "ws", "grpc", "redis", "postgres")
IDLE_SCENARIO = "kind-idle"
SCENARIOS = [
    _engine("fast-1k", 1_000, concurrency=DEFAULT_CONCURRENCY),
    _engine("fast-10k", 10_000, concurrency=DEFAULT_CONCURRENCY),
    _engine("fast-30k", 30_000, concurrency=DEFAULT_CONCURRENCY, measure=300),
    _engine("fast-50k", 50_000, concurrency=DEFAULT_CONCURRENCY),
    _engine("slow-10k", 10_000, target="slow"),
    _engine("mixed-30k", 30_000, target="mixed", measure=180),
    # Issue #12: 5,000 polls/s, every one on time, for 5 minutes.
    _engine(
        "scale-300k",
        300_000,
        concurrency=SCALE_CONCURRENCY,
        measure=300,
        fixed_measure=True,
    ),
    # Issue #32: the same load at each limit; slots not in use should cost
    # nothing (CPU per poll within 15 % of each other, 0 missed, lag p99 < 1 s).
    *(
        _engine(f"slots-{limit}", 300_000, concurrency=limit, measure=120)
        for limit in (100, 400, 1000, 2000)
    ),
    _engine("sat-50", 30_000, concurrency=50, **_SATURATED),
    _engine("sat-200", 30_000, concurrency=200, **_SATURATED),
    _engine("sat-500", 30_000, concurrency=500, **_SATURATED),
    _bare("bare-50", 50, "httpx"),
    _bare("bare-200", 200, "httpx"),
    _bare("bare-500", 500, "httpx"),
    _bare("pycurl-50", 50, "pycurl"),
    _bare("pycurl-200", 200, "pycurl"),
    _bare("pycurl-500", 500, "pycurl"),
    # The probe's own libcurl handle, between the two.
    _bare("probe-50", 50, "curl"),
    # HTTPS, a full handshake per request: the probe's handle against httpx.
    _bare("tls-httpx", 50, "httpx", tls=True),
    _bare("tls-probe", 50, "curl", tls=True),
    # Issue #32: targets as on the internet (bench/internet.py), the engine
    # at the default limit beside the loops a developer would write.
    Scenario(
        "internet-100k",
        "internet",
        100_000,
        target="internet",
        concurrency=INTERNET_CONCURRENCY,
    ),
    Scenario(
        "internet-httpx",
        "internet-loop",
        100_000,
        target="internet",
        concurrency=INTERNET_CONCURRENCY,
        client="httpx",
    ),
    Scenario(
        "internet-pycurl",
        "internet-loop",
        100_000,
        target="internet",
        concurrency=INTERNET_CONCURRENCY,
        client="pycurl",
    ),
    # Issue #41: one runpoller with pings and DNS checks beside HTTP
    # (3,333 polls/s), and issue #43: with service checks; each kind alone
    # too, for its CPU per poll (bench/kinds.py).
    _kinds("kinds-200k", ("http", 100_000), ("icmp", 50_000), ("dns", 50_000)),
    _kinds(
        "services-110k",
        ("http", 100_000),
        *((kind, 2_000) for kind in SERVICE_KINDS),
    ),
    # The poller nearly idle (1 poll/s): what it costs with no work, taken
    # off the others' CPU for their cost per poll above it.
    _kinds(IDLE_SCENARIO, ("http", 60)),
    _kinds("kind-http-50k", ("http", 50_000)),
    _kinds("kind-icmp-50k", ("icmp", 50_000)),
    _kinds("kind-dns-50k", ("dns", 50_000)),
    *(_kinds(f"kind-{kind}-2k", (kind, 2_000)) for kind in SERVICE_KINDS),
    Scenario("naive-1k", "naive", 1_000, measure=90),
    Scenario("naive-10k", "naive", 10_000, measure=90),
    Scenario("writer", "writer", 30_000, measure=30),
]


def kind_of_url(url: str) -> str:
    """The bench's name of a project's kind, from its URL."""
    scheme = url.partition("://")[0]
    return {"https": "http", "postgresql": "postgres"}.get(scheme, scheme)


def pick(names: list[str] | None) -> list[Scenario]:
    """The scenarios named, or in a group named, in `names` (e.g.
    "fast-30k", "sat", "naive"); all of them when None."""
    if not names:
        return list(SCENARIOS)
    chosen = [s for s in SCENARIOS if any(_named(s, n) for n in names)]
    unknown = [n for n in names if not any(_named(s, n) for s in SCENARIOS)]
    if unknown:
        raise ValueError(f"unknown scenarios: {', '.join(unknown)}")
    return chosen


def _named(scenario: Scenario, name: str) -> bool:
    return scenario.name == name or scenario.name.startswith(f"{name}-")
