"""What a status page says about each project and about the whole page.

| project                                   | state       |
| ----------------------------------------- | ----------- |
| disabled, or never polled                 | unknown     |
| covered by an active maintenance window   | maintenance |
| state "down" (an incident is open)        | down        |
| an open manual incident                   | degraded    |
| up but slower than its limit (`degraded`) | slow        |
| otherwise (up, or failing unconfirmed)    | operational |

The page: "Major outage" when at least half the projects that report are
down, "Partial outage" when any is down or degraded, "Degraded
performance" when any is slow, "Under maintenance" when any is in
maintenance, else "All systems operational".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Look:
    label: str
    symbol: str  # the shape, beside the text and the colour


PROJECT_STATES = {
    "operational": Look("Operational", "✓"),
    "degraded": Look("Degraded", "!"),
    "slow": Look("Degraded performance", "◒"),
    "down": Look("Down", "✕"),
    "maintenance": Look("Maintenance", "◆"),
    "unknown": Look("No data", "○"),
}
PAGE_STATES = {
    "operational": Look("All systems operational", "✓"),
    "partial": Look("Partial outage", "!"),
    "slow": Look("Degraded performance", "◒"),
    "major": Look("Major outage", "✕"),
    "maintenance": Look("Under maintenance", "◆"),
}


def project_state(
    *,
    enabled: bool,
    state: str,
    in_maintenance: bool,
    manual_incident: bool,
    slow: bool = False,
) -> str:
    if not enabled or not state:
        return "unknown"
    if in_maintenance:
        return "maintenance"
    if state == "down":
        return "down"
    if manual_incident:
        return "degraded"
    return "slow" if slow and state == "up" else "operational"


def page_state(states: list[str]) -> str:
    reporting = [s for s in states if s != "unknown"]
    down = reporting.count("down")
    if down and down * 2 >= len(reporting):
        return "major"
    if down or "degraded" in reporting:
        return "partial"
    if "slow" in reporting:
        return "slow"
    return "maintenance" if "maintenance" in reporting else "operational"
