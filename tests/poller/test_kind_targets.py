"""Each kind's options reach the poller's Target as the probe compares
them (polling/store/targets.py), stored values the admin would refuse
become the poll's problem rather than a loading error, and what a kind
measures beyond the response time is stored with its poll."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from polling.engine.types import HeaderAssertion, Outcome
from polling.store import DatabaseResultStore
from polling.store.targets import load_targets
from projects.models import PollResult, Project

pytestmark = pytest.mark.django_db


def loaded(project: Project):
    [target] = load_targets([project.pk])
    return target


def test_header_assertions_reach_the_target(make_project):
    project = make_project(
        header_assertions=[
            {"name": "Cache-Control", "operator": "contains", "value": "no-store"},
            {"name": "Server", "operator": "absent"},
        ]
    )
    assert loaded(project).header_assertions == (
        HeaderAssertion("Cache-Control", "contains", "no-store"),
        HeaderAssertion("Server", "absent", ""),
    )


def test_a_hex_payload_is_sent_as_its_bytes(make_project):
    project = make_project(
        url="udp://127.0.0.1:123",
        udp_payload="1b 00 ff",
        udp_payload_hex=True,
        expected_reply="^ok",
        expected_reply_mode="regex",
    )
    target = loaded(project)
    assert (target.payload, target.expected_reply, target.expected_reply_regex) == (
        b"\x1b\x00\xff",
        "^ok",
        True,
    )


def test_expected_answers_are_compared_in_the_form_answers_are_read(make_project):
    project = make_project(
        url="dns://127.0.0.1/example.com?type=MX",
        dns_expected_answers="10 mail.example.com\n20 backup.example.com.",
        dns_answer_match="all",
        dns_expected_rcode="NOERROR",
        dns_require_dnssec=True,
    )
    target = loaded(project)
    assert target.dns_answers == ("10 mail.example.com.", "20 backup.example.com.")
    assert (target.dns_match, target.dns_rcode, target.dns_dnssec) == (
        "all",
        "NOERROR",
        True,
    )


def test_a_txt_answer_is_one_string_unless_quoted(make_project):
    project = make_project(
        url="dns://127.0.0.1/example.com?type=TXT",
        dns_expected_answers='v=spf1 -all\n"a" "b"',
    )
    assert loaded(project).dns_answers == ('"v=spf1 -all"', '"a" "b"')


def test_stored_settings_the_admin_would_refuse_become_the_polls_problem(
    make_project,
):
    hex_payload = make_project(
        url="udp://127.0.0.1:123", udp_payload="1b", udp_payload_hex=True
    )
    answers = make_project(url="dns://127.0.0.1/example.com?type=A")
    Project.objects.filter(pk=hex_payload.pk).update(udp_payload="zz")
    Project.objects.filter(pk=answers.pk).update(dns_expected_answers="not an address")
    assert loaded(hex_payload).problem == "invalid UDP payload: not hex digits"
    assert loaded(answers).problem.startswith(
        "invalid expected answers: line 1, “not an address”, is not A record data"
    )


def test_a_pings_count_and_loss_reach_the_target(make_project):
    project = make_project(
        url="icmp://127.0.0.1", ping_count=5, ping_max_loss_percent=20
    )
    target = loaded(project)
    assert (target.ping_count, target.ping_max_loss_percent) == (5, 20)


def test_a_pings_round_trips_and_loss_are_stored_with_the_poll(make_project):
    project = make_project(url="icmp://127.0.0.1")
    at = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
    DatabaseResultStore().save(
        [
            Outcome(
                project.pk,
                True,
                at,
                at,
                response_time_ms=1,
                message="2 of 3 replies",
                rtt_us=(310, 905, 1500),
                loss_percent=33,
            )
        ]
    )
    stored = PollResult.objects.get(project=project)
    assert (
        stored.rtt_min_us,
        stored.rtt_avg_us,
        stored.rtt_max_us,
        stored.loss_percent,
    ) == (310, 905, 1500, 33)
