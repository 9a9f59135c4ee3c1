"""A real SMTP server on 127.0.0.1 (aiosmtpd) that keeps what it receives."""

from __future__ import annotations

import email
from email.message import Message

from aiosmtpd.controller import Controller


class _Handler:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.envelopes: list = []
        self.refuse_recipients_with: str | None = None

    async def handle_RCPT(self, server, session, envelope, address, options):
        if self.refuse_recipients_with:
            return self.refuse_recipients_with
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 Message accepted"


class SMTPServer(Controller):
    """aiosmtpd's Controller on a free port: it binds port 0 and learns the
    port before its own readiness check connects."""

    def __init__(self) -> None:
        self.handler = _Handler()
        super().__init__(self.handler, hostname="127.0.0.1", port=0)

    def _trigger_server(self) -> None:
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()

    @property
    def messages(self) -> list[Message]:
        return self.handler.messages
