"""Each burn-rate rule tells its own channels besides the objective's
`channels` (told of every rule): a message for a rule reaches exactly
its channels, each once, however often the objectives are evaluated."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from projects.housekeeping.rollups import rebuild_rollups
from projects.models import Notification
from projects.objectives.alerts import RULES, evaluate_objectives
from tests.support.alerting import make_channel
from tests.support.objectives import MINUTE, NOW, objective, play, seed

pytestmark = pytest.mark.django_db


def told(*events: str) -> Counter:
    """(channel name, event, rule) -> how many outbox rows."""
    rows = Notification.objects.filter(event__in=events).values_list(
        "channel__name", "event", "payload__objective__rule"
    )
    return Counter(rows)


@pytest.fixture
def burned(make_project):
    """Half an hour down after three days of good polls, against 99 %
    over 30 days: every rule fires (ticket-3d too: 30 bad polls of about
    1,000 in three days burn about 3 times too fast); an hour and a half
    of good polls then calms the two short ones."""
    project = make_project()
    seed(project, NOW - timedelta(days=3), NOW - timedelta(hours=2), 5 * MINUTE)
    rebuild_rollups()
    slo = objective(project, window_days=30)
    every = make_channel(name="every rule", team=slo.team)
    pager = make_channel(name="pager", team=slo.team)
    tickets = make_channel(name="tickets", team=slo.team)
    both = make_channel(name="both lists", team=slo.team)
    bystander = make_channel(name="bystander", team=slo.team)
    slo.channels.add(every, both)
    slo.page_1h_channels.add(pager, both)
    slo.ticket_3d_channels.add(tickets)
    assert bystander.pk
    start = NOW - timedelta(hours=2)
    burn = (start + timedelta(hours=1), start + timedelta(hours=1, minutes=30))
    play(project, start, 180, down=lambda at: burn[0] <= at < burn[1])
    return slo


def test_a_rules_message_reaches_only_its_channels_once(burned):
    burning = told("objective.burning")

    assert burning == Counter(
        {
            ("every rule", "objective.burning", "page-1h"): 1,
            ("every rule", "objective.burning", "page-6h"): 1,
            ("every rule", "objective.burning", "ticket-3d"): 1,
            # In `channels` and in page_1h_channels: told once.
            ("both lists", "objective.burning", "page-1h"): 1,
            ("both lists", "objective.burning", "page-6h"): 1,
            ("both lists", "objective.burning", "ticket-3d"): 1,
            ("pager", "objective.burning", "page-1h"): 1,
            ("tickets", "objective.burning", "ticket-3d"): 1,
        }
    )


def test_the_end_of_a_burn_reaches_the_same_channels(burned):
    calm = told("objective.calm")

    assert {(c, r) for c, _, r in calm if r != "ticket-3d"} == {
        ("every rule", "page-1h"),
        ("every rule", "page-6h"),
        ("both lists", "page-1h"),
        ("both lists", "page-6h"),
        ("pager", "page-1h"),
    }
    assert set(calm.values()) == {1}


def test_evaluating_again_tells_nobody_again(burned):
    before = Notification.objects.count()
    end = NOW + timedelta(hours=1)  # the last evaluation's time

    evaluate_objectives(clock=lambda: end)
    evaluate_objectives(clock=lambda: end)

    assert Notification.objects.count() == before


def test_every_rule_names_a_field_of_channels():
    from projects.models import ServiceLevelObjective

    for rule in RULES:
        field = ServiceLevelObjective._meta.get_field(rule.channels_field)
        assert field.many_to_many
