"""Where a benchmark run is published: a Markdown file of its own in
docs/benchmarks/, named by date, benchmark and time, e.g.
docs/benchmarks/2026-11-25-capacity-2110.md.

One file per run, never edited afterwards, so a reader finds a run by its
name and a new run never rewrites an old one; docs/benchmarks.md keeps the
current figure of each benchmark and links the run it comes from.

This module imports nothing from its siblings, so the tests import it as
`bench.run_logs` while the scripts import it as `run_logs`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

RUN_LOGS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"
_HEADING = re.compile(r"^(#+) ")


def run_log_path(benchmark: str, when: datetime, *, directory: Path = RUN_LOGS) -> Path:
    """The file for a run of `benchmark` that started at `when` (UTC):
    `<date>-<benchmark>-<HHMM>.md`, with -2, -3 ... when two runs share a
    minute, so no run overwrites another."""
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", benchmark):
        raise ValueError(f"benchmark name {benchmark!r}: lowercase words and dashes")
    when = when.astimezone(UTC)
    stem = f"{when:%Y-%m-%d}-{benchmark}-{when:%H%M}"
    path = directory / f"{stem}.md"
    copy = 2
    while path.exists():
        path = directory / f"{stem}-{copy}.md"
        copy += 1
    return path


def as_page(text: str) -> str:
    """The run's report as a page of its own: its first heading becomes the
    page title (`# `) and the headings under it move up with it; lines in
    code fences are left alone."""
    lines = text.strip("\n").split("\n")
    levels = _heading_levels(lines)
    if not levels:
        return text.strip("\n") + "\n"
    shift = levels[0] - 1
    out, fenced = [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        match = _HEADING.match(line)
        if match and not fenced:
            level = max(1, len(match.group(1)) - shift)
            line = "#" * level + line[len(match.group(1)) :]
        out.append(line)
    return "\n".join(out) + "\n"


def _heading_levels(lines: list[str]) -> list[int]:
    levels, fenced = [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        match = _HEADING.match(line)
        if match and not fenced:
            levels.append(len(match.group(1)))
    return levels


def publish_run(
    benchmark: str,
    text: str,
    *,
    when: datetime | None = None,
    directory: Path = RUN_LOGS,
) -> Path:
    """Write one run's report to a new file in `directory`; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = run_log_path(benchmark, when or datetime.now(UTC), directory=directory)
    path.write_text(as_page(text))
    return path
