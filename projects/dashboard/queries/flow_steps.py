"""A flow's steps as its page shows them: the latest poll's steps as a
waterfall (each bar starts where the one before ended), and the latest
failure with the failing step's response excerpt (masked by the probe).
Two queries, each the newest row of one project's index scan."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from projects.models import PollResult, Status

# The waterfall's width in SVG units; bars are scaled to it.
WIDTH = 1000
PHASES = (
    ("dns", "DNS"),
    ("connect", "connect"),
    ("tls", "TLS"),
    ("first_byte", "first byte"),
)


@dataclass(frozen=True, slots=True)
class StepBar:
    number: int
    name: str
    up: bool
    status_code: int | None
    ms: int | None
    error: str
    phases: str
    x: int  # where its bar starts, of WIDTH
    width: int


@dataclass(frozen=True, slots=True)
class FlowView:
    polled_at: datetime | None
    bars: list[StepBar]
    failed_at: datetime | None
    failure: str
    excerpt: str


def flow_view(project_id: int) -> FlowView:
    with_steps = PollResult.objects.filter(project_id=project_id, steps__isnull=False)
    fields = ("polled_at", "steps", "error_message")
    latest = with_steps.order_by("-polled_at").values(*fields).first()
    failed = (
        with_steps.filter(status=Status.DOWN)
        .order_by("-polled_at")
        .values(*fields)
        .first()
    )
    failing = (failed or {}).get("steps") or []
    return FlowView(
        polled_at=latest and latest["polled_at"],
        bars=waterfall((latest or {}).get("steps") or []),
        failed_at=failed and failed["polled_at"],
        failure=(failed or {}).get("error_message", ""),
        excerpt=next((s.get("excerpt", "") for s in failing if not s.get("up")), ""),
    )


def waterfall(steps: list[dict]) -> list[StepBar]:
    """Each step's bar: offset by the steps before it, scaled to WIDTH."""
    total = sum(step.get("ms") or 0 for step in steps) or 1
    bars, start = [], 0
    for number, step in enumerate(steps, start=1):
        ms = step.get("ms")
        bars.append(
            StepBar(
                number=number,
                name=step.get("name", ""),
                up=bool(step.get("up")),
                status_code=step.get("status_code"),
                ms=ms,
                error=step.get("error", ""),
                phases=" · ".join(
                    f"{label} {step[key]}"
                    for key, label in PHASES
                    if step.get(key) is not None
                ),
                x=round(start * WIDTH / total),
                width=max(round((ms or 0) * WIDTH / total), 2),
            )
        )
        start += ms or 0
    return bars
