"""Multi-window, multi-burn-rate alerts (Google's SRE workbook, "Alerting
on SLOs"): a rule fires when the error budget burns at least `factor`
times too fast over both its long window and its short one. The long
window makes it significant, the short one makes it end soon after the
burn does.

    rule        factor  long   short   a budget of 30 days spent
    page-1h     14.4    1 h    5 min   2 % in an hour
    page-6h     6       6 h    30 min  5 % in six hours
    ticket-3d   1       3 d    6 h     10 % in three days

evaluate_objectives() runs every minute in the tasks process
(projects/schedules.py). Each firing is an ObjectiveAlert row (one open
per objective and rule, a partial unique constraint), opened and closed
with its notifications queued in the same transaction, under a lock on
the objective's row: any number of evaluators tell each channel once per
episode, "objective.burning" then "objective.calm".

Who hears a rule: the objective's `channels` (every rule) and the rule's
own list (`page_1h_channels` ...), each channel once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from projects.models import Notification, ObjectiveAlert, ServiceLevelObjective
from projects.notifications import outbox
from projects.objectives import budget
from projects.objectives.status import counts_since, project_ids

Event = Notification.Event


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    factor: float
    long: timedelta
    short: timedelta
    # The objective's many-to-many field of the channels told of this
    # rule only: renaming it renames a column, an API field and a YAML key.
    channels_field: str


RULES = (
    Rule("page-1h", 14.4, timedelta(hours=1), timedelta(minutes=5), "page_1h_channels"),
    Rule("page-6h", 6, timedelta(hours=6), timedelta(minutes=30), "page_6h_channels"),
    Rule("ticket-3d", 1, timedelta(days=3), timedelta(hours=6), "ticket_3d_channels"),
)


def evaluate_objectives(clock: Callable[[], datetime] = timezone.now) -> int:
    """Open and close every objective's alerts; returns how many changed."""
    changed = 0
    for pk in ServiceLevelObjective.objects.values_list("pk", flat=True):
        changed += evaluate(pk, clock())
    return changed


def burn_rates(objective, rule: Rule, now: datetime) -> tuple[float, float]:
    """The rule's (long, short) burn rates; 0 with nothing counted."""
    ids = project_ids(objective)
    target = objective.target_percent
    return tuple(
        budget.burn_rate(counts_since(objective, ids, now - window), target) or 0.0
        for window in (rule.long, rule.short)
    )


def evaluate(objective_id: int, now: datetime) -> int:
    with transaction.atomic():
        objective = (
            ServiceLevelObjective.objects.select_for_update()
            .filter(pk=objective_id)
            .first()
        )
        if objective is None:
            return 0
        open_alerts = {a.rule: a for a in objective.alerts.filter(ended_at=None)}
        changed = 0
        for rule in RULES:
            long, short = burn_rates(objective, rule, now)
            firing = long >= rule.factor and short >= rule.factor
            alert = open_alerts.get(rule.name)
            if firing and alert is None:
                alert = ObjectiveAlert.objects.create(
                    objective=objective, rule=rule.name, started_at=now, burn_rate=long
                )
                _tell(Event.OBJECTIVE_BURNING, objective, alert, rule, now)
                changed += 1
            elif not firing and alert is not None:
                alert.ended_at = now
                alert.save(update_fields=["ended_at"])
                _tell(Event.OBJECTIVE_CALM, objective, alert, rule, now)
                changed += 1
        return changed


def rule_channels(objective: ServiceLevelObjective, rule: Rule) -> list[int]:
    """The ids of the channels told of `rule`: the objective's own and the
    rule's, each once."""
    every = set(objective.channels.values_list("pk", flat=True))
    own = getattr(objective, rule.channels_field).values_list("pk", flat=True)
    return sorted(every | set(own))


def _tell(event, objective, alert: ObjectiveAlert, rule: Rule, at: datetime) -> None:
    channels = rule_channels(objective, rule)
    if event == Event.OBJECTIVE_BURNING:
        title = f"Error budget burning: {objective.name}"
        text = (
            f"{objective.name} spends its error budget "
            f"{alert.burn_rate:.1f} times too fast over {_span(rule.long)} "
            f"and over {_span(rule.short)} "
            f"(rule {rule.name}: {rule.factor} times)."
        )
    else:
        title = f"Error budget burn over: {objective.name}"
        text = (
            f"{objective.name} no longer burns its budget {rule.factor} times too fast."
        )
    payload = {
        "version": 1,
        "event": event,
        "occurred_at": at.isoformat(),
        "title": title,
        "message": text,
        "objective": {
            "id": objective.pk,
            "name": objective.name,
            "rule": rule.name,
            "factor": rule.factor,
            "burn_rate": alert.burn_rate,
        },
    }
    message = outbox.Message(
        event=event,
        key=outbox.message_key(event, alert.pk),
        payload=payload,
        project_id=objective.project_id,
    )
    outbox.queue([(message, channels)])


def _span(window: timedelta) -> str:
    minutes = int(window.total_seconds() // 60)
    if minutes % (24 * 60) == 0:
        return f"{minutes // (24 * 60)} d"
    if minutes % 60 == 0:
        return f"{minutes // 60} h"
    return f"{minutes} min"
