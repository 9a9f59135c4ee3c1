"""Every kind of check shows on the pages a project shows on: the
overview, its page (what it is and what counts as up), its badge and its
API representation, with polls stored."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.utils import timezone

pytestmark = pytest.mark.django_db

KINDS = [
    (
        {"url": "icmp://127.0.0.1", "ping_count": 5},
        "ping (ICMP) icmp://127.0.0.1",
        "Up when: at least one of 5 pings is answered · the loss is at most 66 %",
    ),
    (
        {"url": "ssh://127.0.0.1:2222", "expected_reply": "OpenSSH"},
        "SSH ssh://127.0.0.1:2222",
        "Up when: the server sends an SSH- identification line · the line "
        "contains “OpenSSH”",
    ),
    (
        {"url": "udp://127.0.0.1:123", "udp_payload": "ping"},
        "UDP udp://127.0.0.1:123",
        "Up when: a reply to the payload comes back",
    ),
    (
        {
            "url": "dns://127.0.0.1/example.com?type=A",
            "dns_expected_answers": "192.0.2.1",
        },
        "DNS dns://127.0.0.1/example.com?type=A",
        "Up when: the response code is NOERROR · the answers hold one of 192.0.2.1",
    ),
]


@pytest.mark.parametrize(("fields", "shown", "rules"), KINDS)
def test_each_kind_shows_on_every_page(
    admin_client, read_api, make_project, add_polls, fields, shown, rules
):
    project = make_project(name="odd one", **fields)
    add_polls(project, "uud", end=timezone.now(), every=timedelta(minutes=1))

    page = admin_client.get(project.get_absolute_url())
    overview = admin_client.get("/")
    badge = admin_client.get(f"/badge/{project.badge_key}/status.svg")
    api = read_api.get(f"/api/v1/projects/{project.pk}/")

    assert page.status_code == 200
    assert shown in page.content.decode()
    assert rules in page.content.decode()
    measures = project.check_kind.measures
    assert f"{measures[0].upper()}{measures[1:]}, last " in page.content.decode()
    assert overview.status_code == 200
    assert "odd one" in overview.content.decode()
    assert badge.status_code == 200
    assert api.status_code == 200
    assert api.json()["url"] == fields["url"]
