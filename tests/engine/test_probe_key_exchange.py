"""Which key-exchange groups the probe offers in its TLS handshake: one key
share, X25519, and the classic groups a server may choose instead. Real
servers on 127.0.0.1."""

from __future__ import annotations

import socket
import ssl
import struct
import threading
from datetime import UTC, datetime

import pytest

from polling.engine.types import Outcome, Target, Task
from tests.support.executor_probe import open_handle, run_poll
from tests.support.target_server import TargetServer

X25519 = 0x001D
X25519_MLKEM768 = 0x11EC
SECP256R1 = 0x0017
SECP384R1 = 0x0018
_SUPPORTED_GROUPS = 10
_KEY_SHARE = 51


def poll(handle, url: str) -> Outcome:
    return run_poll(handle, Task(Target(project_id=3, url=url), datetime.now(UTC)))


@pytest.fixture
def trusting_handle(poll_mode, tls_ca_bundle):
    handle = open_handle(poll_mode, ca_bundle=tls_ca_bundle)
    yield handle
    handle.close()


def test_the_client_hello_carries_one_key_share_x25519(trusting_handle):
    with HelloCatcher() as catcher:
        outcome = poll(trusting_handle, catcher.url)

    groups, shares = _groups_and_shares(catcher.hello)
    assert outcome.up is False
    assert shares == [X25519]
    assert groups[0] == X25519
    assert {SECP256R1, SECP384R1} <= set(groups)
    assert X25519_MLKEM768 not in groups


@pytest.mark.parametrize(
    ("version", "curve"),
    [
        (ssl.TLSVersion.TLSv1_2, "prime256v1"),
        (ssl.TLSVersion.TLSv1_2, "secp384r1"),
        # TLS 1.3 without X25519: the server asks again for a P-384 share.
        (ssl.TLSVersion.TLSv1_3, "secp384r1"),
    ],
)
def test_it_agrees_on_another_group_when_the_server_asks(
    trusting_handle, tls_ca, version, curve
):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = context.maximum_version = version
    context.set_ecdh_curve(curve)
    tls_ca.issue_cert("127.0.0.1").configure_cert(context)

    with TargetServer(ssl_context=context) as server:
        outcome = poll(trusting_handle, server.url("/ok"))

    assert (outcome.up, outcome.error) == (True, "")


class HelloCatcher:
    """A TCP server on 127.0.0.1 that reads one TLS ClientHello record and
    hangs up."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._catch, daemon=True)
        self.hello = b""

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self._listener.getsockname()[1]}/"

    def __enter__(self) -> HelloCatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._thread.join(10)
        self._listener.close()

    def _catch(self) -> None:
        connection, _ = self._listener.accept()
        with connection:
            record = b""
            while len(record) < 5 or len(record) < 5 + _u16(record, 3):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                record += chunk
            self.hello = record


def _groups_and_shares(record: bytes) -> tuple[list[int], list[int]]:
    """The supported_groups and the groups of the key_share entries of a
    ClientHello record (RFC 8446, section 4.1.2)."""
    assert record[0] == 0x16, "not a handshake record"
    assert record[5] == 0x01, "not a ClientHello"
    at = 5 + 4 + 2 + 32  # record and handshake headers, version, random
    at += 1 + record[at]  # session id
    at += 2 + _u16(record, at)  # cipher suites
    at += 1 + record[at]  # compression methods
    end = at + 2 + _u16(record, at)
    at += 2
    groups, shares = [], []
    while at < end:
        kind, length = struct.unpack_from("!HH", record, at)
        data = record[at + 4 : at + 4 + length]
        at += 4 + length
        if kind == _SUPPORTED_GROUPS:
            groups = [_u16(data, i) for i in range(2, 2 + _u16(data, 0), 2)]
        elif kind == _KEY_SHARE:
            entry = 2
            while entry < len(data):
                shares.append(_u16(data, entry))
                entry += 4 + _u16(data, entry + 2)
    return groups, shares


def _u16(data: bytes, at: int) -> int:
    return struct.unpack_from("!H", data, at)[0]
