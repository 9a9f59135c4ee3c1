"""Regions as the result writer decides them, through the real store: each
region's polls keep its own streak, and the project is down only when its
quorum of the regions that count agree (docs/regions.md)."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from polling.regions import REGION_SPREAD_SECONDS, phase_fraction
from polling.store import DatabaseResultStore, iter_targets
from projects.incidents.region_outages import watch_regions
from projects.incidents.region_rows import REFRESH_SECONDS
from projects.incidents.regions import describe, quorum_needed
from projects.models import (
    DEFAULT_REGION_ID,
    Incident,
    Notification,
    PollResult,
    Project,
    ProjectRegionState,
    Region,
)
from tests.support.alerting import make_channel, queued_events
from tests.support.outcomes import T0, outcome

pytestmark = pytest.mark.django_db

STEP = 20


def live_regions(*names: str, dark: tuple[str, ...] = ()) -> dict[str, Region]:
    """Regions with a poller seen now (and `dark` ones last seen long ago)."""
    now = timezone.now()
    regions = {
        name: Region.objects.create(name=name, last_seen_at=now) for name in names
    }
    for name in dark:
        regions[name] = Region.objects.create(
            name=name, last_seen_at=now - timedelta(hours=1)
        )
    return regions


class Fleet:
    """One store per region; `poll("uud", step)` saves one poll of step
    `step` from each region, up or down by the letter."""

    def __init__(self, project: Project, regions: dict[str, Region]) -> None:
        self.project = project
        self.stores = {
            name: DatabaseResultStore(region_id=region.pk)
            for name, region in regions.items()
        }
        self.names = list(regions)

    def poll(self, letters: str, step: int, reasons: dict[str, str] | None = None):
        for name, letter in zip(self.names, letters, strict=True):
            if letter == "-":
                continue
            up = letter == "u"
            error = (reasons or {}).get(name, "")
            self.stores[name].save(
                [
                    outcome(
                        self.project.pk,
                        up=up,
                        at=step * STEP,
                        code=200 if up else 503,
                        error="" if up else error,
                    )
                ]
            )


@pytest.fixture
def three_regions(make_project):
    make_channel(is_default=True)
    project = make_project(quorum=2, failure_threshold=2, recovery_threshold=1)
    return Fleet(project, live_regions("eu", "us", "ap"))


def test_one_region_failing_opens_nothing_and_its_failures_are_stored(three_regions):
    fleet = three_regions
    for step in range(5):
        fleet.poll("udu", step)

    assert Incident.objects.count() == 0
    assert queued_events() == []
    us = Region.objects.get(name="us")
    stored = PollResult.objects.filter(project=fleet.project, region=us)
    assert [r.status for r in stored.order_by("polled_at")] == ["down"] * 5
    assert PollResult.objects.filter(project=fleet.project).count() == 15
    state = ProjectRegionState.objects.get(project=fleet.project, region=us)
    assert (state.state, state.consecutive_failures) == ("down", 5)
    fleet.project.refresh_from_db()
    assert fleet.project.state == "pending"


def test_two_regions_failing_open_one_incident_naming_both_then_resolve(
    three_regions,
):
    fleet = three_regions
    reasons = {"eu": "connection refused", "us": "expected 200, got 503"}
    for step in range(4):
        fleet.poll("ddu", step, reasons)

    incident = Incident.objects.get()
    assert incident.resolved_at is None
    assert incident.first_error == "eu: connection refused; us: expected 200, got 503"
    assert queued_events() == ["incident.opened"]

    fleet.poll("udu", 4)  # eu is back: one confirmed region is not quorum
    fleet.poll("uuu", 5)

    incident.refresh_from_db()
    assert incident.resolved_at is not None
    assert Incident.objects.count() == 1
    assert queued_events() == ["incident.opened", "incident.resolved"]


def test_a_project_given_one_region_is_down_once_that_region_confirms(make_project):
    """Its quorum is taken over the regions it is given that count, not
    over every live one: here 1 of 1, where all three would make it 2."""
    make_channel(is_default=True)
    project = make_project(failure_threshold=2)  # quorum: a majority
    regions = live_regions("eu", "us", "ap")
    project.regions.add(regions["eu"])
    fleet = Fleet(project, {"eu": regions["eu"]})
    fleet.poll("d", 0, {"eu": "connection refused"})
    assert Incident.objects.count() == 0
    fleet.poll("d", 1, {"eu": "connection refused"})

    assert Incident.objects.get().first_error == "eu: connection refused"
    project.refresh_from_db()
    assert project.state == "down"


def test_a_region_without_a_live_poller_does_not_count(make_project):
    make_channel(is_default=True)
    project = make_project(failure_threshold=1)  # quorum: a majority
    regions = live_regions("eu", "us", dark=("ap",))
    # ap's last results say down, but nobody polls from there any more.
    ProjectRegionState.objects.create(
        project=project, region=regions["ap"], state="down", consecutive_failures=9
    )
    fleet = Fleet(project, {"eu": regions["eu"], "us": regions["us"]})

    fleet.poll("du", 0)
    assert Incident.objects.count() == 0  # 1 of 2 live: not a majority

    fleet.poll("dd", 1)
    assert Incident.objects.get().first_error.startswith("eu: ")
    assert "ap" not in Incident.objects.get().first_error


def test_one_result_per_project_region_and_window(make_project):
    project = make_project()
    regions = live_regions("eu", "us")
    fleet = Fleet(project, regions)
    fleet.poll("uu", 0)
    fleet.poll("u-", 0)  # eu's window again: a retry after a takeover

    assert PollResult.objects.filter(project=project).count() == 2
    row = PollResult.objects.filter(project=project, region=regions["eu"]).get()
    with pytest.raises(IntegrityError), transaction.atomic():
        PollResult.objects.create(
            project=project,
            region=regions["eu"],
            polled_at=row.polled_at,
            status=row.status,
        )


def test_a_single_region_install_writes_the_default_region(make_project):
    project = make_project()
    DatabaseResultStore().save([outcome(project.pk)])

    assert PollResult.objects.get().region_id == DEFAULT_REGION_ID
    assert ProjectRegionState.objects.count() == 0


def test_uptime_counts_a_window_down_only_when_the_project_was(three_regions):
    fleet = three_regions
    for step in range(3):
        fleet.poll("udu", step)  # one region: the project is up

    rollup = fleet.project.hourly_rollups.get()
    assert (rollup.polls, rollup.failures) == (9, 0)


def test_a_poller_loads_the_projects_of_its_region_and_those_of_none(make_project):
    regions = live_regions("eu", "us")
    everywhere, eu_only = make_project(), make_project()
    eu_only.regions.add(regions["eu"])

    def loaded(region):
        return {t.project_id for t in iter_targets(region_id=region.pk)}

    assert loaded(regions["eu"]) == {everywhere.pk, eu_only.pk}
    assert loaded(regions["us"]) == {everywhere.pk}


def test_a_region_that_cannot_reach_most_targets_is_held_and_told_once(
    make_project,
):
    make_channel(is_default=True)
    projects = [make_project(quorum=1, failure_threshold=2) for _ in range(6)]
    regions = live_regions("eu", "us")
    eu = DatabaseResultStore(region_id=regions["eu"].pk)
    us = DatabaseResultStore(region_id=regions["us"].pk)
    for step in range(4):
        eu.save([outcome(p.pk, up=False, at=step * STEP) for p in projects])
        us.save([outcome(p.pk, at=step * STEP) for p in projects])

    assert Incident.objects.count() == 0
    assert Region.objects.get(name="eu").blind_since is not None
    assert queued_events() == ["monitor.unreachable"]
    message = Notification.objects.get().payload["message"]
    assert "Region eu cannot reach most targets (6 of 6" in message

    # Two projects answer eu again: four failing are not most of them, so
    # eu sees again; what it confirmed while blind is not trusted.
    eu.save([outcome(p.pk, at=4 * STEP) for p in projects[:2]])
    us.save([outcome(p.pk, at=4 * STEP) for p in projects])

    assert Region.objects.get(name="eu").blind_since is None
    assert Incident.objects.count() == 0

    eu.save([outcome(p.pk, at=5 * STEP) for p in projects])
    assert queued_events() == ["monitor.unreachable", "monitor.reachable"]


def test_a_region_without_a_live_poller_is_told_once_and_when_back(db):
    make_channel(is_default=True)
    regions = live_regions("eu", "us")
    now = timezone.now()
    Region.objects.filter(name="us").update(last_seen_at=now - timedelta(hours=1))

    assert watch_regions(now=now) == ["us dark"]
    assert watch_regions(now=now) == []
    Region.objects.filter(pk=regions["us"].pk).update(last_seen_at=now)
    assert watch_regions(now=now) == ["us back"]

    assert queued_events() == ["poller.silent", "poller.back"]
    first = Notification.objects.order_by("pk").first().payload["message"]
    assert first.startswith("Region us has no live poller")


@pytest.mark.parametrize(
    ("quorum", "counted", "needed"),
    [
        (None, 3, 2),
        (None, 2, 2),
        (None, 1, 1),
        (None, 4, 3),
        (2, 3, 2),
        (3, 2, 2),
        (1, 3, 1),
        (None, 0, 0),
    ],
)
def test_quorum_is_a_majority_of_the_counted_regions_unless_set(
    quorum, counted, needed
):
    assert quorum_needed(quorum, counted) == needed


def test_reasons_are_named_by_region():
    assert describe([("eu", "connection refused"), ("us", "")]) == (
        "eu: connection refused; us: failed"
    )


def test_a_region_continues_from_its_own_last_window(make_project):
    project = make_project()
    regions = live_regions("eu", "us")
    eu = DatabaseResultStore(region_id=regions["eu"].pk)
    us = DatabaseResultStore(region_id=regions["us"].pk)
    eu.save([outcome(project.pk, at=0)])
    us.save([outcome(project.pk, at=3)])  # us polls 3 s into the window

    def last_window(region):
        (target,) = iter_targets(region_id=region.pk)
        return target.last_window

    assert last_window(regions["eu"]) == outcome(project.pk, at=0).due_at
    assert last_window(regions["us"]) == outcome(project.pk, at=3).due_at


def test_regions_made_one_after_another_poll_well_apart():
    fractions = sorted(phase_fraction(region) for region in (2, 3, 4, 5))
    assert phase_fraction(DEFAULT_REGION_ID) == 0
    gaps = [b - a for a, b in itertools.pairwise(fractions)]
    assert min(gaps) * REGION_SPREAD_SECONDS >= 1  # second, at 60 s or more


def test_a_region_back_after_a_while_counts_only_once_it_polls_again(make_project):
    project = make_project(quorum=1, failure_threshold=1)
    regions = live_regions("eu", "ap")
    # ap's pollers were gone for an hour; its last view said down.
    ProjectRegionState.objects.create(
        project=project,
        region=regions["ap"],
        state="down",
        consecutive_failures=4,
        failing_since=T0 - timedelta(hours=1),
        last_polled_at=T0 - timedelta(hours=1),
    )
    fleet = Fleet(project, regions)

    fleet.poll("u-", 0)
    assert Incident.objects.count() == 0

    fleet.poll("-d", 1)  # ap polls again, and still fails: now it counts
    assert Incident.objects.count() == 1


def _queries(store: DatabaseResultStore, outcomes: list) -> int:
    with CaptureQueriesContext(connection) as queries:
        store.save(outcomes)
    return len(queries)


def test_a_settled_batch_of_several_regions_costs_two_queries_more_than_one_regions(
    make_project,
):
    """The region step reads the regions again and the views of the locked
    projects in one statement; its writes go with the polls
    (docs/regions.md)."""
    projects = [make_project() for _ in range(5)]
    # A clock that stands still: each store reads the regions once, however
    # slow the machine.
    alone = DatabaseResultStore(region_id=DEFAULT_REGION_ID, clock=lambda: 0.0)
    alone.save([outcome(p.pk, at=0) for p in projects])
    one_region = _queries(alone, [outcome(p.pk, at=STEP) for p in projects])

    regions = live_regions("eu", "us")
    eu = DatabaseResultStore(region_id=regions["eu"].pk, clock=lambda: 0.0)
    eu.save([outcome(p.pk, at=0) for p in projects])
    several = _queries(eu, [outcome(p.pk, at=STEP) for p in projects])

    # On PostgreSQL the writer's own statements bypass the ORM: only the
    # regions' read is counted.
    extra = 1 if connection.vendor == "postgresql" else 2
    assert several == one_region + extra


def test_a_settled_view_is_written_again_only_after_a_while(make_project):
    project = make_project()
    regions = live_regions("eu", "us")
    eu = DatabaseResultStore(region_id=regions["eu"].pk)
    step = REFRESH_SECONDS // 3

    def written_at():
        return ProjectRegionState.objects.get(region=regions["eu"]).last_polled_at

    for at in range(0, REFRESH_SECONDS + 1, step):
        eu.save([outcome(project.pk, at=at)])
    assert written_at() == T0

    eu.save([outcome(project.pk, at=REFRESH_SECONDS + step)])
    assert written_at() == outcome(project.pk, at=REFRESH_SECONDS + step).due_at


def test_a_regions_latest_poll_is_read_past_its_settled_row(admin_client, make_project):
    """The takeover and the page find the region's latest poll though its
    settled view's row was written polls before."""
    project = make_project()
    regions = live_regions("eu", "us")
    eu, us = (DatabaseResultStore(region_id=r.pk) for r in regions.values())
    for step, ms in enumerate((41, 42, 57)):
        eu.save([outcome(project.pk, at=step * STEP, ms=ms)])
        us.save([outcome(project.pk, at=step * STEP + 3, ms=300 + ms)])
    assert ProjectRegionState.objects.get(region=regions["eu"]).last_polled_at == T0

    (target,) = iter_targets(region_id=regions["eu"].pk)
    assert target.last_window == outcome(project.pk, at=2 * STEP).due_at
    page = admin_client.get(project.get_absolute_url()).content.decode()
    regions_table = page.split('id="regions-heading"')[1].split("</table>")[0]
    assert "57 ms" in regions_table
    assert "41 ms" not in regions_table
