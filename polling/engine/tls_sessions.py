"""TLS sessions and name lookups kept for many hosts: a pool of libcurl
share handles.

libcurl (8.12 and later, vtls_scache.c) keeps the TLS sessions it may
resume in a cache of a fixed number of peers: 25 on a multi handle and on
a share handle (CURL_TLS_SESSION_SIZE in multi.c, the 25 in curl_share.c),
3 on a lone easy handle, and no option changes it. A full cache drops its
least recently used peer. A worker goes round hundreds or thousands of
hosts, each polled once a minute, so with one cache every handshake was a
full one again, although a resumed one costs about half the CPU
(bench/tls_reuse.py).

So each origin gets a share handle of its own choosing, with its TLS
session cache turned on: the first PEERS_PER_SHARE origins seen go to the
first share, the next ones to the second, and so on. No share ever holds
more peers than its cache, so every origin keeps its sessions, whichever
worker thread polls it next (a pycurl share locks itself for the threads).

Memory: a share costs about 8 KB empty; all told, with the sessions and
the certificates remembered, 10,000 hosts took 17 MB more than before
(bench/tls_reuse.py --hosts, docs/benchmarks/2026-11-26-tls-sessions.md). Past
`max_origins` an origin gets no share: its transfers use their multi
handle's own cache, where it resumes no better than before, and the
origins already placed keep theirs. The pool never forgets an origin
(until the poller restarts): a simple directory is worth more than
reclaiming the few slots of deleted projects.

Each share keeps its origins' name lookups too (http origins get one for
that alone). libcurl prunes the whole DNS cache a transfer uses when it
ends (multi.c, multi_done_locked: Curl_dnscache_prune walks every entry),
and a multi handle's cache holds every host:port looked up in the last
DNS_CACHE_TIMEOUT (60 s): a worker going round thousands of hosts walked
thousands of entries per poll, 8 % of a resumed HTTPS poll's CPU at 2,000
hosts and more with more hosts (docs/benchmarks/2026-11-26-tls-cpu.md).
A share's cache holds its origins' entries alone, a few dozen; lookups
are cached as long as before.
"""

from __future__ import annotations

import threading

import pycurl

# Peers in the TLS session cache of one share handle (libcurl's
# curl_share.c: Curl_ssl_scache_create(25, 2, ...)). libcurl builds a
# peer's key from host, port and whether the certificate is verified, so
# an origin polled both ways takes two.
PEERS_PER_SHARE = 25
# 100,000 origins: 4,000 shares, about 170 MB with their sessions.
MAX_ORIGINS = 100_000


class SessionShares:
    """Which share handle keeps the TLS sessions of each origin."""

    def __init__(self, *, max_origins: int = MAX_ORIGINS) -> None:
        self._max_origins = max_origins
        self._lock = threading.Lock()
        self._placed: dict[tuple[str, bool], pycurl.CurlShare] = {}
        self._shares: list[pycurl.CurlShare] = []
        self._room = 0  # origins the newest share can still take

    def __len__(self) -> int:
        """Origins placed."""
        return len(self._placed)

    @property
    def shares(self) -> int:
        return len(self._shares)

    def share_for(self, origin: str, *, verified: bool) -> pycurl.CurlShare | None:
        """The share that keeps the sessions and name lookups of `origin`
        (host:port) when its certificate is `verified` or not; None past
        `max_origins`."""
        key = (origin, verified)
        share = self._placed.get(key)
        if share is not None or len(self._placed) >= self._max_origins:
            return share
        with self._lock:
            return self._place(key)

    def _place(self, key: tuple[str, bool]) -> pycurl.CurlShare | None:
        share = self._placed.get(key)  # another thread may have placed it
        if share is not None or len(self._placed) >= self._max_origins:
            return share
        if not self._room:
            share = pycurl.CurlShare()
            share.setopt(pycurl.SH_SHARE, pycurl.LOCK_DATA_SSL_SESSION)
            share.setopt(pycurl.SH_SHARE, pycurl.LOCK_DATA_DNS)
            self._shares.append(share)
            self._room = PEERS_PER_SHARE
        self._room -= 1
        self._placed[key] = share = self._shares[-1]
        return share
