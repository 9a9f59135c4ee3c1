"""The engine's references on the internet-like scenario: the same
projects (one URL each, from bench/internet.py), each polled once per
interval, by what a Python developer would write instead.

    python bench/internet_loops.py --client httpx --urls-file F --interval 60 \\
        --threads 1000 --seconds 80 --warmup 60 --ca-bundle ca.pem

`httpx`: a ThreadPoolExecutor of `--threads` workers sharing one
httpx.Client, a scheduler thread submitting each project at its due time.
`pycurl`: the bare pycurl loop: `--threads` threads, each with its own
pycurl.Curl handle set up once, taking due projects from a queue.

Neither writes results anywhere: their CPU is a floor for a poller built
that way. A project still being polled at its next due time skips that
tick (counted as missed), as the engine does. Prints one JSON line:
polls made in the measured window (after `--warmup`), polls/s, lag
(started minus due) p50/p99/max, missed ticks, failed polls.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polling.engine.stats import percentile  # noqa: E402

TIMEOUT_SECONDS = 10
TICK_SECONDS = 0.002


class Tally:
    def __init__(self, window_from: float) -> None:
        self.lock = threading.Lock()
        self.window_from = window_from
        self.polls = 0
        self.failed = 0
        self.missed = 0
        self.lags: list[float] = []

    def record(self, due: float, started: float, ok: bool) -> None:
        if started < self.window_from:
            return
        with self.lock:
            self.polls += 1
            self.failed += not ok
            self.lags.append(started - due)


def httpx_poller(threads: int, ca_bundle: str | None):
    import ssl

    import httpx

    context = ssl.create_default_context(cafile=ca_bundle)
    client = httpx.Client(
        verify=context,
        limits=httpx.Limits(max_connections=threads),
        trust_env=False,
    )

    def poll(url: str) -> bool:
        try:
            return client.get(url, timeout=TIMEOUT_SECONDS).status_code == 200
        except httpx.HTTPError:
            return False

    return poll


def pycurl_poller(ca_bundle: str | None):
    """A poll function for one thread, on its own handle."""
    import io

    import pycurl

    curl = pycurl.Curl()
    curl.setopt(pycurl.NOSIGNAL, 1)
    curl.setopt(pycurl.TIMEOUT, TIMEOUT_SECONDS)
    if ca_bundle:
        curl.setopt(pycurl.CAINFO, ca_bundle)

    def poll(url: str) -> bool:
        curl.setopt(pycurl.URL, url)
        curl.setopt(pycurl.WRITEDATA, io.BytesIO())
        try:
            curl.perform()
        except pycurl.error:
            return False
        return curl.getinfo(pycurl.RESPONSE_CODE) == 200

    return poll


def run(args: argparse.Namespace) -> dict:
    urls = Path(args.urls_file).read_text().split()
    count, step = len(urls), args.interval / len(urls)
    started = time.monotonic()
    end = started + args.seconds
    tally = Tally(started + args.warmup)
    busy = [False] * count
    due_queue: queue.Queue = queue.Queue()

    def polled(index: int, due: float, poll) -> None:
        begun = time.monotonic()
        ok = poll(urls[index])
        busy[index] = False
        tally.record(due, begun, ok)

    if args.client == "httpx":
        pool = ThreadPoolExecutor(max_workers=args.threads)
        poll = httpx_poller(args.threads, args.ca_bundle)

        def submit(index: int, due: float) -> None:
            pool.submit(polled, index, due, poll)

    else:
        pool = None

        def work() -> None:
            poll = pycurl_poller(args.ca_bundle)
            while (item := due_queue.get()) is not None:
                polled(*item, poll)

        workers = [
            threading.Thread(target=work, daemon=True) for _ in range(args.threads)
        ]
        for worker in workers:
            worker.start()

        def submit(index: int, due: float) -> None:
            due_queue.put((index, due))

    tick = 0
    while (now := time.monotonic()) < end:
        while (due := started + tick * step) <= now:
            index = tick % count
            if busy[index]:
                if due >= tally.window_from:
                    tally.missed += 1
            else:
                busy[index] = True
                submit(index, due)
            tick += 1
        time.sleep(TICK_SECONDS)
    window = time.monotonic() - tally.window_from
    lags = sorted(tally.lags)
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
    return {
        "client": args.client,
        "threads": args.threads,
        "projects": count,
        "polls": tally.polls,
        "seconds": window,
        "polls_per_s": tally.polls / window if window else 0,
        "failed": tally.failed,
        "missed": tally.missed,
        "lag_p50_ms": percentile(lags, 50) * 1000 if lags else None,
        "lag_p99_ms": percentile(lags, 99) * 1000 if lags else None,
        "lag_max_ms": lags[-1] * 1000 if lags else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=["httpx", "pycurl"], required=True)
    parser.add_argument("--urls-file", required=True)
    parser.add_argument("--interval", type=float, default=60)
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--warmup", type=float, default=0)
    parser.add_argument("--ca-bundle")
    out = run(parser.parse_args())
    print(json.dumps(out), flush=True)
    # Threads still waiting on slow targets must not hold the exit up.
    sys.stdout.flush()
    import os

    os._exit(0)


if __name__ == "__main__":
    main()
