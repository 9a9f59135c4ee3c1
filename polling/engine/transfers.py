"""Many exchanges at once on one thread: a CurlMulti driven through epoll.

libcurl says which sockets to watch (its socket callback) and when it
wants to be called back (its timer callback); epoll waits on those
sockets with the GIL released. One thread can so keep hundreds of polls in
flight, and takes the GIL once for every batch of sockets that woke up
instead of once per poll. The multi handle keeps the connections and DNS
answers of all its exchanges, so every exchange may reuse them.

epoll rather than CurlMulti.select(): select() cannot watch a socket
numbered 1024 or above, and a poller with a few thousand polls in flight
has such sockets.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import math
import select
import time
from collections.abc import Callable
from typing import Generic, TypeVar

import pycurl

from polling.engine.transport import Exchange, Readable, Transport
from polling.engine.wakeup import Doorbell

Owner = TypeVar("Owner")

# The poller's own sockets' timers (a ping's next echo, a DNS query's
# timeout) are woken on a grid of this many seconds, not each at its own
# instant: at 833 ping checks a second, three echoes each, the worker
# otherwise woke about 1,700 times a second for one send each, and as
# often again for its reply. None of these times needs the precision:
# an echo goes out at most this late, a timeout ends at most this late.
SOCKET_TIMER_GRAIN_SECONDS = 0.01

_CURL_EVENTS = {
    pycurl.POLL_IN: select.EPOLLIN,
    pycurl.POLL_OUT: select.EPOLLOUT,
    pycurl.POLL_INOUT: select.EPOLLIN | select.EPOLLOUT,
}


class Transfers(Generic[Owner]):
    """The exchanges in flight on one thread, each with its owner.

    add() starts an exchange; wait() lets libcurl work for up to a given
    time and returns the exchanges that ended, as (owner, code, message)
    with libcurl's result code (0: no error) for Exchange.finish().
    Not thread-safe: one thread owns it.
    """

    def __init__(
        self,
        make_transport: Callable[[], Transport],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._make_transport = make_transport
        self._clock = clock
        self._spare: list[Transport] = []
        self._made: list[Transport] = []
        self._owners: dict[pycurl.Curl, Owner] = {}
        self._epoll = select.epoll()
        self._watched: set[int] = set()
        self._timer_at: float | None = None
        self._doorbell: Doorbell | None = None
        self.rung = False  # whether the last wait() was ended by the doorbell
        # Exchanges on the poller's own sockets (sockets.py): each with its
        # owner; the channels they wait on, by file descriptor; their
        # deadlines, soonest first (lazy removal: an ended one is skipped).
        self._socket_owners: dict[object, Owner] = {}
        self._channels: dict[int, tuple[object, int]] = {}
        self._deadlines: list[tuple[float, int, object]] = []
        self._order = itertools.count()
        self._ended_early: list[tuple[Owner, int, str]] = []
        # Waits for a socket to have something to read (transport.Readable):
        # a WebSocket's reply comes on a connection libcurl has handed over.
        self._waits: dict[int, tuple[Readable, Owner]] = {}
        # Handles left on the multi when their transfer ends: removing a
        # CONNECT_ONLY handle closes its connection, which the probe still
        # uses (a WebSocket's). Closing the handle removes it.
        self._left_attached: set[pycurl.Curl] = set()
        # libcurl transfers with a deadline of their own (a monotonic
        # `deadline`): libcurl drops its timeout while it awaits a WebSocket
        # upgrade.
        self._curl_deadlines: dict[pycurl.Curl, float] = {}
        self._multi = pycurl.CurlMulti()
        self._multi.setopt(pycurl.M_SOCKETFUNCTION, self._watch)
        self._multi.setopt(pycurl.M_TIMERFUNCTION, self._set_timer)

    def __len__(self) -> int:
        return len(self._owners) + len(self._socket_owners) + len(self._waits)

    def transport(self) -> Transport:
        """A transport not in use; give it back with release()."""
        if self._spare:
            return self._spare.pop()
        transport = self._make_transport()
        self._made.append(transport)
        return transport

    def release(self, transport: Transport) -> None:
        self._spare.append(transport)

    def add(self, exchange: Exchange, owner: Owner) -> None:
        """Start an exchange; wait() returns `owner` when it ends."""
        if isinstance(exchange, Readable):
            try:
                self._epoll.register(exchange.fd, select.EPOLLIN)
            except FileExistsError:  # libcurl watched it for the transfer
                self._epoll.modify(exchange.fd, select.EPOLLIN)
            self._waits[exchange.fd] = (exchange, owner)
            return
        if exchange.curl is None:
            self._add_socket_exchange(exchange, owner)
            return
        self._multi.add_handle(exchange.curl)
        if (deadline := getattr(exchange, "deadline", None)) is not None:
            self._curl_deadlines[exchange.curl] = deadline
        if getattr(exchange, "keeps_connection", False):
            self._left_attached.add(exchange.curl)
        self._owners[exchange.curl] = owner

    def listen(self, doorbell: Doorbell) -> None:
        """Let wait() end, too, when `doorbell` rings (a task arrived)."""
        self._doorbell = doorbell
        self._epoll.register(doorbell.fileno(), select.EPOLLIN)

    def wait(self, timeout: float | None) -> list[tuple[Owner, int, str]]:
        """Let libcurl work until a socket is ready, its timer fires, the
        doorbell rings or `timeout` seconds pass (None: no limit but
        those); returns the exchanges that ended."""
        socket_deadline = (
            on_timer_grid(self._deadlines[0][0]) if self._deadlines else None
        )
        for wake_at in (self._timer_at, socket_deadline, self._first_wait_deadline()):
            if wake_at is not None:
                left = max(wake_at - self._clock(), 0.0)
                timeout = left if timeout is None else min(timeout, left)
        if self._ended_early:
            timeout = 0.0
        action = self._multi.socket_action
        doorbell = self._doorbell
        self.rung = False
        ended, self._ended_early = self._ended_early, []
        readable = []
        for fd, mask in self._epoll.poll(-1 if timeout is None else timeout):
            if doorbell is not None and fd == doorbell.fileno():
                doorbell.clear()
                self.rung = True
                continue
            if fd in self._channels:
                self._channel_ready(fd, mask, ended)
                continue
            if fd in self._waits:
                readable.append(fd)
                continue
            action(fd, _curl_mask(mask))
        if self._timer_at is not None and self._clock() >= self._timer_at:
            self._timer_at = None
            action(pycurl.SOCKET_TIMEOUT, 0)
        self._expire(ended)
        ended.extend(self._ended())
        ended.extend(self._waits_ended(readable))
        return ended

    def close(self) -> list[Owner]:
        """Abandon the exchanges in flight and close every handle; returns
        the owners of the exchanges abandoned."""
        abandoned = list(self._owners.values()) + list(self._socket_owners.values())
        for exchange in list(self._socket_owners):
            self._end_socket_exchange(exchange)
        self._left_attached.clear()
        self._curl_deadlines.clear()
        for curl in list(self._owners):
            self._multi.remove_handle(curl)
        self._owners.clear()
        abandoned += [owner for _, owner in self._waits.values()]
        self._waits.clear()
        for transport in self._made:
            transport.close()
        self._multi.close()
        self._epoll.close()
        return abandoned

    # Exchanges on the poller's own sockets ----------------------------------

    def _add_socket_exchange(self, exchange, owner: Owner) -> None:
        self._socket_owners[exchange] = owner
        if exchange.done:
            self._ended_early.append(self._end_socket_exchange(exchange))
            return
        heapq.heappush(
            self._deadlines, (exchange.deadline, next(self._order), exchange)
        )
        channel = exchange.channel
        if channel is not None:
            self._watch_channel(channel)

    def _watch_channel(self, channel) -> None:
        fd = channel.fileno()
        events = channel.events
        watched = self._channels.get(fd)
        if watched is None:
            self._epoll.register(fd, events)
        elif watched[1] != events:
            self._epoll.modify(fd, events)
        self._channels[fd] = (channel, events)

    def _channel_ready(self, fd: int, mask: int, ended: list) -> None:
        channel = self._channels[fd][0]
        for exchange in channel.channel_ready(mask):
            if exchange in self._socket_owners:
                ended.append(self._end_socket_exchange(exchange))
        if fd in self._channels:
            self._watch_channel(channel)

    def _expire(self, ended: list) -> None:
        now = self._clock()
        deadlines = self._deadlines
        while deadlines and deadlines[0][0] <= now:
            exchange = heapq.heappop(deadlines)[2]
            if exchange in self._socket_owners:
                exchange.expire()
                if exchange.done:
                    ended.append(self._end_socket_exchange(exchange))
                else:  # it asked to be woken again
                    heapq.heappush(
                        deadlines, (exchange.deadline, next(self._order), exchange)
                    )

    def _end_socket_exchange(self, exchange) -> tuple[Owner, int, str]:
        owner = self._socket_owners.pop(exchange)
        channel = exchange.channel
        if channel is not None and not channel.shared:
            fd = channel.fileno()
            if self._channels.pop(fd, None) is not None:
                with contextlib.suppress(OSError):
                    self._epoll.unregister(fd)
            exchange.close()
        return owner, 0, ""

    def _ended(self) -> list[tuple[Owner, int, str]]:
        ended = []
        while True:
            queued, succeeded, failed = self._multi.info_read()
            for curl in succeeded:
                ended.append((self._remove(curl), 0, ""))
            for curl, code, message in failed:
                ended.append((self._remove(curl), code, message))
            if not queued:
                return ended

    def _first_wait_deadline(self) -> float | None:
        if not (self._waits or self._curl_deadlines):
            return None
        return min(
            [readable.deadline for readable, _ in self._waits.values()]
            + list(self._curl_deadlines.values())
        )

    def _waits_ended(self, readable: list[int]) -> list[tuple[Owner, int, str]]:
        """The waits whose socket is readable, then those past their deadline."""
        ended = [self._unwait(fd, 0, "") for fd in readable]
        if self._curl_deadlines:
            now = self._clock()
            for curl, deadline in list(self._curl_deadlines.items()):
                if now >= deadline:
                    self._left_attached.discard(curl)
                    owner = self._remove(curl)
                    ended.append((owner, pycurl.E_OPERATION_TIMEDOUT, ""))
        if self._waits:
            now = self._clock()
            for fd, (wait, _) in list(self._waits.items()):
                if now >= wait.deadline:
                    ended.append(self._unwait(fd, pycurl.E_OPERATION_TIMEDOUT, ""))
        return ended

    def _unwait(self, fd: int, code: int, message: str) -> tuple[Owner, int, str]:
        _, owner = self._waits.pop(fd)
        with contextlib.suppress(OSError):
            self._epoll.unregister(fd)
        return owner, code, message

    def _remove(self, curl: pycurl.Curl) -> Owner:
        self._curl_deadlines.pop(curl, None)
        if curl in self._left_attached:
            self._left_attached.discard(curl)
        else:
            self._multi.remove_handle(curl)
        return self._owners.pop(curl)

    def _watch(self, what: int, fd: int, multi, data) -> None:
        """libcurl's socket callback: watch fd for `what`, or stop."""
        if what == pycurl.POLL_REMOVE:
            if fd in self._watched:
                self._watched.discard(fd)
                # A closed socket has left the epoll set already.
                with contextlib.suppress(OSError):
                    self._epoll.unregister(fd)
            return
        events = _CURL_EVENTS[what]
        if fd in self._watched:
            self._epoll.modify(fd, events)
            return
        try:
            self._epoll.register(fd, events)
        except FileExistsError:
            # A number reused before libcurl said it was done with it.
            self._epoll.modify(fd, events)
        self._watched.add(fd)

    def _set_timer(self, timeout_ms: int) -> None:
        """libcurl's timer callback: call back in timeout_ms, or never."""
        self._timer_at = None if timeout_ms < 0 else self._clock() + timeout_ms / 1000


def _curl_mask(events: int) -> int:
    mask = 0
    if events & (select.EPOLLIN | select.EPOLLHUP):
        mask |= pycurl.CSELECT_IN
    if events & select.EPOLLOUT:
        mask |= pycurl.CSELECT_OUT
    if events & select.EPOLLERR:
        mask |= pycurl.CSELECT_ERR
    return mask


def on_timer_grid(moment: float) -> float:
    """The first point of the socket timers' grid at or after `moment`."""
    return math.ceil(moment / SOCKET_TIMER_GRAIN_SECONDS) * SOCKET_TIMER_GRAIN_SECONDS
