"""Each kind's own options: refused, as a field error naming why, on a
project of another kind; each kind's settings checked where they are
typed (the admin's form, which the API and the YAML import share)."""

from __future__ import annotations

import json

import pytest

from projects.forms.project import ProjectForm
from projects.models import Project, Team

VALID = {
    "name": "check",
    "url": "https://example.com/health",
    "method": "GET",
    "headers": "{}",
    "body": "",
    "expected_status": "200",
    "interval": 5,
    "interval_unit": "minutes",
    "timeout_seconds": 10,
    "enabled": True,
}


def errors(**changes) -> dict[str, list[str]]:
    form = ProjectForm(data={**VALID, **changes})
    form.is_valid()
    return form.errors


def assertions(*items: dict) -> str:
    return json.dumps(list(items))


@pytest.mark.django_db
def test_header_assertions_on_an_http_project_save():
    form = ProjectForm(
        data={
            **VALID,
            "header_assertions": assertions(
                {"name": "Cache-Control", "operator": "contains", "value": "no"},
                {"name": "Server", "operator": "absent"},
            ),
        }
    )
    assert form.is_valid(), form.errors
    project = form.save()
    assert project.header_assertions[1] == {"name": "Server", "operator": "absent"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('{"a": 1}', "Header assertions must be a JSON list"),
        ("[1]", "Header assertion 1 must be an object with name, operator and value"),
        (
            assertions({"name": "Bad Name", "operator": "exists"}),
            "Header assertion 1: “Bad Name” is not a header name.",
        ),
        (
            assertions({"name": "X-A", "operator": "matches", "value": "x"}),
            "Header assertion 1: the operator must be one of exists, absent, ==, "
            "contains, regex.",
        ),
        (
            assertions({"name": "X-A", "operator": "=="}),
            "Header assertion 1: enter the value to compare with.",
        ),
        (
            assertions({"name": "X-A", "operator": "exists", "value": "x"}),
            "Header assertion 1: exists takes no value.",
        ),
        (
            assertions({"name": "X-A", "operator": "regex", "value": "("}),
            "“(” is not a regular expression (missing ), unterminated subpattern).",
        ),
        ("not json", "Header assertions must be valid JSON"),
    ],
)
def test_a_bad_header_assertion_is_a_field_error(value, message):
    [error] = errors(header_assertions=value)["header_assertions"]
    assert error.startswith(message)


@pytest.mark.django_db
def test_header_assertions_on_a_tcp_check_are_refused():
    found = errors(
        url="tcp://db.example.com:5432",
        header_assertions=assertions({"name": "X-A", "operator": "exists"}),
    )
    assert found["header_assertions"] == [
        "A TCP check only opens a connection: there are no response headers to check."
    ]


@pytest.mark.django_db
def test_a_udp_check_with_a_hex_payload_and_an_expected_reply_saves():
    form = ProjectForm(
        data={
            **VALID,
            "url": "udp://127.0.0.1:123",
            "udp_payload": "1b 00 00 00",
            "udp_payload_hex": True,
            "expected_reply": "^ok",
            "expected_reply_mode": "regex",
        }
    )
    assert form.is_valid(), form.errors


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"url": "udp://127.0.0.1:123"},
            "udp_payload",
            "A UDP check needs a payload: what to send, e.g. a status request.",
        ),
        (
            {
                "url": "udp://127.0.0.1:123",
                "udp_payload": "zz",
                "udp_payload_hex": True,
            },
            "udp_payload",
            "“Payload is hex” is on, but this is not hex digits: write bytes as "
            "1b 00 ff.",
        ),
        (
            {"url": "udp://127.0.0.1", "udp_payload": "x"},
            "url",
            "A UDP check needs a port: udp://ntp.example.com:123.",
        ),
        (
            {"url": "udp://127.0.0.1:123", "udp_payload": "x", "keyword": "ok"},
            "keyword",
            "A UDP check sends its payload, not an HTTP request: there is no "
            "body to search.",
        ),
        (
            {
                "url": "udp://127.0.0.1:123",
                "udp_payload": "x",
                "expected_reply": "(",
                "expected_reply_mode": "regex",
            },
            "expected_reply",
            "“(” is not a regular expression (missing ), unterminated subpattern).",
        ),
        (
            {"url": "ssh://127.0.0.1/home", "udp_payload": ""},
            "url",
            "An SSH check is only ssh://host[:port], with no path or query, e.g. "
            "ssh://git.example.com:22.",
        ),
        (
            {"url": "ssh://127.0.0.1", "udp_payload": "x"},
            "udp_payload",
            "Only UDP checks use this; this is an SSH check.",
        ),
        (
            {"udp_payload": "x"},
            "udp_payload",
            "Only UDP checks use this; this is an HTTP(S) check.",
        ),
        (
            {"expected_reply": "x"},
            "expected_reply",
            "Only SSH and UDP checks use this; this is an HTTP(S) check.",
        ),
        (
            {"url": "ssh://127.0.0.1", "json_query": "a", "json_expected": "b"},
            "json_query",
            "An SSH check only reads the server's banner: there is no body to query.",
        ),
        (
            {"url": "", "kind": "heartbeat", "expected_reply": "x"},
            "expected_reply",
            "Only SSH and UDP checks use this; this is a heartbeat project.",
        ),
    ],
)
def test_nonsense_for_the_kind_is_a_field_error(changes, field, message):
    assert errors(**changes)[field] == [message]


@pytest.mark.django_db
def test_an_ssh_check_with_an_expected_banner_saves():
    form = ProjectForm(
        data={**VALID, "url": "ssh://git.example.com", "expected_reply": "OpenSSH"}
    )
    assert form.is_valid(), form.errors


@pytest.mark.django_db
@pytest.mark.parametrize(
    "changes",
    [
        {"url": "dns://127.0.0.1:5353/example.com?type=MX"},
        {"url": "dns:///example.com"},
        {
            "url": "dns://[::1]/example.com?type=TXT",
            "dns_expected_answers": "v=spf1 -all\n\nother text",
            "dns_answer_match": "all",
        },
        {
            "url": "dns://1.1.1.1/example.com?type=A",
            "dns_expected_rcode": "NXDOMAIN",
            "dns_require_dnssec": True,
        },
    ],
)
def test_dns_checks_save(changes):
    form = ProjectForm(data={**VALID, **changes})
    assert form.is_valid(), form.errors


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"url": "dns://1.1.1.1/example.com?type=ZZZ"},
            "url",
            "“ZZZ” is not a record type a DNS check asks for: A, AAAA, CNAME, MX, "
            "NS, TXT, SOA, SRV, CAA, PTR.",
        ),
        (
            {"url": "dns://1.1.1.1/"},
            "url",
            "A DNS check needs the name to look up: "
            "dns://1.1.1.1/example.com?type=MX, or dns:///example.com?type=A for "
            "the poller's own resolver.",
        ),
        (
            {"url": "dns://1.1.1.1/example.com?type=A&recurse=no"},
            "url",
            "A DNS URL takes only ?type= (and class=IN), not recurse.",
        ),
        (
            {"url": "dns://1.1.1.1/example.com?class=CH"},
            "url",
            "A DNS check asks for class IN only.",
        ),
        (
            {
                "url": "dns://1.1.1.1/example.com?type=A",
                "dns_expected_answers": "192.0.2.1\nmail.example.com",
            },
            "dns_expected_answers",
            "Expected answers: line 2, “mail.example.com”, is not A record data "
            "(Text input is malformed.).",
        ),
        (
            {"url": "dns://1.1.1.1/example.com", "keyword": "x"},
            "keyword",
            "A DNS check sends a query, not an HTTP request: there is no body to "
            "search.",
        ),
        (
            {"dns_expected_answers": "192.0.2.1"},
            "dns_expected_answers",
            "Only DNS checks use this; this is an HTTP(S) check.",
        ),
        (
            {
                "url": "udp://127.0.0.1:53",
                "udp_payload": "x",
                "dns_require_dnssec": True,
            },
            "dns_require_dnssec",
            "Only DNS checks use this; this is a UDP check.",
        ),
    ],
)
def test_dns_nonsense_is_a_field_error(changes, field, message):
    assert errors(**changes)[field] == [message]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"url": "icmp://127.0.0.1", "keyword": "up"},
            "keyword",
            "A ping sends ICMP echo requests, not an HTTP request: there is no "
            "body to search.",
        ),
        (
            {"url": "icmp://127.0.0.1:80"},
            "url",
            "A ping is only icmp://host, with no port, path or query, e.g. "
            "icmp://router.example.com.",
        ),
        (
            {"url": "icmp://127.0.0.1", "ping_count": 11},
            "ping_count",
            "Ensure this value is less than or equal to 10.",
        ),
        (
            {"url": "icmp://127.0.0.1", "ping_max_loss_percent": 101},
            "ping_max_loss_percent",
            "Ensure this value is less than or equal to 100.",
        ),
        (
            {"ping_count": 5},
            "ping_count",
            "Only ping (ICMP) checks use this; this is an HTTP(S) check.",
        ),
        (
            {"url": "icmp://127.0.0.1", "expected_reply": "x"},
            "expected_reply",
            "Only SSH and UDP checks use this; this is a ping (ICMP) check.",
        ),
    ],
)
def test_ping_nonsense_is_a_field_error(changes, field, message):
    assert errors(**changes)[field] == [message]


@pytest.mark.django_db
def test_a_ping_saves_with_its_own_options():
    form = ProjectForm(
        data={
            **VALID,
            "url": "icmp://[::1]",
            "ping_count": 5,
            "ping_max_loss_percent": 20,
        }
    )
    assert form.is_valid(), form.errors


@pytest.mark.django_db
@pytest.mark.parametrize(
    "changes",
    [
        {"url": "icmp://169.254.169.254"},
        {"url": "udp://169.254.169.254:53", "udp_payload": "x"},
        {"url": "ssh://[fe80::1]"},
        {"url": "dns://169.254.169.254/example.com?type=A"},
    ],
)
def test_a_blocked_address_is_refused_at_save_for_every_kind(settings, changes):
    settings.POLL_BLOCKED_NETWORKS = ["169.254.0.0/16", "fe80::/10"]
    guests = Team.objects.create(name="guests", slug="guests", trusted=False)
    form = ProjectForm(data={**VALID, **changes}, instance=Project(team=guests))
    assert not form.is_valid()
    [message] = form.errors["url"]
    assert "is in a blocked network" in message
