from __future__ import annotations

import queue
from datetime import timedelta

import pytest

from django.db import IntegrityError

from polling.engine.types import Target
from polling.engine.writer import ResultWriter
from polling.store import DatabaseResultStore, iter_targets, load_targets
from projects.housekeeping.rollups import rebuild_rollups
from projects.models import Incident, PollResult, Status, Team
from tests.support.factories import load_target, rollup_rows
from tests.support.outcomes import T0, outcome
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db


def test_iter_targets_yields_the_enabled_projects_as_targets(make_project):
    api = make_project(
        url="http://127.0.0.1:8000/api",
        method="POST",
        headers={"X-B": "2", "Accept": "application/json"},
        body='{"ping": true}',
        expected_status="201-204, 299",
        interval=30,
        interval_unit="seconds",
        timeout_seconds=5,
        failure_threshold=4,
        recovery_threshold=2,
    )
    make_project(enabled=False)
    assert list(iter_targets()) == [
        Target(
            project_id=api.pk,
            url="http://127.0.0.1:8000/api",
            method="POST",
            headers=(("Accept", "application/json"), ("X-B", "2")),
            body='{"ping": true}',
            expected_status=((201, 204), (299, 299)),
            interval_seconds=30,
            timeout_seconds=5,
            failure_threshold=4,
            recovery_threshold=2,
            trusted=True,  # the Default team is the operator's own
        )
    ]


def test_a_project_of_an_untrusted_team_is_an_untrusted_target(make_project):
    guests = Team.objects.create(name="Guests", slug="guests")
    ours = make_project()
    theirs = make_project(team=guests, url="http://203.0.113.9:9/")  # TEST-NET-3

    assert load_target(ours.pk).trusted is True
    assert load_target(theirs.pk).trusted is False
    assert {t.project_id: t.trusted for t in iter_targets()} == {
        ours.pk: True,
        theirs.pk: False,
    }


def test_a_project_that_allows_insecure_redirects_tells_the_engine(make_project):
    strict = make_project()
    lenient = make_project(allow_insecure_redirects=True)

    assert load_target(strict.pk).allow_insecure_redirects is False
    assert load_target(lenient.pk).allow_insecure_redirects is True
    targets = {t.project_id: t for t in iter_targets()}
    assert targets[lenient.pk].allow_insecure_redirects is True


def test_load_target_is_none_for_disabled_and_missing_projects(make_project):
    enabled, disabled = make_project(), make_project(enabled=False)
    assert load_target(enabled.pk).project_id == enabled.pk
    assert load_target(disabled.pk) is None
    assert load_target(10**9) is None


def test_load_targets_reads_the_enabled_ones_of_many_in_one_query(
    make_project, django_assert_num_queries
):
    first, second = make_project(), make_project()
    disabled = make_project(enabled=False)
    with django_assert_num_queries(1):
        targets = load_targets([first.pk, disabled.pk, second.pk, 10**9])
    assert sorted(t.project_id for t in targets) == sorted([first.pk, second.pk])


def test_it_saves_rows_and_the_current_state(make_project):
    project = make_project()
    saved = DatabaseResultStore().save(
        [
            outcome(project.pk, up=True, at=0, ms=30),
            outcome(project.pk, up=False, at=60, code=503, ms=12),
        ]
    )
    assert saved == 2
    rows = list(PollResult.objects.order_by("polled_at"))
    assert [(r.status, r.status_code, r.response_time_ms) for r in rows] == [
        ("up", 200, 30),
        ("down", 503, 12),
    ]
    assert rows[1].error_message == "expected 200, got 503"
    assert rows[1].polled_at == T0 + timedelta(seconds=60)
    project.refresh_from_db()
    assert project.last_status == "down"
    assert project.last_status_code == 503
    assert project.last_response_time_ms == 12
    assert project.last_polled_at == T0 + timedelta(seconds=60)
    assert project.consecutive_failures == 1


def test_consecutive_failures_add_up_across_batches_and_reset_on_success(
    make_project,
):
    project = make_project()
    store = DatabaseResultStore()

    def failures_after(*outcomes) -> int:
        store.save(list(outcomes))
        project.refresh_from_db()
        return project.consecutive_failures

    assert failures_after(outcome(project.pk, up=False, at=1)) == 1
    assert (
        failures_after(
            outcome(project.pk, up=False, at=2), outcome(project.pk, up=False, at=3)
        )
        == 3
    )
    assert (
        failures_after(
            outcome(project.pk, up=False, at=4), outcome(project.pk, up=True, at=5)
        )
        == 0
    )
    assert (
        failures_after(
            outcome(project.pk, up=True, at=6), outcome(project.pk, up=False, at=7)
        )
        == 1
    )


def test_outcomes_of_deleted_projects_are_dropped_quietly(make_project):
    kept, deleted = make_project(), make_project()
    deleted_id = deleted.pk
    deleted.delete()
    saved = DatabaseResultStore().save([outcome(kept.pk), outcome(deleted_id)])
    assert saved == 1
    assert list(PollResult.objects.values_list("project_id", flat=True)) == [kept.pk]


def test_error_messages_are_cut_to_the_column_size(make_project):
    project = make_project()
    DatabaseResultStore().save([outcome(project.pk, up=False, error="x" * 20000)])
    assert len(PollResult.objects.get().error_message) == 10 * 1024


def test_a_second_result_for_a_window_is_dropped(make_project):
    project = make_project()
    store = DatabaseResultStore()
    first = store.save(
        [outcome(project.pk, at=0, ms=10), outcome(project.pk, at=0, ms=11)]
    )
    second = store.save(
        [outcome(project.pk, at=0, ms=12), outcome(project.pk, at=60, ms=13)]
    )
    saved = PollResult.objects.order_by("polled_at")
    assert list(saved.values_list("response_time_ms", flat=True)) == [10, 13]
    assert (first, second) == (1, 1)
    # Counted nowhere else either.
    kept = rollup_rows()
    rebuild_rollups()
    assert kept == rollup_rows()
    assert sum(row[2] for row in kept) == 2


def test_a_batch_saved_again_counts_once(make_project):
    """The answer to a batch's commit can be lost (the writer process died,
    the connection was cut) and the batch sent again: its failures must
    not count twice, or two failed polls would confirm an outage that
    takes three."""
    project = make_project(failure_threshold=3)
    batch = [
        outcome(project.pk, up=False, at=0, ms=None),
        outcome(project.pk, up=False, at=60, ms=None),
    ]
    store = DatabaseResultStore()
    assert store.save(batch) == 2
    assert store.save(batch) == 0

    project.refresh_from_db()
    assert project.consecutive_failures == 2
    assert project.state == "pending"  # failing, not confirmed down yet
    assert not Incident.objects.exists()
    assert PollResult.objects.count() == 2
    kept = rollup_rows()
    rebuild_rollups()
    assert kept == rollup_rows()
    assert [row[2:4] for row in kept] == [(2, 2)]  # polls, failures


def test_a_batch_partly_saved_before_saves_the_rest_once(make_project):
    project = make_project(failure_threshold=3)
    store = DatabaseResultStore()
    store.save([outcome(project.pk, up=False, at=0, ms=None)])
    saved = store.save(
        [
            outcome(project.pk, up=False, at=0, ms=None),
            outcome(project.pk, up=False, at=60, ms=None),
            outcome(project.pk, up=False, at=120, ms=None),
        ]
    )
    assert saved == 2
    project.refresh_from_db()
    assert project.consecutive_failures == 3
    assert project.state == "down"
    assert Incident.objects.get().failed_polls == 3


def test_a_result_sent_again_in_a_later_batch_counts_once(make_project):
    """One result in two batches, with newer results stored between them
    and new ones beside it: the project's state and rollups count it once,
    and its old window does not become the project's last poll."""
    project = make_project(failure_threshold=5)
    store = DatabaseResultStore()
    store.save([outcome(project.pk, up=False, at=0, ms=None)])
    store.save([outcome(project.pk, up=False, at=60, ms=None)])

    saved = store.save(
        [
            outcome(project.pk, up=True, at=0, ms=7),  # another poller's copy
            outcome(project.pk, up=False, at=120, ms=None),
        ]
    )
    again = store.save([outcome(project.pk, up=False, at=60, ms=None)])

    assert (saved, again) == (1, 0)
    project.refresh_from_db()
    assert project.consecutive_failures == 3
    assert project.last_polled_at == T0 + timedelta(seconds=120)
    assert PollResult.objects.filter(status=Status.UP).count() == 0
    kept = rollup_rows()
    rebuild_rollups()
    assert kept == rollup_rows()
    assert [row[2:4] for row in kept] == [(3, 3)]


def test_values_are_stored_exactly_as_given(make_project):
    project = make_project()
    message = 'said "no" \\ in ünïcode 🚀,\n\ta {json: [1]} line'
    at = 0.123456  # microseconds
    DatabaseResultStore().save(
        [outcome(project.pk, up=False, at=at, code=None, ms=None, error=message)]
    )
    row = PollResult.objects.get()
    assert row.error_message == message
    assert row.polled_at == T0 + timedelta(seconds=at)
    assert (row.status_code, row.response_time_ms) == (None, None)
    project.refresh_from_db()
    assert project.last_polled_at == T0 + timedelta(seconds=at)
    assert project.failing_since == T0 + timedelta(seconds=at)


def test_rollups_kept_by_the_writer_equal_a_rebuild_from_raw_rows(make_project):
    projects = [make_project(), make_project()]
    store = DatabaseResultStore()
    for batch in range(4):
        store.save(
            [
                outcome(
                    project.pk,
                    up=(i + batch) % 4 != 0,
                    at=batch * 1500 + i * 60,  # spans several hours
                    code=None if i % 5 == 0 else 200,
                    ms=None if i % 5 == 0 else 10 + i * batch,
                )
                for project in projects
                for i in range(20)
            ]
        )
    kept = rollup_rows()
    rebuild_rollups()
    assert kept == rollup_rows()
    assert len(kept) >= 4
    assert sum(row[2] for row in kept) == 160


def test_a_value_the_database_refuses_is_not_an_outage(make_project):
    project = make_project()
    # A CHECK constraint breaks: IntegrityError, not StoreUnavailable.
    with pytest.raises(IntegrityError):
        DatabaseResultStore().save([outcome(project.pk, ms=-5)])
    assert PollResult.objects.count() == 0  # all or nothing


@pytest.mark.django_db(transaction=True)
def test_the_writer_keeps_a_batch_but_the_row_the_database_refuses(make_project):
    projects = [make_project() for _ in range(5)]
    results: queue.Queue = queue.Queue()
    writer = ResultWriter(results, DatabaseResultStore(), batch_seconds=0.05)
    writer.start()
    try:
        for number, project in enumerate(projects):
            # A negative time breaks the column's CHECK constraint.
            results.put(outcome(project.pk, at=number, ms=-5 if number == 2 else 20))
        wait_until(lambda: writer.written + writer.rejected == 5)
        # Polling carries on: the next batch is saved as usual.
        results.put(outcome(projects[2].pk, at=10, ms=30))
        wait_until(lambda: writer.written == 5)
    finally:
        writer.stop(timeout=10)
    assert writer.rejected == 1
    assert writer.failed_writes == 0
    saved = PollResult.objects.values_list("project_id", "response_time_ms")
    assert sorted(saved) == sorted(
        [(p.pk, 20) for i, p in enumerate(projects) if i != 2] + [(projects[2].pk, 30)]
    )
