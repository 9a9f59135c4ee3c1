"""Shard leases: several runpoller processes share the projects through
PostgreSQL.

Projects fall into POLLER_SHARDS shards (project id mod shards), one
ShardLease row each. Every tick, one statement renews this poller's leases,
takes free or expired shards up to its fair share (ceil(shards / live
pollers)) and counts the live pollers; shards above the fair share are
released once their polls are saved, so another poller continues them
with no gap. A takeover bumps the lease's token, and the writer's fence
(LeaseFence) saves only results of shards this poller still holds with the
token it took them with: a poller that lost a shard while paused cannot
store a result for it.

After a tick that failed (the database was unreachable), the next one
takes back only this poller's own shards and free ones: once the database
is back every lease has expired, and the first poller to reconnect would
otherwise take the others' shards too, dropping the results they polled
before the outage and have yet to save. From the tick after, expired
leases of pollers that did not come back are taken over as usual.

The engine only hears the outcome, as an Ownership: the shards held, and
the time until which they can be trusted (the tick's start + TTL -
margin, on the monotonic and on the wall clock), measured before the
statement ran, so it ends before any other poller can have taken them
over.

A shard whose holding was interrupted (lost, or taken back after another
poller held it: its token moved by two or more) is polled again only
once nothing of that holding is left in memory (see _publish): a poller
back from a stall proves its queues are current before it polls it.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence

from django.db import connection, transaction
from django.utils import timezone

from polling.engine.shards import Ownership
from polling.engine.threads import named_thread
from polling.engine.types import Outcome
from polling.store import close_connection
from projects.models import PollerNode, ShardLease

logger = logging.getLogger(__name__)


def trust_margin(ttl: float) -> float:
    """How long before its lease could expire a poller stops dispatching:
    room for clock rates and for the statement's own time."""
    return ttl / 5


class LeaseKeeper:
    """Holds this poller's shard leases from its own thread.

    `on_change` hears every tick's Ownership; `settle(timeout)` waits until
    the results of everything dispatched so far are saved, and must return
    True before shards are released.
    """

    def __init__(
        self,
        *,
        node_id: int,
        shard_count: int,
        region_id: int = 1,
        ttl: float,
        tick: float,
        on_change: Callable[[Ownership], None],
        settle: Callable[[float], bool],
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.node_id = node_id
        self.shard_count = shard_count
        # Pollers of one region share its shards (docs/regions.md).
        self.region_id = region_id
        self.ttl = ttl
        self.tick_seconds = tick
        self._on_change = on_change
        self._settle = settle
        self._clock = clock
        self._wall_clock = wall_clock
        # Shard -> token of the leases the engine polls under (the fence
        # saves only results of these).
        self._tokens: dict[int, int] = {}
        # Shards whose holding ended with work of it maybe left in memory.
        self._interrupted: set[int] = set()
        self._only_own = False
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.statements = 0  # lease statements run: status() shows them

    def tokens(self) -> dict[int, int]:
        """Shard -> token of the leases held at the last tick."""
        return self._tokens

    def start(self) -> None:
        """Create the lease rows if missing and take a first share (raises
        if the database is unreachable), then tick from a thread."""
        ensure_lease_rows(self.shard_count, self.region_id)
        self.tick()
        thread = named_thread(self._run, name="poller-leases")
        thread.start()  # RuntimeError when no thread can be started
        self._thread = thread  # only a started thread is joined at stop()

    def stop(self, timeout: float | None = None) -> None:
        self._stopping.set()
        if self._thread:
            self._thread.join(timeout)

    def tick(self) -> Ownership:
        """Renew, take and balance; tell the engine what is held now."""
        started = self._clock(), self._wall_clock()
        with transaction.atomic():
            rows = _run(renew_and_claim_sql(), self._params())
        self.statements += 1
        self._only_own = False
        live = rows[0][2] if rows else 1
        held = {shard: token for shard, token, _ in rows}
        self._note_interrupted(held)
        ownership = self._publish(held, started)
        surplus = sorted(self._tokens)[fair_share(self.shard_count, live) :]
        if surplus:
            self._hand_over(surplus, ownership)
        return ownership

    def _note_interrupted(self, held: dict[int, int]) -> None:
        """Remember the shards whose holding by this poller ended without
        its work on them being settled: lost (another poller took them
        over, or this one lapsed), or taken back after another poller held
        them (the token moved by two or more). Polls queued, results not
        yet saved and due times of that holding may still be in memory."""
        for shard, token in self._tokens.items():
            if shard not in held or held[shard] - token >= 2:
                self._interrupted.add(shard)

    def _publish(self, held: dict[int, int], started: tuple[float, float]) -> Ownership:
        """Tell the engine which shards to poll, and the fence which tokens
        to save under. A shard whose last holding was interrupted is
        published only once nothing of that holding is left: first without
        it (its projects are dropped, its queued polls refused, its
        results fenced off), then, once everything polled before is settled,
        with it, its projects loaded afresh from their last stored window.
        If that takes longer than a tick, it is released for another to
        take (or this poller, next tick)."""
        retaken = sorted(set(held) & self._interrupted)
        if retaken:
            self._tell({s: t for s, t in held.items() if s not in retaken}, started)
            if self._settle(self.tick_seconds):
                self._interrupted.clear()
                logger.info("Took back %d shards, nothing of before left", len(retaken))
            else:
                self._release(retaken, held)
                held = {s: t for s, t in held.items() if s not in retaken}
        return self._tell(held, started)

    def _tell(self, held: dict[int, int], started: tuple[float, float]) -> Ownership:
        self._tokens = held
        ownership = self._ownership(started)
        self._on_change(ownership)
        return ownership

    def lost_contact(self) -> None:
        """The database could not be reached: at the next tick take back
        only this poller's own shards (and free ones), leaving the other
        pollers a tick to come back for theirs."""
        self._only_own = True

    def release_all(self) -> None:
        """Give every lease back (after the poller has saved everything)
        and stop counting as live, so the others take all of them over at
        their next tick."""
        if not connection.in_atomic_block:
            # The calling thread's connection may have sat idle since the
            # poller registered, and an outage meanwhile has cut it.
            close_connection()
        with transaction.atomic():
            PollerNode.objects.filter(pk=self.node_id).update(stopped_at=timezone.now())
            self._release(list(self._tokens), self._tokens)

    def _hand_over(self, shards: list[int], ownership: Ownership) -> None:
        """Stop polling `shards`, wait until their results are saved, then
        release them. If saving takes too long they stay held; the next
        tick takes them up again."""
        kept = frozenset(ownership.shards - set(shards))
        self._on_change(
            Ownership(
                self.shard_count,
                kept,
                ownership.trusted_until,
                ownership.trusted_until_wall,
            )
        )
        # No longer than a tick: the renewal must not wait for it.
        if self._settle(self.tick_seconds):
            self._interrupted.clear()  # settled, whatever was not polled
            self._release(shards, self._tokens)
            logger.info("Handed over %d shards", len(shards))

    def _release(self, shards: list[int], held: dict[int, int]) -> None:
        """Give these leases back; the engine no longer polls them."""
        if not shards:
            return
        with transaction.atomic():
            _run(
                release_sql(),
                {"node": self.node_id, "shards": shards, "region": self.region_id},
            )
        self.statements += 1
        self._tokens = {s: t for s, t in held.items() if s not in shards}

    def _ownership(self, started: tuple[float, float]) -> Ownership:
        """The shards held, trusted until the tick's start (on the monotonic
        clock, and on the wall clock) + TTL - margin."""
        trust = self.ttl - trust_margin(self.ttl)
        return Ownership(
            self.shard_count,
            frozenset(self._tokens),
            trusted_until=started[0] + trust,
            trusted_until_wall=started[1] + trust,
        )

    def _params(self) -> dict:
        return {
            "node": self.node_id,
            "shards": self.shard_count,
            "ttl": self.ttl,
            "others": not self._only_own,
            "region": self.region_id,
        }

    def _run(self) -> None:
        try:
            while not self._stopping.wait(self.tick_seconds):
                try:
                    self.tick()
                except Exception:
                    # Trust lapses on its own: polling pauses until a
                    # renewal succeeds.
                    logger.exception("Lease renewal failed; the next may succeed")
                    self.lost_contact()
                    close_connection()
        finally:
            close_connection()


class LeaseFence:
    """The writer's check: keep the outcomes of shards still held with the
    token they were taken with (or this poller's own retake of them). The
    lease rows are locked FOR SHARE until the writer commits, so a takeover
    waits for those results and then sees them when it loads the shard's
    projects."""

    def __init__(self, keeper: LeaseKeeper) -> None:
        self._keeper = keeper
        self.dropped = 0
        self.statements = 0

    @property
    def keeper(self) -> LeaseKeeper:
        return self._keeper

    def admit(self, outcomes: Sequence[Outcome]) -> list[Outcome]:
        count = self._keeper.shard_count
        wanted = sorted({o.project_id % count for o in outcomes})
        rows = _run(
            fence_sql(),
            {
                "node": self._keeper.node_id,
                "shards": wanted,
                # A keeper of before regions is of the default one.
                "region": getattr(self._keeper, "region_id", 1),
            },
        )
        self.statements += 1
        mine = self._keeper.tokens()
        held = {shard for shard, token in rows if _still_held(mine.get(shard), token)}
        admitted = [o for o in outcomes if o.project_id % count in held]
        if len(admitted) < len(outcomes):
            self.dropped += len(outcomes) - len(admitted)
            logger.warning(
                "Dropped %d results of shards another poller took over",
                len(outcomes) - len(admitted),
            )
        return admitted


def _still_held(taken: int | None, token: int) -> bool:
    """Whether a lease row of this poller with `token` continues the
    holding the outcomes were polled under (`taken`): the same token, or
    one more. One more is this poller's own takeover of its lapsed lease
    (after an outage), which its writer may meet before it hears of it;
    had another poller held the shard in between, the token would have
    moved twice."""
    return taken is not None and token - taken in (0, 1)


def fair_share(shard_count: int, live_nodes: int) -> int:
    return math.ceil(shard_count / max(live_nodes, 1))


def ensure_lease_rows(shard_count: int, region_id: int = 1) -> None:
    with transaction.atomic():
        _run(
            f"""
            INSERT INTO {_table(ShardLease)} (region_id, shard, token)
            SELECT %(region)s, g, 0 FROM generate_series(0, %(shards)s - 1) AS g
            ON CONFLICT DO NOTHING
            """,
            {"shards": shard_count, "region": region_id},
        )


def _run(sql: str, params: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def renew_and_claim_sql() -> str:
    """One statement per tick: note this node alive, renew its unexpired
    leases, count the live nodes, take free or expired shards (lowest
    first; only free ones and its own unless `others`) up to the fair
    share. Returns (shard, token, live nodes) for every lease held. SKIP
    LOCKED: two nodes never wait for each other."""
    lease, node = _table(ShardLease), _table(PollerNode)
    ttl = "make_interval(secs => %(ttl)s)"
    return f"""
        WITH me AS (
            UPDATE {node} SET last_seen_at = now() WHERE id = %(node)s
            RETURNING id
        ), live AS (
            SELECT count(*) AS nodes FROM {node}
            WHERE stopped_at IS NULL AND region_id = %(region)s
              AND (last_seen_at > now() - {ttl} OR id = %(node)s)
        ), renewed AS (
            UPDATE {lease} SET expires_at = now() + {ttl}
            WHERE owner_id = %(node)s AND expires_at > now()
              AND shard < %(shards)s AND region_id = %(region)s
            RETURNING shard, token
        ), claimed AS (
            UPDATE {lease} SET owner_id = %(node)s, token = token + 1,
                expires_at = now() + {ttl}
            WHERE region_id = %(region)s AND shard IN (
                SELECT shard FROM {lease}
                WHERE (owner_id IS NULL OR expires_at IS NULL
                       OR expires_at <= now())
                  AND shard < %(shards)s AND region_id = %(region)s
                  AND (%(others)s OR owner_id IS NULL OR owner_id = %(node)s)
                ORDER BY shard
                LIMIT greatest(
                    ceil(%(shards)s::numeric / greatest(
                        (SELECT nodes FROM live), 1))::int
                    - (SELECT count(*) FROM renewed), 0)
                FOR UPDATE SKIP LOCKED
            )
            RETURNING shard, token
        )
        SELECT shard, token, (SELECT nodes FROM live) FROM renewed
        UNION ALL
        SELECT shard, token, (SELECT nodes FROM live) FROM claimed
        ORDER BY 1
    """


def release_sql() -> str:
    return f"""
        UPDATE {_table(ShardLease)} SET owner_id = NULL, expires_at = NULL
        WHERE owner_id = %(node)s AND shard = ANY(%(shards)s)
          AND region_id = %(region)s
    """


def fence_sql() -> str:
    return f"""
        SELECT shard, token FROM {_table(ShardLease)}
        WHERE owner_id = %(node)s AND shard = ANY(%(shards)s)
          AND region_id = %(region)s
        FOR SHARE
    """
