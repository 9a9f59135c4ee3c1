"""The agent's thread that sends its buffered results to the server,
oldest first, and removes each batch once the server has stored it.

While the server cannot be reached it waits (backing off to
MAX_WAIT_SECONDS) and the results wait on disk; a batch the server
refuses for its data is sent one result at a time, so one bad result is
given up (logged, counted) and the rest go through. At stop, it sends
what the buffer holds until the deadline; what is left stays on disk
for the next start.
"""

from __future__ import annotations

import json
import logging
import threading
import time

from polling.agents.buffer import ResultBuffer
from polling.agents.client import AgentClient, AgentRevoked, Rejected, ServerUnavailable

logger = logging.getLogger(__name__)

# The server takes at most 2,000 outcomes a call (polling/agents/views.py)
# and Django 2.5 MB of body; fewer, larger calls cost it less per result.
BATCH_SIZE = 2000
BATCH_MAX_BYTES = 2_000_000
IDLE_SECONDS = 0.5
FIRST_WAIT_SECONDS = 0.5
MAX_WAIT_SECONDS = 5.0


class ResultSender:
    def __init__(self, buffer: ResultBuffer, client: AgentClient) -> None:
        self._buffer = buffer
        self._client = client
        self._stopping = threading.Event()
        self._more = threading.Event()  # the writer added results
        self._thread: threading.Thread | None = None
        self.sent = 0
        self.rejected = 0
        self.revoked = threading.Event()
        self.unreachable_since: float | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="agent-sender")
        self._thread.start()

    def nudge(self) -> None:
        self._more.set()

    def stop(self, deadline: float) -> int:
        """Stop after sending what the buffer holds, or at `deadline`
        (time.monotonic()); returns how many results are left on disk."""
        self._stopping.set()
        self._more.set()
        if self._thread is not None:
            self._thread.join()
        self._drain(deadline)
        return self._buffer.size()

    def _run(self) -> None:
        wait = FIRST_WAIT_SECONDS
        while not self._stopping.is_set():
            try:
                sent_some = self._send_batch()
            except ServerUnavailable as error:
                self._note_unreachable(error)
                self._stopping.wait(wait)
                wait = min(wait * 2, MAX_WAIT_SECONDS)
                continue
            except AgentRevoked as error:
                logger.error("The server refused this agent's token: %s", error)
                self.revoked.set()
                return
            wait = FIRST_WAIT_SECONDS
            if not sent_some:
                self._more.wait(IDLE_SECONDS)
                self._more.clear()

    def _drain(self, deadline: float) -> None:
        while self._buffer.size() and time.monotonic() < deadline:
            try:
                if not self._send_batch():
                    return
            except (ServerUnavailable, AgentRevoked) as error:
                logger.warning(
                    "Stopping with %d results unsent (kept on disk for the "
                    "next start): %s",
                    self._buffer.size(),
                    error,
                )
                return

    def _send_batch(self) -> bool:
        # Sent as stored: decoding and encoding each outcome again cost the
        # agent's interpreter lock, which its poll threads share.
        batch = self._buffer.oldest_encoded(BATCH_SIZE, BATCH_MAX_BYTES)
        if not batch:
            return False
        try:
            self._client.results([body for _, body in batch])
        except Rejected:
            self._send_one_by_one(batch)
        else:
            # The oldest first, so the batch is every row up to its last.
            self._buffer.remove_through(batch[-1][0])
            self.sent += len(batch)
        if self.unreachable_since is not None:
            logger.info("The server answers again; sending the buffered results")
            self.unreachable_since = None
        return True

    def _send_one_by_one(self, batch: list[tuple[int, str]]) -> None:
        for row_id, body in batch:
            try:
                self._client.results([body])
                self.sent += 1
            except Rejected as refusal:
                self.rejected += 1
                logger.error(
                    "The server refused a result of project %s: %s",
                    _project_id(body),
                    refusal,
                )
            self._buffer.remove([row_id])

    def _note_unreachable(self, error: Exception) -> None:
        if self.unreachable_since is None:
            self.unreachable_since = time.monotonic()
            logger.warning(
                "Cannot send results (%s); keeping them on disk and trying again",
                error,
            )


def _project_id(body: str) -> object:
    try:
        return json.loads(body).get("project_id")
    except (ValueError, AttributeError):
        return None
