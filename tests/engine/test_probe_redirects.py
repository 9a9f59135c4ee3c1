"""How probe() follows redirects: methods, bodies and credentials, as
browsers and httpx do. Real servers on 127.0.0.1."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import quote

import pytest

from polling.engine.types import Outcome, Target, Task
from tests.support.executor_probe import open_handle, run_poll


def poll(handle, url: str, **fields) -> Outcome:
    return run_poll(
        handle, Task(Target(project_id=5, url=url, **fields), datetime.now(UTC))
    )


@pytest.fixture
def handle(poll_mode, target_server):
    # other.test is another origin on the same local server.
    handle = open_handle(
        poll_mode, resolve=[f"other.test:{target_server.port}:127.0.0.1"]
    )
    yield handle
    handle.close()


def redirect(server, location: str, status: int = 302) -> str:
    return server.url(
        f"/redirect-to?status={status}&location={quote(location, safe='')}"
    )


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_post_redirected_by_301_302_or_303_becomes_a_get_without_body(
    handle, target_server, status
):
    url = redirect(target_server, "/echo", status)

    outcome = poll(handle, url, method="POST", body="payload")

    assert outcome.up is True
    first, second = target_server.requests
    assert (first.method, first.body) == ("POST", b"payload")
    assert (second.method, second.path, second.body) == ("GET", "/echo", b"")


@pytest.mark.parametrize("status", [307, 308])
def test_307_and_308_repeat_the_method_and_body(handle, target_server, status):
    url = redirect(target_server, "/echo", status)

    poll(handle, url, method="PUT", body="payload")

    second = target_server.requests[1]
    assert (second.method, second.body) == ("PUT", b"payload")


def test_a_head_redirected_by_303_stays_a_head(handle, target_server):
    poll(handle, redirect(target_server, "/ok", 303), method="HEAD")

    assert [r.method for r in target_server.requests] == ["HEAD", "HEAD"]


def test_no_header_the_project_set_follows_a_redirect_to_another_origin(
    handle, target_server
):
    # Any of them may be a credential: X-Api-Key as much as Authorization.
    elsewhere = f"http://other.test:{target_server.port}/echo"
    headers = (("Authorization", "Bearer s3cret"), ("X-Api-Key", "k3y"))

    outcome = poll(handle, redirect(target_server, elsewhere), headers=headers)

    assert outcome.up is True
    first, second = target_server.requests
    assert first.header("X-Api-Key") == "k3y"
    assert second.header("Host") == f"other.test:{target_server.port}"
    assert second.header("Authorization") is None
    assert second.header("X-Api-Key") is None


@pytest.mark.parametrize("status", [307, 308])
def test_a_307_or_308_to_another_origin_sends_no_body(handle, target_server, status):
    elsewhere = f"http://other.test:{target_server.port}/echo"

    outcome = poll(
        handle, redirect(target_server, elsewhere, status), method="PUT", body="s3cret"
    )

    assert outcome.up is True
    first, second = target_server.requests
    assert (first.method, first.body) == ("PUT", b"s3cret")
    assert (second.method, second.body) == ("PUT", b"")


def test_credentials_follow_a_redirect_on_the_same_origin(handle, target_server):
    headers = (("Authorization", "Bearer s3cret"),)

    poll(handle, redirect(target_server, "/echo"), headers=headers)

    assert target_server.requests[1].header("Authorization") == "Bearer s3cret"


def test_a_3xx_without_location_is_the_final_status(handle, target_server):
    outcome = poll(
        handle, target_server.url("/status/301"), expected_status=((301, 301),)
    )

    assert outcome.up is True
    assert outcome.status_code == 301


def test_it_refuses_a_url_that_is_not_http(handle):
    outcome = poll(handle, "ftp://files.invalid/report.csv")

    assert outcome.up is False
    assert outcome.error == "unsupported URL: ftp://files.invalid/report.csv"


@pytest.fixture
def tls_handle(poll_mode, tls_ca_bundle):
    handle = open_handle(poll_mode, ca_bundle=tls_ca_bundle)
    yield handle
    handle.close()


def test_a_redirect_from_https_to_http_is_refused(
    tls_handle, tls_target_server, target_server
):
    url = redirect(tls_target_server, target_server.url("/echo"))

    outcome = poll(tls_handle, url, headers=(("X-Api-Key", "k3y"),))

    assert outcome.up is False
    assert outcome.error == "redirect from https to http refused"
    assert target_server.count() == 0


def test_a_redirect_from_https_to_http_is_followed_when_the_project_allows_it(
    tls_handle, tls_target_server, target_server
):
    url = redirect(tls_target_server, target_server.url("/echo"))

    outcome = poll(tls_handle, url, allow_insecure_redirects=True)

    assert outcome.up is True
    assert target_server.count("/echo") == 1
