from __future__ import annotations

import socket

import pytest

from django.db import connection

from polling.control import ControlServer
from polling.run import parts
from polling.run.options import CannotRun
from polling.sqlite_lock import lock_for
from polling.wiring import config_from_settings, database_coordinator


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.3", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("monitor.example", False),
    ],
)
def test_only_loopback_hosts_count_as_loopback(host, loopback):
    assert parts.is_loopback(host) is loopback


def test_the_control_url_names_the_host_it_is_bound_to():
    assert parts.control_url("127.0.0.1:0", 4321) == "http://127.0.0.1:4321"
    assert parts.control_url("[::1]:9000", 9000) == "http://[::1]:9000"
    fqdn = socket.getfqdn()
    assert parts.control_url("0.0.0.0:9000", 9000) == f"http://{fqdn}:9000"


def test_a_control_endpoint_beyond_loopback_needs_a_token_of_its_own(settings):
    settings.POLLER_CONTROL_BIND = "0.0.0.0:9000"
    settings.POLLER_CONTROL_TOKEN = ""
    coordinator = database_coordinator(config_from_settings())
    with pytest.raises(CannotRun, match="Refusing to serve the control endpoint"):
        parts.control_server(coordinator)
    settings.POLLER_CONTROL_TOKEN = "t" * 40
    assert isinstance(parts.control_server(coordinator), ControlServer)


def test_a_short_token_beyond_loopback_is_one_clear_line(settings):
    settings.POLLER_CONTROL_BIND = "0.0.0.0:9000"
    settings.POLLER_CONTROL_TOKEN = "t" * 31
    coordinator = database_coordinator(config_from_settings())

    with pytest.raises(CannotRun, match="at least 32"):
        parts.control_server(coordinator)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite only")
def test_a_held_sqlite_lock_is_one_clear_line():
    held = lock_for(connection.settings_dict)
    held.acquire()
    try:
        with pytest.raises(CannotRun, match=r"Another poller \(pid \d+\)"):
            parts.single_poller_lock()
    finally:
        held.release()
