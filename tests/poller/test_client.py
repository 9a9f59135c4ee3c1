from __future__ import annotations

import logging
import socket
import time

import pytest

from polling import client as client_module
from polling.auth import control_token, token_matches
from polling.client import ControlClient


def test_it_talks_to_a_running_poller(running_poller):
    client = ControlClient()
    assert client.status().state == "running"
    assert client.reload() is True
    assert client.scale(3) is True
    assert running_poller.coordinator.status().max_concurrent_http == 3


def test_it_reports_an_unreachable_poller_without_raising(settings, caplog):
    settings.POLLER_CONTROL_URL = "http://127.0.0.1:9"
    client = ControlClient()
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="polling.client"):
        assert client.status() is None
        assert client.sync_project(1) is False
    assert time.monotonic() - started < 1.5
    assert [r.getMessage() for r in caplog.records] == [
        "Poller control GET /status failed: the poller is not running or not reachable",
        "Poller control POST /projects/1/sync failed: "
        "the poller is not running or not reachable",
    ]


def test_it_reports_a_rejected_token(running_poller, caplog):
    client = ControlClient(token="wrong")
    with caplog.at_level(logging.WARNING, logger="polling.client"):
        assert client.status() is None
    assert "HTTP 401" in caplog.records[0].getMessage()


def test_the_token_is_derived_from_the_secret_key_when_not_set(settings):
    settings.POLLER_CONTROL_TOKEN = ""
    settings.SECRET_KEY = "one"
    first = control_token()
    settings.SECRET_KEY = "two"
    assert control_token() != first
    assert len(first) == 64
    settings.POLLER_CONTROL_TOKEN = "explicit"
    assert control_token() == "explicit"


def test_token_matching_needs_the_bearer_scheme():
    assert token_matches("Bearer abc", "abc") is True
    assert token_matches("bearer abc", "abc") is True
    assert token_matches("Bearer abd", "abc") is False
    assert token_matches("abc", "abc") is False
    assert token_matches(None, "abc") is False


@pytest.fixture
def proxy_listener(monkeypatch):
    """A listening socket named as the proxy in every proxy variable, and
    the client's cached HTTP client rebuilt so that it reads them."""
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = f"http://127.0.0.1:{listener.getsockname()[1]}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, proxy)
        monkeypatch.setenv(name.lower(), proxy)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    client_module._http.cache_clear()
    yield listener
    client_module._http.cache_clear()
    listener.close()


def test_it_never_sends_its_token_through_a_proxy_from_the_environment(
    running_poller, proxy_listener
):
    assert ControlClient().status().state == "running"

    proxy_listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        proxy_listener.accept()  # no connection came
