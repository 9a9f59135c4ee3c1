"""A Hurl file as a flow: the common subset read, every other line
reported, and the imported flow polled against a real shop API."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from io import StringIO

import pytest

from django.core.management import CommandError, call_command

from polling.engine.probe import make_handle, probe
from polling.engine.types import Task
from polling.store import load_targets
from projects.as_code.hurl import read_hurl
from projects.models import Project
from tests.support.flows import shop_secret
from tests.support.shop_server import ShopServer

PASSWORD = "hurl-pa55"

HURL = """\
# Log in, then read the orders.
POST {base}/api/login
Content-Type: application/json
{{
  "user": "probe",
  "password": "{{{{shop_password}}}}"
}}
HTTP 200
[Captures]
token: jsonpath "$.token"
request: header "X-Request-Id"
[Asserts]
jsonpath "$.token" exists

GET {base}/api/orders
Authorization: Bearer {{{{token}}}}
[Options]
retry: 3
HTTP *
Content-Type: json
[Asserts]
status == 200
body contains "orders"
jsonpath "$.orders[0].id" == 17
jsonpath "$..total" > 0
duration < 800
bytes count > 10
"""


def hurl(base: str = "https://shop.example.com") -> str:
    return HURL.format(base=base)


def test_the_common_subset_becomes_steps():
    flow = read_hurl(hurl(), secrets=frozenset({"shop_password"}))
    login, orders = flow.steps
    assert login["name"] == "POST https://shop.example.com/api/login"
    assert '"password": "{{secrets.shop_password}}"' in login["body"]
    assert login["expect"] == {
        "status": "200",
        "json": [{"query": "token", "operator": "!=", "expected": None}],
    }
    assert login["capture"] == {"token": "json:token", "request": "header:X-Request-Id"}
    assert orders["headers"] == {"Authorization": "Bearer {{token}}"}
    assert orders["expect"] == {
        "headers": {"Content-Type": "json"},
        "status": "200",
        "keyword": "orders",
        "json": [{"query": "orders[0].id", "operator": "==", "expected": 17}],
        "max_response_time_ms": 800,
    }


def test_every_line_outside_the_subset_is_reported_with_its_number():
    flow = read_hurl(hurl())
    assert flow.unsupported == [
        "line 17: [Options]: [Options] is not read: only [Captures] and [Asserts] are",
        "line 18: retry: 3: a line of [Options], which is not read",
        'line 25: jsonpath "$..total" > 0: the JSONPath $..total is beyond the '
        "dotted subset ($.a.b[0])",
        "line 27: bytes count > 10: not an assert this import reads",
    ]


@pytest.mark.django_db
def test_importhurl_makes_a_flow_that_polls_the_shop():
    shop_secret(value=PASSWORD)
    with ShopServer(PASSWORD) as shop:
        path = _write(hurl(shop.base))
        err = StringIO()
        summary = call_command(
            "importhurl",
            path,
            "--name",
            "shop",
            "--secret",
            "shop_password",
            stderr=err,
        )
        assert summary.endswith("2 steps, 4 lines not imported")
        assert err.getvalue().count("Not imported: line") == 4
        project = Project.objects.get(name="shop")
        assert project.kind == "flow"
        [target] = load_targets([project.pk])
        handle = make_handle()
        try:
            outcome = probe(handle, Task(target, datetime.now(UTC)))
        finally:
            handle.close()
    assert outcome.up, outcome.error
    assert [run.status_code for run in outcome.steps] == [200, 200]


@pytest.mark.django_db
def test_a_variable_no_step_captures_is_refused_and_nothing_changes():
    path = _write(hurl())  # shop_password is not declared a secret
    with pytest.raises(CommandError, match=r"\{\{shop_password\}\} is not captured"):
        call_command("importhurl", path, "--name", "shop", stderr=StringIO())
    assert not Project.objects.exists()


def _write(text: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".hurl", delete=False) as file:
        file.write(text)
    return file.name
