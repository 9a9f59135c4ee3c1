"""One DNS query on a socket of the poller's own, the engine's epoll loop
waiting (sockets.py); the messages in wire form (dns_wire.py). Over UDP,
or over TCP (RFC 7766: a two-byte length before each message), which a
caller uses after a truncated UDP answer."""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

from polling.engine.dns_wire import BadReply, Question, Reply, new_id, read_reply
from polling.engine.sockets import (
    IN,
    OUT,
    SocketExchange,
    connect_result,
    datagram_socket,
    errno_reason,
    start_connect,
    stream_socket,
)

MAX_UDP_MESSAGE = 65535


@dataclass(frozen=True, slots=True)
class Answer:
    reply: Reply
    elapsed_ms: int


def family_of(address: str) -> int:
    return socket.AF_INET6 if ":" in address else socket.AF_INET


class DnsQuery(SocketExchange):
    """Ask `question` of (address, port) and wait for its answer; finish()
    returns an Answer. Answers that do not match the query (another id,
    another question) are ignored, as a spoofing guard."""

    def __init__(
        self,
        question: Question,
        address: str,
        port: int,
        *,
        timeout_seconds: float,
        shown_timeout: float | None = None,
        tcp: bool = False,
    ) -> None:
        family = family_of(address)
        sock = stream_socket(family) if tcp else datagram_socket(family)
        super().__init__(
            sock, timeout_seconds=timeout_seconds, shown_timeout=shown_timeout
        )
        self.question = question
        self.query_id = new_id()
        self.tcp = tcp
        self._buffer = b""
        wire = question.query(self.query_id)
        try:
            if tcp:
                self._wire = struct.pack("!H", len(wire)) + wire
                start_connect(sock, (address, port))
                self.events = OUT
            else:
                sock.connect((address, port))
                sock.send(wire)
        except OSError as error:
            self.fail(errno_reason(error))

    def ready(self, mask: int) -> bool:
        if self.events == OUT:
            connect_result(self.sock)
            self.sock.send(self._wire)
            self.events = IN
            return False
        if self.tcp:
            return self._read_stream()
        return self._read_datagram()

    def _read_datagram(self) -> bool:
        data = self.sock.recv(MAX_UDP_MESSAGE)
        return self._answer(data)

    def _read_stream(self) -> bool:
        chunk = self.sock.recv(MAX_UDP_MESSAGE)
        if not chunk:
            return self.fail("the DNS server closed the connection without an answer")
        self._buffer += chunk
        if len(self._buffer) < 2:
            return False
        (length,) = struct.unpack("!H", self._buffer[:2])
        if len(self._buffer) < 2 + length:
            return False
        return self._answer(self._buffer[2 : 2 + length])

    def _answer(self, data: bytes) -> bool:
        try:
            reply = read_reply(data, self.query_id, self.question)
        except BadReply:
            return self.fail("invalid DNS answer")
        if reply is None:
            return False
        self.result = Answer(reply, self.elapsed_ms)
        self.done = True
        return True
