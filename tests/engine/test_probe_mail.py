"""Mail server checks (SMTP, IMAP, POP3; STARTTLS and TLS from the start)
against real servers on 127.0.0.1, each run alone and on the executor's
loop: the greeting as the message, the certificate's expiry, and every
failure's reason as a person reads it."""

from __future__ import annotations

import ssl
from datetime import UTC, datetime, timedelta

import pytest

from polling.engine.types import Target, Task
from tests.support.certificates import write_self_signed
from tests.support.executor_probe import open_handle, run_poll
from tests.support.mail_servers import (
    PASSWORD,
    USER,
    MailboxServer,
    SMTPTestServer,
)
from tests.support.silent_server import SilentServer


def server_context(tls_ca, **issue) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert("127.0.0.1", "localhost", **issue).configure_cert(context)
    return context


@pytest.fixture
def tls(tls_ca) -> ssl.SSLContext:
    return server_context(tls_ca)


def poll(handle, url: str, *, timeout: float = 5, networks=None):
    task = Task(
        target=Target(project_id=1, url=url, timeout_seconds=timeout),
        due_at=datetime.now(UTC),
    )
    return run_poll(handle, task)


@pytest.fixture
def smtp_starttls(tls):
    server = SMTPTestServer(tls=tls, login=True)
    server.start()
    yield server
    server.stop()


def test_smtp_with_starttls_is_up_greeting_and_certificate_read(handle, smtp_starttls):
    outcome = poll(handle, f"smtp://127.0.0.1:{smtp_starttls.port}?starttls=required")

    assert outcome.error == ""
    assert outcome.up
    assert outcome.message.startswith("220 ")
    assert outcome.tls_expires_at is not None
    assert outcome.tls_ms is None or outcome.tls_ms >= 0


def test_smtp_login_that_works_is_up(handle, smtp_starttls):
    url = f"smtp://{USER}:{PASSWORD}@127.0.0.1:{smtp_starttls.port}?starttls=required"

    assert poll(handle, url).error == ""


def test_smtp_login_refused_is_down_without_the_password(handle, smtp_starttls):
    url = f"smtp://{USER}:wrong-pass@127.0.0.1:{smtp_starttls.port}?starttls=required"

    outcome = poll(handle, url)

    assert outcome.error == (
        "SMTP login failed: 535 5.7.8 Authentication credentials invalid"
    )
    assert "wrong-pass" not in outcome.error


def test_starttls_required_of_a_server_without_it_is_down(handle):
    server = SMTPTestServer()
    server.start()
    try:
        required = poll(handle, f"smtp://127.0.0.1:{server.port}?starttls=required")
        optional = poll(handle, f"smtp://127.0.0.1:{server.port}")
    finally:
        server.stop()

    assert required.error == "SMTP: the server does not offer STARTTLS"
    assert optional.up
    assert optional.tls_expires_at is None


def test_smtps_is_tls_from_the_start(handle, tls):
    server = SMTPTestServer(tls=tls, implicit=True)
    server.start()
    try:
        outcome = poll(handle, f"smtps://127.0.0.1:{server.port}")
    finally:
        server.stop()

    assert outcome.error == ""
    assert outcome.tls_expires_at is not None
    assert outcome.message.startswith("220 ")


def test_a_self_signed_certificate_fails_verification(handle, tmp_path):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(write_self_signed(tmp_path / "self.pem"))
    server = SMTPTestServer(tls=context, implicit=True)
    server.start()
    try:
        outcome = poll(handle, f"smtps://127.0.0.1:{server.port}")
    finally:
        server.stop()

    assert outcome.error == "TLS certificate verify failed: self-signed certificate"


def test_an_expired_certificate_fails_verification(handle, tls_ca):
    expired = server_context(
        tls_ca,
        not_before=datetime.now(UTC) - timedelta(days=30),
        not_after=datetime.now(UTC) - timedelta(days=1),
    )
    server = SMTPTestServer(tls=expired)
    server.start()
    try:
        outcome = poll(handle, f"smtp://127.0.0.1:{server.port}?starttls=required")
    finally:
        server.stop()

    assert outcome.error == "TLS certificate verify failed: certificate has expired"


def test_a_server_that_accepts_and_never_speaks_times_out(handle):
    with SilentServer() as silent:
        outcome = poll(handle, f"smtp://127.0.0.1:{silent.port}", timeout=1)

    assert outcome.error == "timed out after 1 s"


@pytest.mark.parametrize("protocol", ["imap", "pop3"])
def test_imap_and_pop3_with_starttls_and_login(handle, tls, protocol):
    with MailboxServer(protocol, tls=tls) as server:
        plain = poll(handle, f"{protocol}://127.0.0.1:{server.port}?starttls=required")
        login = poll(
            handle,
            f"{protocol}://{USER}:{PASSWORD}@127.0.0.1:{server.port}?starttls=required",
        )
        refused = poll(
            handle, f"{protocol}://{USER}:wrong-pass@127.0.0.1:{server.port}"
        )

    assert plain.error == ""
    assert plain.tls_expires_at is not None
    assert plain.message in ("* OK IMAP4rev1 ready", "+OK POP3 ready")
    assert login.error == ""
    assert (
        refused.error
        == {
            "imap": "IMAP login failed: NO [AUTHENTICATIONFAILED] Invalid credentials",
            "pop3": "POP3 login failed: -ERR [AUTH] Invalid credentials",
        }[protocol]
    )


@pytest.mark.parametrize("protocol", ["imaps", "pop3s"])
def test_imaps_and_pop3s_are_tls_from_the_start(handle, tls, protocol):
    with MailboxServer(protocol.removesuffix("s"), tls=tls, implicit=True) as server:
        outcome = poll(handle, f"{protocol}://127.0.0.1:{server.port}")

    assert outcome.error == ""
    assert outcome.tls_expires_at is not None


def test_an_untrusted_team_never_reaches_a_blocked_network(poll_mode):
    handle = open_handle(poll_mode, blocked_networks=["127.0.0.0/8"])
    try:
        with SilentServer() as silent:
            outcome = poll(handle, f"smtp://127.0.0.1:{silent.port}", timeout=2)
            accepted = silent.accepted
    finally:
        if hasattr(handle, "close"):
            handle.close()

    assert outcome.error == "127.0.0.1 is in a blocked network (POLL_BLOCKED_NETWORKS)"
    assert accepted == 0
