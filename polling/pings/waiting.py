"""How a request waits for its ping's verdict: record() on a thread (the
Django view), record_async() on an event loop (the fast path); and the
web process's one writer they hand pings to.

A ping that waited PING_QUEUE_SECONDS without being taken into a batch is
withdrawn and answered 503, so it is certainly not stored; one already in
a batch is waited for however long the batch takes, since its answer is
the truth about it.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading

from django.conf import settings

from polling.pings.answers import Verdict
from polling.pings.rules import Ping
from polling.pings.writer import Handover, Overloaded, PingWriter

_writer: PingWriter | None = None
_writer_pid = 0
_writer_lock = threading.Lock()


def shared_writer() -> PingWriter:
    """This process's writer, started on first use (in each web worker,
    after the fork), and again should its thread ever have died."""
    global _writer, _writer_pid
    with _writer_lock:
        if _writer is None or _writer_pid != os.getpid() or not _writer.alive():
            from polling.pings.batch import PingStore

            store = PingStore()
            _writer = PingWriter(
                store.save, queue_size=settings.PING_QUEUE_SIZE, close=store.close
            )
            _writer_pid = os.getpid()
        return _writer


def stop_shared_writer() -> None:
    """Store every accepted ping; the next ping starts a new writer."""
    global _writer
    with _writer_lock:
        writer, _writer = _writer, None
    if writer is not None and _writer_pid == os.getpid():
        writer.stop()


atexit.register(lambda: stop_shared_writer())


def record(ping: Ping) -> Verdict:
    """Hand the ping to the writer and wait for its verdict (a thread)."""
    writer = shared_writer()
    handover = Handover(ping, concurrent.futures.Future())
    try:
        writer.hand_over(handover)
    except Overloaded:
        return Verdict.OVERLOADED
    try:
        return handover.future.result(timeout=settings.PING_QUEUE_SECONDS)
    except concurrent.futures.TimeoutError:
        if writer.withdraw(handover):
            return Verdict.OVERLOADED
        return handover.future.result()


async def record_async(ping: Ping) -> Verdict:
    """record() for a coroutine on an event loop."""
    writer = shared_writer()
    loop = asyncio.get_running_loop()
    handover = Handover(ping, loop.create_future(), loop)
    try:
        writer.hand_over(handover)
    except Overloaded:
        return Verdict.OVERLOADED
    timer = loop.call_later(settings.PING_QUEUE_SECONDS, _give_up, writer, handover)
    try:
        return await handover.future
    finally:
        timer.cancel()


def _give_up(writer: PingWriter, handover: Handover) -> None:
    if writer.withdraw(handover) and not handover.future.done():
        handover.future.set_result(Verdict.OVERLOADED)
