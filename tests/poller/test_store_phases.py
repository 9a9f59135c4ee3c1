"""The writer stores each poll's phases and keeps the certificate's expiry
on the project."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from polling.store import DatabaseResultStore
from projects.models import MAX_PHASE_MS, Incident, PollResult
from tests.support.outcomes import T0, outcome

pytestmark = pytest.mark.django_db

EXPIRES = T0 + timedelta(days=90)


def timed(project_id: int, *, at: float = 0, expires=None, **phases):
    return dataclasses.replace(
        outcome(project_id, at=at), tls_expires_at=expires, **phases
    )


def test_it_stores_the_phases_and_null_for_those_that_did_not_happen(make_project):
    project = make_project()
    fresh = timed(project.pk, dns_ms=3, connect_ms=1, tls_ms=12, first_byte_ms=40)
    reused = timed(project.pk, at=60, first_byte_ms=35)

    DatabaseResultStore().save([fresh, reused])

    rows = PollResult.objects.order_by("polled_at").values_list(
        "dns_ms", "connect_ms", "tls_ms", "first_byte_ms"
    )
    assert list(rows) == [(3, 1, 12, 40), (None, None, None, 35)]


def test_a_phase_longer_than_a_smallint_is_stored_as_the_largest(make_project):
    project = make_project()

    DatabaseResultStore().save([timed(project.pk, dns_ms=100_000, first_byte_ms=5)])

    assert PollResult.objects.get().dns_ms == MAX_PHASE_MS


def test_the_project_keeps_the_expiry_of_the_latest_certificate_seen(make_project):
    project = make_project(url="https://127.0.0.1/")
    renewed = EXPIRES + timedelta(days=60)
    store = DatabaseResultStore()

    store.save([timed(project.pk, at=60, expires=renewed)])
    project.refresh_from_db()
    assert project.tls_expires_at == renewed

    # Within a batch the latest poll wins, whatever order they come in.
    store.save(
        [
            timed(project.pk, at=180, expires=EXPIRES),
            timed(project.pk, at=120, expires=renewed),
        ]
    )
    project.refresh_from_db()
    assert project.tls_expires_at == EXPIRES


def test_a_poll_that_saw_no_certificate_leaves_the_expiry_alone(make_project):
    project = make_project(url="https://127.0.0.1/")
    store = DatabaseResultStore()
    store.save([timed(project.pk, expires=EXPIRES)])

    store.save([outcome(project.pk, up=False, at=60, code=None, ms=None)])

    project.refresh_from_db()
    assert project.tls_expires_at == EXPIRES
    assert project.last_status == "down"


def test_a_certificate_expiring_soon_still_opens_its_incident(make_project):
    project = make_project(url="https://127.0.0.1/", tls_expiry_warning_days=14)
    soon = T0 + timedelta(days=3)

    DatabaseResultStore().save([timed(project.pk, expires=soon, tls_ms=9)])

    incident = Incident.objects.get(project=project)
    assert incident.kind == Incident.Kind.CERTIFICATE
    assert incident.certificate_expires_at == soon
    project.refresh_from_db()
    assert project.tls_expires_at == soon
