"""ICMP echo for the ping checks: one socket per address family for all
the pings of a worker thread, in its epoll loop (transfers.py), replies
matched to their poll by identifier and sequence number.

As root the sockets are raw (they see every ICMP packet of the host, so
each Pinger has an identifier of its own and ignores the rest); without
root, datagram ICMP sockets where net.ipv4.ping_group_range lets this
process's group use them (the kernel then sets the identifier and hands
each socket only its own replies). Neither: every ping check fails with
the reason, which the poller also says when it starts (icmp_mode()).
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import random
import socket
import struct
import time
from dataclasses import dataclass

from polling.engine.sockets import IN, SocketExchange

ECHO_REQUEST = {socket.AF_INET: 8, socket.AF_INET6: 128}
ECHO_REPLY = {socket.AF_INET: 0, socket.AF_INET6: 129}
_PROTOCOL = {
    socket.AF_INET: socket.IPPROTO_ICMP,
    socket.AF_INET6: socket.IPPROTO_ICMPV6,
}
_HEADER = struct.Struct("!BBHHH")
PAYLOAD = b"uptime-monitor.."  # 16 bytes, any content
# The most echoes in flight per Pinger: sequence numbers wrap at 65,536.
MAX_IN_FLIGHT = 60000
# A raw socket is handed a copy of every ICMP packet the host receives:
# the echo requests sent over loopback, other processes' pings, every
# other worker's replies. The kernel drops all but our replies before
# they are queued (ICMP_FILTER, ICMP6_FILTER, and for IPv4 a socket
# filter on the identifier): a worker reads only its own replies.
SOL_RAW = 255
ICMP_FILTER = 1
ICMP6_FILTER = 1
SO_ATTACH_FILTER = 26
SO_RCVBUFFORCE = 33
# Room for the replies of a loop that wakes late: 1 MiB, a few thousand.
RECEIVE_BUFFER_BYTES = 1 << 20


def icmp_mode() -> str:
    """How this process pings, or why it cannot, in a sentence."""
    for kind, name in ((socket.SOCK_RAW, "raw"), (socket.SOCK_DGRAM, "datagram")):
        try:
            socket.socket(socket.AF_INET, kind, socket.IPPROTO_ICMP).close()
        except OSError:
            continue
        return f"ICMP checks use {name} ICMP sockets"
    return (
        "ICMP checks cannot ping: raw ICMP sockets need root (or CAP_NET_RAW) "
        "and datagram ones a group in net.ipv4.ping_group_range "
        f"({_ping_group_range()})"
    )


def _ping_group_range() -> str:
    try:
        with open("/proc/sys/net/ipv4/ping_group_range") as value:
            return "now " + " ".join(value.read().split())
    except OSError:
        return "unreadable"


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def _words_sum(data: bytes) -> int:
    return sum(struct.unpack(f"!{len(data) // 2}H", data))


def _only_our_replies(sock: socket.socket, family: int, identifier: int) -> None:
    """Have the kernel queue on a raw socket only the echo replies with our
    identifier (IPv6: every echo reply), in a larger buffer. Each filter
    is an economy: without it, _reply() still sorts the packets."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER_BYTES)
    if family == socket.AF_INET6:
        blocked = [0xFFFFFFFF] * 8  # a set bit blocks its type
        reply = ECHO_REPLY[family]
        blocked[reply >> 5] &= ~(1 << (reply & 31))
        with contextlib.suppress(OSError):
            sock.setsockopt(
                socket.IPPROTO_ICMPV6, ICMP6_FILTER, struct.pack("8I", *blocked)
            )
        return
    with contextlib.suppress(OSError):
        mask = 0xFFFFFFFF & ~(1 << ECHO_REPLY[family])  # a set bit drops its type
        sock.setsockopt(SOL_RAW, ICMP_FILTER, struct.pack("I", mask))
    # Classic BPF over the IPv4 packet: X = the IP header's length; accept
    # when the 16 bits at X + 4 (the ICMP identifier) are ours.
    program = [
        (0xB1, 0, 0, 0),  # ldxb 4*([0]&0xf)
        (0x48, 0, 0, 4),  # ldh [x+4]
        (0x15, 0, 1, identifier),  # jeq #identifier, accept, drop
        (0x06, 0, 0, 0xFFFF),  # ret #65535: accept
        (0x06, 0, 0, 0),  # ret #0: drop
    ]
    code = b"".join(struct.pack("HBBI", *line) for line in program)
    buffer = ctypes.create_string_buffer(code)
    fprog = struct.pack("HL", len(program), ctypes.addressof(buffer))
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)


@dataclass(slots=True)
class Rtts:
    """What a round of echoes found: round trips in microseconds."""

    sent: int
    round_trips_us: list[int]

    @property
    def received(self) -> int:
        return len(self.round_trips_us)

    @property
    def loss_percent(self) -> int:
        return round(100 * (self.sent - self.received) / self.sent) if self.sent else 0


class Pingers:
    """The Pinger of each address family, opened when first needed; shared
    by the transports of one worker thread."""

    def __init__(self) -> None:
        self._by_family: dict[int, Pinger] = {}

    def for_family(self, family: int) -> Pinger:
        """Raises OSError when this process may not ping."""
        pinger = self._by_family.get(family)
        if pinger is None:
            pinger = self._by_family[family] = Pinger(family)
        return pinger

    def close(self) -> None:
        for pinger in self._by_family.values():
            pinger.close()
        self._by_family.clear()


class Pinger:
    """One ICMP socket and the echoes in flight on it: a channel many
    EchoRounds wait on (`shared`: it outlives each of them)."""

    shared = True
    events = IN

    def __init__(self, family: int) -> None:
        self.family = family
        try:
            self.sock = socket.socket(family, socket.SOCK_RAW, _PROTOCOL[family])
            self.raw = True
        except PermissionError:
            self.sock = socket.socket(family, socket.SOCK_DGRAM, _PROTOCOL[family])
            self.raw = False
        self.sock.setblocking(False)
        self.identifier = random.getrandbits(16) if self.raw else 0
        self._sequence = itertools.count(random.getrandbits(16))
        self._waiting: dict[int, EchoRound] = {}  # sequence -> its round
        # The checksum of every word of a request but its sequence number:
        # IPv4 raw requests carry one we compute (the kernel fills it in
        # for the others).
        self._partial_sum = (
            _words_sum(_HEADER.pack(ECHO_REQUEST[family], 0, 0, self.identifier, 0))
            + _words_sum(PAYLOAD)
            if self.raw and family == socket.AF_INET
            else None
        )
        if self.raw:
            _only_our_replies(self.sock, family, self.identifier)

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, address: str, round_: EchoRound) -> int | None:
        """Send one echo request for `round_`; its sequence number, or None
        when it could not be sent."""
        if len(self._waiting) >= MAX_IN_FLIGHT:
            return None
        sequence = next(self._sequence) & 0xFFFF
        packet = self._packet(sequence)
        try:
            self.sock.sendto(packet, (address, 0))
        except OSError as error:
            round_.send_error = error
            return None
        self._waiting[sequence] = round_
        return sequence

    def forget(self, sequences) -> None:
        for sequence in sequences:
            self._waiting.pop(sequence, None)

    def channel_ready(self, mask: int) -> list[EchoRound]:
        """Read every packet waiting; the rounds that are complete."""
        ended = []
        while True:
            try:
                data = self.sock.recv(2048)
            except (BlockingIOError, InterruptedError):
                return ended
            except OSError:
                continue  # an ICMP error queued on the socket: read on
            reply = self._reply(data)
            if reply is None:
                continue
            round_ = self._waiting.pop(reply, None)
            if round_ is not None and round_.answered(reply):
                ended.append(round_)

    def close(self) -> None:
        self.sock.close()

    def _packet(self, sequence: int) -> bytes:
        request = ECHO_REQUEST[self.family]
        if self._partial_sum is None:  # the kernel fills the checksum in
            return _HEADER.pack(request, 0, 0, self.identifier, sequence) + PAYLOAD
        total = self._partial_sum + sequence
        total = (total >> 16) + (total & 0xFFFF)
        total += total >> 16
        return (
            _HEADER.pack(request, 0, ~total & 0xFFFF, self.identifier, sequence)
            + PAYLOAD
        )

    def _reply(self, data: bytes) -> int | None:
        """The sequence number of an echo reply of ours, else None."""
        if self.raw and self.family == socket.AF_INET:
            data = data[(data[0] & 0x0F) * 4 :] if data else data
        if len(data) < _HEADER.size:
            return None
        kind, _, _, identifier, sequence = _HEADER.unpack_from(data)
        if kind != ECHO_REPLY[self.family]:
            return None
        if self.raw and identifier != self.identifier:
            return None  # another process's ping, or another worker's
        return sequence


class EchoRound(SocketExchange):
    """`count` echo requests to `address`, one every `spacing` seconds,
    and the replies until `timeout_seconds`; finish() returns Rtts. Done
    early once every request is answered."""

    def __init__(
        self,
        pinger: Pinger,
        address: str,
        *,
        count: int,
        spacing: float,
        timeout_seconds: float,
    ) -> None:
        super().__init__(None, timeout_seconds=timeout_seconds)
        self.pinger = pinger
        self.address = address
        self.count = count
        self.spacing = spacing
        self.final_deadline = self.deadline
        self.send_error: OSError | None = None
        self._sent_at: dict[int, float] = {}
        self._round_trips: list[int] = []
        self._send_next()

    @property
    def channel(self) -> Pinger:
        return self.pinger

    def fileno(self) -> int:
        return self.pinger.fileno()

    def answered(self, sequence: int) -> bool:
        sent = self._sent_at.get(sequence)
        if sent is None or self.done:
            return False
        self._round_trips.append(round((time.monotonic() - sent) * 1_000_000))
        if len(self._sent_at) == self.count and len(self._round_trips) == self.count:
            self._complete()
            return True
        return False

    def expire(self) -> None:
        """Its wake-up time: send the next request, or end the round."""
        if len(self._sent_at) < self.count and time.monotonic() < self.final_deadline:
            self._send_next()
            return
        self._complete()

    def close(self) -> None:
        self.pinger.forget(self._sent_at)

    def _send_next(self) -> None:
        sequence = self.pinger.send(self.address, self)
        if sequence is None and not self._sent_at:
            error = self.send_error
            why = error.strerror if error else "too many pings in flight"
            self.fail(f"cannot send a ping: {why}")
            return
        if sequence is not None:
            self._sent_at[sequence] = time.monotonic()
        if len(self._sent_at) < self.count:
            self.deadline = min(time.monotonic() + self.spacing, self.final_deadline)
        else:
            self.deadline = self.final_deadline

    def _complete(self) -> None:
        self.result = Rtts(len(self._sent_at), sorted(self._round_trips))
        self.done = True
