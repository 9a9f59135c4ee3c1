"""The response-time chart: inline SVG computed on the server.

The buckets arrive already aggregated (at most ~300), so this only maps
them to coordinates. Average and maximum are told apart by line style
(solid, dashed) and failures sit in their own labelled band, so nothing
depends on telling colours apart. Where the buckets carry phases, each one
gets a column under the lines stacking where the average poll's time went,
in the order of the legend (each column's tooltip lists them).

With several regions (docs/regions.md) each region gets its own average
line instead of the average and maximum, told apart by its dash pattern
and named in the legend and at the line's end, so no colour is needed
either.

Over them, thin lines for p50, p95 and p99 per hour or longer, from the
rollups' histograms (projects/dashboard/queries/percentiles.py), each
with its own dash pattern and a label at its end.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django import template
from django.utils import timezone

from monitor.dates import when
from projects.dashboard.queries.percentiles import (
    CHART_PERCENTILES,
    PercentilePoint,
)
from projects.dashboard.queries.ranges import DAY, TimeRange
from projects.dashboard.queries.response_times import Bucket

register = template.Library()

WIDTH, HEIGHT = 720, 250
LEFT, RIGHT = 56, 712  # plot area, x
TOP, BOTTOM = 12, 176  # plot area, y
BAND_TOP, BAND_HEIGHT = 192, 24  # failed-polls band, y
LABEL_GAP = 6
# The slowest bucket stays clear of the top line.
HEADROOM = 1.15
# Named positions for the template, which cannot do arithmetic.
PLOT = {
    "left": LEFT,
    "right": RIGHT,
    "top": TOP,
    "bottom": BOTTOM,
    "width": RIGHT - LEFT,
    "label_x": LEFT - LABEL_GAP,
    "x_label_y": HEIGHT - LABEL_GAP,
}
BAND = {
    "top": BAND_TOP,
    "height": BAND_HEIGHT,
    "bottom": BAND_TOP + BAND_HEIGHT,
    "label_y": BAND_TOP + BAND_HEIGHT / 2,
    "column_height": BAND_TOP + BAND_HEIGHT - TOP,
}
# The phase stack's parts, bottom up: (CSS class suffix, legend label), in
# the order of Bucket.phases.
PHASE_PARTS = (
    ("dns", "DNS"),
    ("connect", "connect"),
    ("tls", "TLS"),
    ("first-byte", "first byte (server)"),
)
# Regions' lines, by place in name order: solid, dashed, dotted, dash-dot
# (CSS .line-region-N); a fifth region starts again.
REGION_STYLES = 4
# A region's name at the end of its line stays inside the chart.
END_LABEL_WIDTH = 62

# A line breaks where polls are missing for longer than this many
# buckets or poll intervals, whichever is longer.
GAP_FACTOR = 2.5


@dataclass(frozen=True, slots=True)
class Scale:
    start: datetime
    end: datetime
    y_max: float

    def x(self, moment: datetime) -> float:
        share = (moment - self.start) / (self.end - self.start)
        return round(LEFT + min(max(share, 0), 1) * (RIGHT - LEFT), 1)

    def y(self, ms: float) -> float:
        return round(BOTTOM - ms / self.y_max * (BOTTOM - TOP), 1)


@register.inclusion_tag("projects/_response_chart.html")
def response_chart(
    buckets: list[Bucket],
    time_range: TimeRange,
    now: datetime,
    interval_seconds: int,
    series: list[tuple[str, list[Bucket]]] = (),
    percentiles: list[PercentilePoint] = (),
) -> dict:
    """`buckets` are every poll's; `series`, when given, each region's
    (name, buckets), drawn as a line each instead of average and maximum;
    `percentiles`, the p50, p95 and p99 points drawn over them."""
    if series:
        peak = max((b.avg_ms or 0 for _, s in series for b in s), default=0)
    else:
        peak = max((b.max_ms or b.avg_ms or 0 for b in buckets), default=0)
    peak = max([peak, *(p.p99_ms for p in percentiles)])
    scale = Scale(time_range.start(now), now, nice_ceiling(peak * HEADROOM))
    width = timedelta(seconds=time_range.bucket_seconds)
    gap = width * GAP_FACTOR + timedelta(seconds=interval_seconds * GAP_FACTOR)
    phase_bars = [] if series else list(phase_stacks(buckets, scale, width))
    lines = region_lines(series, scale, width, gap)
    return {
        "buckets": buckets,
        "range": time_range,
        "width": WIDTH,
        "height": HEIGHT,
        "plot": PLOT,
        "band": BAND,
        "avg_path": line_path(buckets, scale, lambda b: b.avg_ms, width, gap),
        "max_path": line_path(buckets, scale, lambda b: b.max_ms, width, gap),
        "failure_bars": list(failure_bars(buckets, scale, width)),
        "phase_bars": phase_bars,
        "phase_parts": PHASE_PARTS if phase_bars else (),
        "columns": list(columns(buckets, scale, width, series)),
        "region_lines": lines,
        "percentile_lines": percentile_lines(
            percentiles, scale, timedelta(seconds=interval_seconds)
        ),
        "percentile_step": step_label(percentiles[0].width_seconds)
        if percentiles
        else "",
        "y_ticks": [(scale.y(ms), f"{ms:g} ms") for ms in y_tick_values(scale.y_max)],
        "x_ticks": list(x_ticks(scale, time_range.tick_seconds)),
        "summary": summary(buckets),
    }


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above value."""
    if value <= 0:
        return 100
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= value)


def y_tick_values(y_max: float) -> list[float]:
    return [y_max * i / 4 for i in range(5)]


def line_path(
    buckets: list[Bucket],
    scale: Scale,
    value: Callable[[Bucket], float | None],
    width: timedelta,
    gap: timedelta,
) -> str:
    """An SVG path through each bucket's middle; a gap in the polls starts a
    new segment, and a lone point becomes a dot (round line caps)."""
    commands = []
    previous = None
    for bucket in buckets:
        ms = value(bucket)
        if ms is None:
            previous = None
            continue
        x, y = scale.x(bucket.start + width / 2), scale.y(ms)
        joined = previous is not None and bucket.start - previous <= gap
        commands.append(f"L{x},{y}" if joined else f"M{x},{y} h0.01")
        previous = bucket.start
    return " ".join(commands)


def failure_bars(
    buckets: list[Bucket], scale: Scale, width: timedelta
) -> Iterator[dict]:
    for bucket in buckets:
        if bucket.failures:
            x, bar_width = _span(bucket, scale, width)
            height = max(round(bucket.failure_share * BAND_HEIGHT, 1), 2)
            yield {
                "x": x,
                "y": BAND_TOP + BAND_HEIGHT - height,
                "width": bar_width,
                "height": height,
            }


def phase_stacks(
    buckets: list[Bucket], scale: Scale, width: timedelta
) -> Iterator[dict]:
    """A rectangle per phase and bucket, each on top of the one before."""
    for bucket in buckets:
        if bucket.phases is None:
            continue
        x, bar_width = _span(bucket, scale, width)
        below = 0.0
        for (part, _), ms in zip(PHASE_PARTS, bucket.phases, strict=True):
            top, bottom = scale.y(below + ms), scale.y(below)
            below += ms
            if bottom - top > 0:
                yield {
                    "part": part,
                    "x": x,
                    "y": top,
                    "width": bar_width,
                    "height": round(bottom - top, 1),
                }


def region_lines(
    series: list[tuple[str, list[Bucket]]],
    scale: Scale,
    width: timedelta,
    gap: timedelta,
) -> list[dict]:
    """Each region's average line, its style and where its name goes: at
    its last point, inside the plot."""
    lines = []
    for index, (name, buckets) in enumerate(series):
        timed = [b for b in buckets if b.avg_ms is not None]
        last = timed[-1] if timed else None
        lines.append(
            {
                "name": name,
                "style": index % REGION_STYLES,
                "path": line_path(buckets, scale, lambda b: b.avg_ms, width, gap),
                "label_x": min(
                    scale.x(last.start + width / 2) + LABEL_GAP,
                    RIGHT - END_LABEL_WIDTH,
                )
                if last
                else None,
                "label_y": scale.y(last.avg_ms) if last else None,
            }
        )
    return lines


def percentile_lines(
    points: list[PercentilePoint], scale: Scale, interval: timedelta
) -> list[dict]:
    """A line for each of p50, p95 and p99 (CSS .line-p50 ...), told
    apart by dash pattern and named in the legend."""
    if not points:
        return []
    width = timedelta(seconds=points[0].width_seconds)
    gap = width * GAP_FACTOR + interval * GAP_FACTOR
    return [
        {
            "name": f"p{p}",
            "path": line_path(
                points, scale, lambda point, p=p: getattr(point, f"p{p}_ms"), width, gap
            ),
        }
        for p in CHART_PERCENTILES
    ]


def step_label(seconds: int) -> str:
    """A point's width in words: "hour", "3 hours", "day", "2 days"."""
    unit, size = ("day", DAY) if seconds % DAY == 0 else ("hour", 3600)
    count = seconds // size
    return unit if count == 1 else f"{count} {unit}s"


def columns(
    buckets: list[Bucket],
    scale: Scale,
    width: timedelta,
    series: list[tuple[str, list[Bucket]]] = (),
) -> Iterator[dict]:
    """One invisible full-height column per bucket, carrying its tooltip
    (with each region's average, when there are several)."""
    by_region = [(name, {b.start: b for b in s}) for name, s in series]
    for bucket in buckets:
        x, column_width = _span(bucket, scale, width)
        title = _bucket_title(bucket)
        averages = [
            f"{name} {part.avg_ms:.0f} ms"
            for name, starts in by_region
            if (part := starts.get(bucket.start)) and part.avg_ms is not None
        ]
        if averages:
            title += " · " + ", ".join(averages)
        yield {"x": x, "width": column_width, "title": title}


def _span(bucket: Bucket, scale: Scale, width: timedelta) -> tuple[float, float]:
    left = scale.x(bucket.start)
    return left, max(round(scale.x(bucket.start + width) - left, 1), 1)


def _bucket_title(bucket: Bucket) -> str:
    parts = [when(bucket.start)]
    if bucket.avg_ms is not None:
        parts.append(f"average {bucket.avg_ms:.0f} ms, maximum {bucket.max_ms} ms")
    if bucket.phases is not None:
        phases = zip(PHASE_PARTS, bucket.phases, strict=True)
        parts.append(", ".join(f"{label} {ms:.0f}" for (_, label), ms in phases))
    parts.append(f"{bucket.failures} of {bucket.polls} polls failed")
    return " · ".join(parts)


def x_ticks(scale: Scale, step_seconds: int) -> Iterator[tuple[float, str]]:
    step = timedelta(seconds=step_seconds)
    first = math.ceil(scale.start.timestamp() / step_seconds) * step_seconds
    tick = datetime.fromtimestamp(first, UTC)
    while tick <= scale.end:
        local = timezone.localtime(tick)
        label = f"{local:%b} {local.day}" if step_seconds >= DAY else f"{local:%H:%M}"
        yield scale.x(tick), label
        tick += step


def summary(buckets: list[Bucket]) -> str:
    """One sentence for screen readers and the chart's caption."""
    polls = sum(b.polls for b in buckets)
    if not polls:
        return "No polls in this range."
    failures = sum(b.failures for b in buckets)
    averages = [b.avg_ms for b in buckets if b.avg_ms is not None]
    peaks = [b.max_ms for b in buckets if b.max_ms is not None]
    if not averages:
        return f"{polls} polls, {failures} failed, none got a response."
    return (
        f"{polls} polls, {failures} failed; bucket averages "
        f"{min(averages):.0f} to {max(averages):.0f} ms, slowest poll {max(peaks)} ms."
    )
