"""Every kind of check as YAML: its own options exported, imported back
the same, and refused with the admin's field error on another kind."""

from __future__ import annotations

from io import StringIO

import pytest
import yaml

from django.core.management import CommandError, call_command

from projects.forms.project import ProjectForm
from projects.models import Project

# One project of each kind with its own options set.
KIND_PROJECTS = [
    {
        "name": "headers",
        "url": "https://127.0.0.1:9/health",
        "header_assertions": [
            {"name": "Cache-Control", "operator": "contains", "value": "no-store"}
        ],
    },
    {
        "name": "ntp",
        "url": "udp://127.0.0.1:123",
        "udp_payload": "1b" + "00" * 47,
        "udp_payload_hex": True,
        "expected_reply": "^\\x1c",
        "expected_reply_mode": "regex",
    },
    {"name": "bastion", "url": "ssh://127.0.0.1", "expected_reply": "OpenSSH"},
    {
        "name": "mail records",
        "url": "dns://127.0.0.1:5353/example.com?type=MX",
        "dns_expected_answers": "10 mail.example.com\n20 backup.example.com",
        "dns_answer_match": "exactly",
        "dns_require_dnssec": True,
    },
    {
        "name": "router",
        "url": "icmp://127.0.0.1",
        "ping_count": 5,
        "ping_max_loss_percent": 20,
    },
    {
        "name": "gone",
        "url": "dns:///old.example.com",
        "dns_expected_rcode": "NXDOMAIN",
    },
]


def export() -> str:
    out = StringIO()
    call_command("exportprojects", stdout=out)
    return out.getvalue()


def run_import(tmp_path, document: dict) -> str:
    path = tmp_path / "projects.yaml"
    path.write_text(yaml.safe_dump(document))
    out = StringIO()
    call_command("importprojects", str(path), stdout=out)
    return out.getvalue()


def editable(project: Project) -> dict:
    return {
        name: getattr(project, name)
        for name in ProjectForm.Meta.fields
        if name not in ("tags", "channels", "regions")
    }


@pytest.mark.django_db
def test_each_kinds_options_go_out_and_come_back_the_same(make_project, tmp_path):
    for fields in KIND_PROJECTS:
        make_project(**fields)
    before = {p.name: editable(p) for p in Project.objects.all()}
    document = yaml.safe_load(export())
    Project.objects.all().delete()

    run_import(tmp_path, document)

    assert {p.name: editable(p) for p in Project.objects.all()} == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        (
            {
                "url": "tcp://127.0.0.1:5432",
                "header_assertions": [{"name": "X-A", "operator": "exists"}],
            },
            "header_assertions",
            "A TCP check only opens a connection: there are no response "
            "headers to check.",
        ),
        (
            {"url": "udp://127.0.0.1:123"},
            "udp_payload",
            "A UDP check needs a payload: what to send, e.g. a status request.",
        ),
        (
            {"url": "dns://127.0.0.1/example.com?type=ZZZ"},
            "url",
            "“ZZZ” is not a record type a DNS check asks for: A, AAAA, CNAME, "
            "MX, NS, TXT, SOA, SRV, CAA, PTR.",
        ),
        (
            {"url": "icmp://127.0.0.1", "keyword": "x"},
            "keyword",
            "A ping sends ICMP echo requests, not an HTTP request: there is no "
            "body to search.",
        ),
        (
            {"url": "ssh://127.0.0.1", "keyword": "x"},
            "keyword",
            "An SSH check only reads the server's banner: there is no body to search.",
        ),
    ],
)
def test_an_option_of_another_kind_is_refused_naming_the_field(
    tmp_path, entry, field, message
):
    document = {"version": 1, "projects": [{"name": "odd", **entry}]}

    with pytest.raises(CommandError) as caught:
        run_import(tmp_path, document)

    assert f"projects[odd].{field}: {message}" in str(caught.value)
