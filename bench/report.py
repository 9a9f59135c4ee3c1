"""The capacity benchmark's results: the markdown table, the checks against
issue #6's targets, and the section published for each run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness import markdown_table
from scenarios import IDLE_SCENARIO, Scenario

# `--append FILE` inserts a run's section just above this line when FILE has it.
RESULTS_MARKER = "<!-- capacity-results: bench/capacity.py inserts new runs above -->"
LAG_LIMIT_MS = 1000
RSS_LIMIT_MB = 300
SCHEDULED_LIMIT_S = 10
EFFICIENCY = 0.7
WRITER_FACTOR = 2
# Issue #12: 300,000 projects in one process, and HTTPS against httpx.
SCALE_RSS_LIMIT_MB = 1536
SCALE_SCHEDULED_LIMIT_S = 15
TLS_FACTOR = 2
# Issue #41: a ping's and a DNS check's CPU per poll.
KIND_CPU_LIMIT_US = 50


@dataclass
class Result:
    """One scenario's numbers; None where a number does not apply."""

    scenario: Scenario
    database: str
    concurrency: int | str
    polls_per_s: float | None = None
    missed_status: int | None = None
    missed_db: int | None = None
    lag_status: tuple = (None, None, None)  # p50, worst p99, max (ms)
    lag_db: tuple = (None, None, None)  # p50, p99, max (ms)
    polls: int | None = None
    rows: int | None = None
    target_got: int | None = None
    cpu_percent: float | None = None
    machine_cpu_percent: float | None = None
    peak_rss_mb: float | None = None
    scheduled_s: float | None = None
    first_polls_done_s: float | None = None
    extra: dict = field(default_factory=dict)


def table(results: list[Result]) -> str:
    return markdown_table([_cells(r) for r in results])


def _cells(r: Result) -> dict[str, str]:
    s = r.scenario
    return {
        "scenario": s.name + (" (failed)" if "error" in r.extra else ""),
        "database": r.database,
        "projects": f"{s.projects:,}" if s.projects else "-",
        "interval": f"{s.interval} s" if s.projects else "-",
        "concurrency": str(r.concurrency),
        "wanted/s": _num(s.wanted_polls_per_s or None),
        "polls/s": _num(r.polls_per_s),
        "missed (status / DB)": f"{_num(r.missed_status)} / {_num(r.missed_db)}",
        "lag p50 / p99 / max (status)": _lag(r.lag_status),
        "lag p50 / p99 / max (DB)": _lag(r.lag_db),
        "polls / rows / target got": (
            f"{_num(r.polls)} / {_num(r.rows)} / {_num(r.target_got)}"
        ),
        "CPU": _num(r.cpu_percent, " %"),
        "CPU per poll": _num(cpu_per_poll_us(r), " µs"),
        "machine CPU": _num(r.machine_cpu_percent, " %"),
        "peak RSS": _num(r.peak_rss_mb, " MB"),
        "scheduled after": _num(r.scheduled_s, " s", 1),
        "all first polls done after": _num(r.first_polls_done_s, " s", 1),
    }


def internet_table(results: list[Result]) -> str:
    """What issue #32 asks of the internet-like scenario: polls/s, lag,
    missed, CPU per poll of the poller and of the writer, RSS, and the
    target's CPU apart."""

    def per_poll(percent: float | None, r: Result) -> str:
        if percent is None or not r.polls_per_s:
            return "-"
        return _num(percent / 100 / r.polls_per_s * 1e6, " µs")

    rows = []
    for r in results:
        extra = r.extra
        rows.append(
            {
                "run": r.scenario.name + (" (failed)" if "error" in extra else ""),
                "database": r.database,
                "slots / threads": str(r.concurrency),
                "wanted/s": _num(r.scenario.wanted_polls_per_s or None),
                "polls/s": _num(r.polls_per_s),
                # The status lag: the DB's reads a row's window (see
                # capacity-method.md), not when its poll started.
                "lag p50 / p99 / max": _lag(r.lag_status),
                "missed": _num(
                    r.missed_db if r.missed_db is not None else r.missed_status
                ),
                "failed polls": _num(extra.get("failed")),
                "poller CPU per poll": per_poll(extra.get("poller_cpu_percent"), r),
                "writer CPU per poll": per_poll(extra.get("writer_cpu_percent"), r),
                "peak RSS": _num(r.peak_rss_mb, " MB"),
                "target CPU": _num(extra.get("target_cpu_percent"), " %"),
            }
        )
    return markdown_table(rows)


def kinds_table(results: list[Result]) -> str:
    """Issues #41 and #43: each kind's polls and failures in every run,
    and the poller's CPU per poll (its own process: not the writer, not
    the targets) of each kind run alone; "all" is the whole run's."""
    rows = []
    for r in results:
        by_kind = r.extra.get("by_kind") or {}
        if r.scenario.name == IDLE_SCENARIO:
            rows.append(_idle_row(r))
            continue
        for kind, count in r.scenario.mix:
            found = by_kind.get(kind, {})
            alone = alone_cpu_per_poll_us(results, r.database, kind)
            above = alone_cpu_per_poll_us(results, r.database, kind, above_idle=True)
            rows.append(
                {
                    "run": r.scenario.name,
                    "database": r.database,
                    "kind": kind,
                    "projects": f"{count:,}",
                    "polls/s": _num(found.get("polls_per_s")),
                    "rows / failed": (
                        f"{_num(found.get('rows'))} / {_num(found.get('down'))}"
                    ),
                    "poller CPU per poll (alone)": _num(alone, " µs"),
                    "above idle": _num(above, " µs"),
                    "workers / scheduler": (
                        _parts_per_poll(r) if len(r.scenario.mix) == 1 else ""
                    ),
                    "failure reasons": "; ".join(
                        f"{reason} ({n:,})"
                        for reason, n in found.get("reasons", {}).items()
                    )[:200],
                }
            )
        if len(r.scenario.mix) > 1:
            rows.append(
                {
                    "run": r.scenario.name,
                    "database": r.database,
                    "kind": "all",
                    "projects": f"{r.scenario.projects:,}",
                    "polls/s": _num(r.polls_per_s),
                    "rows / failed": (
                        f"{_num(r.rows)} / {_num(r.extra.get('rows_down'))}"
                    ),
                    "poller CPU per poll (alone)": _num(
                        poller_cpu_per_poll_us(r), " µs"
                    )
                    + " (this run)",
                    "above idle": "",
                    "workers / scheduler": _parts_per_poll(r),
                    "failure reasons": "",
                }
            )
    return markdown_table(rows)


def _idle_row(r: Result) -> dict[str, str]:
    return {
        "run": r.scenario.name,
        "database": r.database,
        "kind": "(idle poller)",
        "projects": f"{r.scenario.projects:,}",
        "polls/s": _num(r.polls_per_s, digits=1),
        "rows / failed": f"{_num(r.rows)} / {_num(r.extra.get('rows_down'))}",
        "poller CPU per poll (alone)": _num(
            r.extra.get("poller_cpu_percent"), " % of a core", 1
        ),
        "above idle": "",
        "workers / scheduler": "",
        "failure reasons": "",
    }


def _parts_per_poll(r: Result) -> str:
    """The CPU per poll of the poller's worker threads and of its scheduler
    thread (bench/runs.py POLLER_PARTS), not above idle."""
    parts = r.extra.get("parts_cpu_percent") or {}
    if not r.polls_per_s or "workers" not in parts:
        return "-"
    workers, scheduler = (
        parts[part] / 100 / r.polls_per_s * 1e6 for part in ("workers", "scheduler")
    )
    return f"{workers:,.0f} / {scheduler:,.0f} µs"


def poller_cpu_per_poll_us(r: Result) -> float | None:
    """The poller process's own CPU per poll: its writer child left out."""
    percent = r.extra.get("poller_cpu_percent")
    if percent is None or not r.polls_per_s:
        return None
    return percent / 100 / r.polls_per_s * 1e6


def alone_cpu_per_poll_us(
    results: list[Result], database: str, kind: str, *, above_idle: bool = False
) -> float | None:
    """The poller's CPU per poll in the run of `kind` alone (kind-<kind>-N);
    `above_idle`: less the nearly idle poller's CPU (kind-idle), when it
    ran."""
    idle = _idle_percent(results, database) if above_idle else 0.0
    for r in results:
        mix = r.scenario.mix
        alone = len(mix) == 1 and mix[0][0] == kind
        if alone and r.database == database and r.scenario.name != IDLE_SCENARIO:
            percent = r.extra.get("poller_cpu_percent")
            if percent is None or idle is None or not r.polls_per_s:
                return None
            return (percent - idle) / 100 / r.polls_per_s * 1e6
    return None


def _idle_percent(results: list[Result], database: str) -> float | None:
    for r in results:
        if r.scenario.name == IDLE_SCENARIO and r.database == database:
            return r.extra.get("poller_cpu_percent")
    return None


def cpu_per_poll_us(r: Result) -> float | None:
    """The process's CPU time per poll over the measured window."""
    if not (r.cpu_percent and r.polls_per_s):
        return None
    return r.cpu_percent / 100 / r.polls_per_s * 1e6


def _num(value, unit: str = "", digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}{unit}"


def _lag(lag: tuple) -> str:
    if lag[0] is None:
        return "-"
    return " / ".join(_num(v) for v in lag) + " ms"


# Checks against the targets


def checks(results: list[Result], writer: list[dict]) -> list[str]:
    lines = []
    for r in results:
        lines += _scenario_checks(r)
    lines += _efficiency_checks(results)
    lines += _tls_checks(results)
    lines += _kind_cost_checks(results)
    for ceiling in (w for w in writer if "error" not in w):
        wanted = 30_000 / 60
        rate = ceiling["rows_per_s"]
        lines.append(
            _verdict(
                rate >= WRITER_FACTOR * wanted,
                f"{ceiling['database']} writer: {rate:,.0f} rows/s "
                f"≥ {WRITER_FACTOR} x {wanted:.0f} polls/s",
            )
        )
    return lines


def _scenario_checks(r: Result) -> list[str]:
    name = f"{r.database} {r.scenario.name}"
    if r.scenario.kind == "kinds":
        return _kinds_checks(name, r)
    if r.scenario.kind != "engine" or r.scenario.saturation:
        return []
    worst_p99 = max(
        (v for v in (r.lag_status[1], r.lag_db[1]) if v is not None), default=None
    )
    lines = [
        _verdict(
            worst_p99 is not None and worst_p99 < LAG_LIMIT_MS,
            f"{name}: lag p99 {_num(worst_p99)} ms < {LAG_LIMIT_MS} ms",
        ),
        _verdict(
            r.missed_db == 0 and not r.missed_status,
            f"{name}: missed polls {_num(r.missed_status)} (status) "
            f"/ {_num(r.missed_db)} (DB) = 0",
        ),
        _verdict(
            r.polls is not None and r.polls == r.rows == r.target_got,
            f"{name}: every poll written and seen by the target "
            f"({_num(r.polls)} / {_num(r.rows)} / {_num(r.target_got)})",
        ),
    ]
    if r.scenario.name == "fast-30k":
        wanted = r.scenario.wanted_polls_per_s
        lines.append(
            _verdict(
                (r.polls_per_s or 0) >= 0.99 * wanted,
                f"{name}: {_num(r.polls_per_s)} polls/s sustained "
                f"(wanted {wanted:,.0f}; ≥ 99 % counts, for the window's edges)",
            )
        )
    if r.scenario.name == "fast-50k":
        lines += _fifty_thousand_checks(name, r)
    if r.scenario.name == "scale-300k":
        lines += _startup_and_memory_checks(
            name, r, rss_limit=SCALE_RSS_LIMIT_MB, start_limit=SCALE_SCHEDULED_LIMIT_S
        )
    return lines


def _kinds_checks(name: str, r: Result) -> list[str]:
    """Every kind polled on time and up; the lag and missed rules as for
    HTTP alone."""
    p99 = r.lag_status[1]
    failed = {
        kind: counts["down"]
        for kind, counts in (r.extra.get("by_kind") or {}).items()
        if counts["down"]
    }
    return [
        _verdict(
            p99 is not None and p99 < LAG_LIMIT_MS,
            f"{name}: lag p99 {_num(p99)} ms < {LAG_LIMIT_MS} ms",
        ),
        _verdict(
            r.missed_db == 0 and not r.missed_status,
            f"{name}: missed polls {_num(r.missed_status)} (status) "
            f"/ {_num(r.missed_db)} (DB) = 0",
        ),
        _verdict(
            r.polls is not None and r.polls == r.rows,
            f"{name}: every poll written ({_num(r.polls)} / {_num(r.rows)})",
        ),
        _verdict(
            not failed,
            f"{name}: no failed polls"
            + (
                f" ({', '.join(f'{k}: {n:,}' for k, n in failed.items())})"
                if failed
                else ""
            ),
        ),
    ]


def _kind_cost_checks(results: list[Result]) -> list[str]:
    """Issue #41: a ping and a DNS check each under 50 µs of the poller's
    CPU, and a ping no dearer than an HTTP poll (each kind alone)."""
    lines = []
    for database in dict.fromkeys(r.database for r in results):
        cost = {
            kind: alone_cpu_per_poll_us(results, database, kind)
            for kind in ("http", "icmp", "dns")
        }
        for kind in ("icmp", "dns"):
            if cost[kind] is not None:
                lines.append(
                    _verdict(
                        cost[kind] < KIND_CPU_LIMIT_US,
                        f"{database} {kind} alone: {cost[kind]:,.0f} µs of the "
                        f"poller's CPU per poll < {KIND_CPU_LIMIT_US} µs",
                    )
                )
        if cost["icmp"] is not None and cost["http"] is not None:
            lines.append(
                _verdict(
                    cost["icmp"] <= cost["http"],
                    f"{database}: a ping ({cost['icmp']:,.0f} µs) no dearer than "
                    f"an HTTP poll ({cost['http']:,.0f} µs)",
                )
            )
    return lines


def _startup_and_memory_checks(
    name: str, r: Result, *, rss_limit: float, start_limit: float
) -> list[str]:
    return [
        _verdict(
            (r.peak_rss_mb or 0) < rss_limit,
            f"{name}: peak RSS {_num(r.peak_rss_mb)} MB < {rss_limit:,} MB",
        ),
        _verdict(
            r.scheduled_s is not None and r.scheduled_s < start_limit,
            f"{name}: scheduled {_num(r.scheduled_s, ' s', 1)} after the process "
            f"started (< {start_limit} s)",
        ),
    ]


def _fifty_thousand_checks(name: str, r: Result) -> list[str]:
    late = r.extra.get("late_first", 0) + r.extra.get("never_polled", 0)
    checks = _startup_and_memory_checks(
        name, r, rss_limit=RSS_LIMIT_MB, start_limit=SCHEDULED_LIMIT_S
    )
    return [
        *checks,
        _verdict(
            late == 0,
            f"{name}: {late} projects whose first poll was not done "
            "within their first interval",
        ),
    ]


def _efficiency_checks(results: list[Result]) -> list[str]:
    """Saturated rates against the bare loop of the same concurrency: the
    pycurl one when it ran (issue #12), else httpx (issue #6)."""
    loops = [r for r in results if r.scenario.kind == "bare" and not r.scenario.tls]
    client = "pycurl" if any(r.scenario.client == "pycurl" for r in loops) else "httpx"
    bare = {r.concurrency: r.polls_per_s for r in loops if r.scenario.client == client}
    lines = []
    for database in dict.fromkeys(r.database for r in results):
        rates = {
            r.concurrency: r.polls_per_s
            for r in results
            if r.database == database and r.scenario.saturation and r.polls_per_s
        }
        for concurrency, polls in rates.items():
            if bare.get(concurrency):
                share = polls / bare[concurrency]
                lines.append(
                    _verdict(
                        share >= EFFICIENCY,
                        f"{database} saturated at {concurrency}: {polls:,.0f} "
                        f"polls/s = {share:.2f} x the bare {client} loop at "
                        f"{concurrency} (≥ {EFFICIENCY})",
                    )
                )
        if len(rates) > 1:
            low, high = min(rates), max(rates)
            lines.append(
                _verdict(
                    rates[high] >= EFFICIENCY * rates[low],
                    f"{database} saturated at {high}: {rates[high] / rates[low]:.2f} "
                    f"x its rate at {low} (≥ {EFFICIENCY})",
                )
            )
    return lines


def _tls_checks(results: list[Result]) -> list[str]:
    """HTTPS with a fresh handshake per poll: the probe's handle against
    httpx, in polls/s and in CPU per poll."""
    rows = {r.scenario.client: r for r in results if r.scenario.tls}
    probe, httpx = rows.get("curl"), rows.get("httpx")
    if not (probe and httpx and probe.polls_per_s and httpx.polls_per_s):
        return []
    rate = probe.polls_per_s / httpx.polls_per_s
    lines = [
        _verdict(
            rate >= TLS_FACTOR,
            f"HTTPS, fresh handshake each: the probe makes {probe.polls_per_s:,.0f} "
            f"polls/s, httpx {httpx.polls_per_s:,.0f}: {rate:.2f} x (≥ {TLS_FACTOR})",
        )
    ]
    probe_cpu, httpx_cpu = cpu_per_poll_us(probe), cpu_per_poll_us(httpx)
    if probe_cpu and httpx_cpu:
        lines.append(
            _verdict(
                httpx_cpu >= TLS_FACTOR * probe_cpu,
                f"HTTPS, fresh handshake each: CPU per poll {probe_cpu:,.0f} µs "
                f"(probe) against {httpx_cpu:,.0f} µs (httpx): "
                f"{httpx_cpu / probe_cpu:.2f} x less (≥ {TLS_FACTOR})",
            )
        )
    return lines


def _verdict(ok: bool, text: str) -> str:
    return f"- {'PASS' if ok else 'FAIL'} {text}"


# The published section


def writer_table(writer: list[dict]) -> str:
    return markdown_table([_writer_cells(w) for w in writer])


def _writer_cells(w: dict) -> dict[str, str]:
    if "error" in w:
        return {"database": w["database"], "projects": f"failed: {w['error'][:200]}"}
    return {
        "database": w["database"],
        "projects": f"{w['projects']:,}",
        "rows": f"{w['rows']:,}",
        "rows/s": f"{w['rows_per_s']:,.0f}",
        "batch p50": f"{w['batch_p50_ms']:.0f} ms",
        "batch p99": f"{w['batch_p99_ms']:.0f} ms",
    }


def section(results, writer, *, title: str, preamble: list[str]) -> str:
    parts = [f"#### {title}", "", *preamble, ""]
    if results:
        parts += [table(results), ""]
    internet = [r for r in results if r.scenario.target == "internet"]
    if internet:
        parts += [
            "The internet-like scenario (bench/internet.py), side by side:",
            "",
            internet_table(internet),
            "",
        ]
    kinds = [r for r in results if r.scenario.mix]
    if kinds:
        parts += [
            "Check kinds (bench/kinds.py), each kind's polls and the poller's "
            "CPU per poll of the kind alone:",
            "",
            kinds_table(kinds),
            "",
        ]
        said = {r.extra.get("icmp_mode") for r in kinds if r.extra.get("icmp_mode")}
        parts += [f"runpoller said at start: {line}" for line in sorted(said)]
        parts += [""] if said else []
    if writer:
        parts += [
            "Result writer ceiling (`DatabaseResultStore.save()` alone, "
            "batches of 500):",
            "",
            writer_table(writer),
            "",
        ]
    failures = [
        f"- {r.database} {r.scenario.name} failed: {r.extra['error'][:300]}"
        for r in results
        if "error" in r.extra
    ]
    if failures:
        parts += ["Failed scenarios:", "", *failures, ""]
    verdicts = checks(results, writer)
    if verdicts:
        parts += [
            "Against the targets of issues #6, #12, #41 and #43:",
            "",
            *verdicts,
            "",
        ]
    return "\n".join(parts)


def publish(path: Path, text: str, *, marker: str = RESULTS_MARKER) -> None:
    """Insert above the marker (by default, the capacity results'), or
    append when there is none."""
    current = path.read_text() if path.exists() else ""
    if marker in current:
        head, _, tail = current.partition(marker)
        path.write_text(f"{head}{text}\n{marker}{tail}")
    else:
        path.write_text(f"{current.rstrip()}\n\n{text}\n" if current else f"{text}\n")
