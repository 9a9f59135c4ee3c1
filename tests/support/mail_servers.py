"""Real mail servers on 127.0.0.1 for the mail checks: aiosmtpd for SMTP
(STARTTLS or TLS from the start, with a login), and a small server
speaking enough IMAP and POP3 (greeting, capabilities, STARTTLS/STLS,
login, NOOP, logout) for a monitor's conversation."""

from __future__ import annotations

import socket
import socketserver
import ssl
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

USER, PASSWORD = "monitor", "right-password"


class _Quiet:
    async def handle_DATA(self, server, session, envelope):
        return "250 OK"


def _authenticate(server, session, envelope, mechanism, auth_data):
    good = isinstance(auth_data, LoginPassword) and (
        auth_data.login.decode(),
        auth_data.password.decode(),
    ) == (USER, PASSWORD)
    # handled=False: aiosmtpd answers a failure itself (535).
    return AuthResult(success=good, handled=False)


class SMTPTestServer(Controller):
    """aiosmtpd on a free port. `tls`: an SSLContext offered by STARTTLS,
    or used from the start when `implicit`."""

    def __init__(
        self,
        *,
        tls: ssl.SSLContext | None = None,
        implicit: bool = False,
        login: bool = False,
    ) -> None:
        options: dict = {}
        if tls is not None and implicit:
            options["ssl_context"] = tls
        elif tls is not None:
            options["tls_context"] = tls
            options["require_starttls"] = True
        if login:
            options.update(authenticator=_authenticate, auth_require_tls=False)
        super().__init__(_Quiet(), hostname="127.0.0.1", port=0, **options)

    def _trigger_server(self) -> None:
        self.port = self.server.sockets[0].getsockname()[1]
        # Its readiness check speaks plain SMTP; with TLS from the start it
        # must shake hands first, without verifying our test certificate.
        if self.ssl_context:
            with socket.create_connection(("127.0.0.1", self.port)) as raw:
                unverified = ssl.create_default_context()
                unverified.check_hostname = False
                unverified.verify_mode = ssl.CERT_NONE
                with unverified.wrap_socket(raw) as sock:
                    sock.recv(1024)
            return
        super()._trigger_server()


class _Conversation(socketserver.StreamRequestHandler):
    server: MailboxServer

    def handle(self) -> None:
        self.tls = self.server.implicit
        if self.tls:
            self._wrap()
        protocol = self.server.protocol
        self.say("* OK IMAP4rev1 ready" if protocol == "imap" else "+OK POP3 ready")
        while line := self.rfile.readline():
            words = line.decode().strip().split(" ")
            if not (protocol == "imap" and self._imap(words)) and not (
                protocol == "pop3" and self._pop3(words)
            ):
                return

    def say(self, *lines: str) -> None:
        self.wfile.write("".join(f"{line}\r\n" for line in lines).encode())
        self.wfile.flush()

    def _wrap(self) -> None:
        self.connection = self.server.tls.wrap_socket(self.connection, server_side=True)
        self.rfile = self.connection.makefile("rb")
        self.wfile = self.connection.makefile("wb")
        self.tls = True

    def _imap(self, words: list[str]) -> bool:
        tag, command = words[0], words[1].upper() if len(words) > 1 else ""
        if command == "CAPABILITY":
            starttls = " STARTTLS" if self.server.tls and not self.tls else ""
            self.say(f"* CAPABILITY IMAP4rev1{starttls}", f"{tag} OK done")
        elif command == "STARTTLS" and self.server.tls:
            self.say(f"{tag} OK begin TLS")
            self._wrap()
        elif command == "LOGIN":
            given = [word.strip('"') for word in words[2:4]]
            if given == [USER, PASSWORD]:
                self.say(f"{tag} OK logged in")
            else:
                self.say(f"{tag} NO [AUTHENTICATIONFAILED] Invalid credentials")
        elif command == "LOGOUT":
            self.say("* BYE", f"{tag} OK bye")
            return False
        else:
            self.say(f"{tag} OK {command or 'nothing'} done")
        return True

    def _pop3(self, words: list[str]) -> bool:
        command = words[0].upper()
        if command == "CAPA":
            stls = ["STLS"] if self.server.tls and not self.tls else []
            self.say("+OK", *stls, "USER", ".")
        elif command == "STLS" and self.server.tls:
            self.say("+OK begin TLS")
            self._wrap()
        elif command == "USER":
            self.user = words[1] if len(words) > 1 else ""
            self.say("+OK")
        elif command == "PASS":
            if (self.user, " ".join(words[1:])) == (USER, PASSWORD):
                self.say("+OK logged in")
            else:
                self.say("-ERR [AUTH] Invalid credentials")
        elif command == "QUIT":
            self.say("+OK bye")
            return False
        else:
            self.say("+OK")
        return True


class MailboxServer(socketserver.ThreadingTCPServer):
    """IMAP or POP3 (`protocol`) on a free port; `tls` offered by
    STARTTLS/STLS, or used from the start when `implicit`."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        protocol: str,
        *,
        tls: ssl.SSLContext | None = None,
        implicit: bool = False,
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Conversation)
        self.protocol = protocol
        self.tls = tls
        self.implicit = implicit
        self.port = self.server_address[1]
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def __enter__(self) -> MailboxServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()
