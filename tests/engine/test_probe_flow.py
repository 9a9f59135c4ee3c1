"""A flow's steps run in one poll, against a real shop API on 127.0.0.1
that issues and checks tokens, alone and on the executor's CurlMulti."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

import pytest

from polling.engine.probes.flow import MASK, masker
from polling.engine.types import JsonAssertion, Keyword, Outcome, Step, Target, Task
from tests.support.executor_probe import open_handle, run_poll
from tests.support.shop_server import ShopServer

PASSWORD = "pa55/word&more"


@pytest.fixture
def handle(poll_mode):
    handle = open_handle(poll_mode)
    yield handle
    handle.close()


@pytest.fixture
def shop():
    with ShopServer(PASSWORD) as server:
        yield server


def steps(base: str, **orders) -> tuple[Step, ...]:
    login = Step(
        name="log in",
        method="POST",
        url=f"{base}/api/login",
        headers=(("Content-Type", "application/json"),),
        body='{"user": "probe", "password": "{{secrets.shop_password}}"}',
        json_assertions=(JsonAssertion("token", "!=", None),),
        captures=(("token", "json:token"), ("request", "header:X-Request-Id")),
    )
    my_orders = Step(
        name="my orders",
        url=f"{base}/api/orders?request={{{{request}}}}",
        headers=(("Authorization", "Bearer {{token}}"),),
        expected_status=((200, 299),),
        keyword=Keyword("orders"),
        **orders,
    )
    return login, my_orders


def run(handle, base: str, password: str = PASSWORD, **orders) -> Outcome:
    target = Target(
        project_id=7,
        url="",
        timeout_seconds=5,
        steps=steps(base, **orders),
        secrets=(("shop_password", password),),
    )
    return run_poll(handle, Task(target, datetime.now(UTC)))


def test_login_token_orders_passes_and_times_each_step(handle, shop):
    outcome = run(handle, shop.base)
    assert outcome.up, outcome.error
    assert [(s.name, s.up, s.status_code) for s in outcome.steps] == [
        ("log in", True, 200),
        ("my orders", True, 200),
    ]
    assert all(s.response_time_ms is not None for s in outcome.steps)
    assert outcome.steps[0].connect_ms is not None
    [(_, _, body), (orders_path, orders, _)] = shop.requests
    assert PASSWORD in body  # the secret goes in the request, and only there
    token = orders["Authorization"].removeprefix("Bearer ")
    assert token in shop.tokens
    assert orders_path.startswith("/api/orders?request=")


def test_a_wrong_password_fails_at_step_1(handle, shop):
    outcome = run(handle, shop.base, password="not-it")
    assert not outcome.up
    assert outcome.error == "step 1 'log in': expected 200, got 401"
    [login] = outcome.steps
    assert "wrong user or password" in login.excerpt
    assert len(shop.requests) == 1


def test_an_expired_token_fails_at_step_2_with_its_reason(handle, shop):
    shop.tokens_expire = True
    outcome = run(handle, shop.base)
    assert outcome.error == "step 2 'my orders': expected 200-299, got 401"
    assert outcome.status_code == 401
    first, second = outcome.steps
    assert first.up
    assert not second.up
    assert '"token expired"' in second.excerpt


def test_a_header_rule_and_a_capture_that_finds_nothing_fail_their_step(handle, shop):
    outcome = run(handle, shop.base, header_rules=(("Content-Type", "xml"),))
    assert outcome.error.startswith("step 2 'my orders': header Content-Type:")
    outcome = run(handle, shop.base, captures=(("id", "json:nothing.here"),))
    assert (
        outcome.error
        == "step 2 'my orders': capture id: json:nothing.here found nothing"
    )


def test_a_secret_in_a_reason_or_an_excerpt_is_masked():
    mask = masker((("pw", PASSWORD),))
    assert mask(f"bad {PASSWORD} and pa55%2Fword%26more") == f"bad {MASK} and {MASK}"
    assert masker(())("text") == "text"


def test_a_refused_connection_names_the_step(handle):
    outcome = run(handle, "http://127.0.0.1:9")
    assert outcome.error == "step 1 'log in': connection refused"


def test_a_step_that_hangs_times_out_within_the_flows_timeout(handle, target_server):
    target = Target(
        project_id=7,
        url="",
        timeout_seconds=1,
        steps=(
            Step(name="home", url=target_server.url("/ok")),
            Step(name="stuck", url=target_server.url("/hang")),
        ),
    )
    outcome = run_poll(handle, Task(target, datetime.now(UTC)))
    assert outcome.error == "step 2 'stuck': timed out after 1 s"
    assert [run.up for run in outcome.steps] == [True, False]


def test_a_captured_value_is_url_encoded_in_the_url_only(handle, target_server):
    text = target_server.url("/text?" + urlencode({"body": "id=a b&c/d;"}))
    target = Target(
        project_id=7,
        url="",
        steps=(
            Step(name="read", url=text, captures=(("v", "regex:id=(.*);"),)),
            Step(
                name="echo",
                method="POST",
                url=target_server.url("/echo?v={{v}}"),
                headers=(("X-V", "{{v}}"),),
                body="v={{v}}",
                json_assertions=(
                    JsonAssertion("path", "==", "/echo?v=a%20b%26c%2Fd"),
                    JsonAssertion("body", "==", "v=a b&c/d"),
                ),
            ),
        ),
    )
    outcome = run_poll(handle, Task(target, datetime.now(UTC)))
    assert outcome.up, outcome.error
