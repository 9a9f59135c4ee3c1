"""CPU seconds one poll costs the poller, for bodies a hostile target
chooses: charsets that are no text encoding (or one quadratic in the
body), and JSON nested past Python's recursion limit.

    python bench/hostile_bodies.py [polls per case]

Each case polls a real TargetServer on 127.0.0.1 with probe() on this
thread and measures this thread's CPU time (time.thread_time) around
it, so the server's threads are not counted. A poll that raises (the
fault that issue 25 fixed) is shown with the exception's name.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import UTC, datetime
from urllib.parse import urlencode

import harness  # noqa: F401  (puts the project on sys.path)

from polling.engine.probe import make_handle, probe
from polling.engine.types import JsonAssertion, Keyword, Target, Task
from tests.support.target_server import TargetServer

MIB = 1024 * 1024
KEYWORD = Keyword("all is well")
# (case, repeated text, Content-Type, what the project checks)
CASES = [
    ("utf-8 (baseline)", "all is well; ", "text/plain; charset=utf-8", KEYWORD),
    *(
        (f"charset={name}", "all is well; ", f"text/plain; charset={name}", KEYWORD)
        for name in ("rot13", "base64", "hex", "zlib", "quoted-printable", "idna")
    ),
    ("charset=punycode", "a", "text/plain; charset=punycode", KEYWORD),
    ("JSON nested 1 MiB deep", "[", "application/json", JsonAssertion("a", "==", 1)),
    # The costliest bodies an allowed charset leaves: casefold triples
    # each of these characters, and a long array is compared item by item.
    ("utf-8, casefold x3", "\u0390", "text/plain; charset=utf-8", KEYWORD),
    (
        "JSON array, contains",
        "1,",
        "application/json",
        JsonAssertion("@", "contains", 2),
    ),
]


def cpu_per_poll(server: TargetServer, case: tuple, polls: int) -> tuple[float, str]:
    _, text, content_type, check = case
    times = MIB // len(text.encode())
    # "1," over and over, in brackets, is a JSON array of MIB // 2 numbers.
    ends = {"before": "[", "after": "1]"} if text == "1," else {}
    times -= 2 if ends else 0  # room for the brackets within the MiB
    query = urlencode({"text": text, "times": times, "type": content_type, **ends})
    field = "keyword" if isinstance(check, Keyword) else "json_assertion"
    target = Target(7, server.url(f"/repeat?{query}"), timeout_seconds=60)
    target = Target(**{**_fields(target), field: check})
    handle = make_handle()
    seconds, result = [], ""
    for _ in range(polls):
        start = time.thread_time()
        try:
            outcome = probe(handle, Task(target, datetime.now(UTC)))
            result = "up" if outcome.up else f"down: {outcome.error}"
        except BaseException as error:  # what is measured
            result = f"raised {type(error).__name__}"
        seconds.append(time.thread_time() - start)
    handle.close()
    return statistics.median(seconds), result


def _fields(target: Target) -> dict:
    return {name: getattr(target, name) for name in Target.__slots__}


def main() -> None:
    polls = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print(f"{'case':<26} {'CPU s/poll':>10}  result")
    with TargetServer() as server:
        for case in CASES:
            seconds, result = cpu_per_poll(server, case, polls)
            print(f"{case[0]:<26} {seconds:>10.4f}  {result[:70]}")


if __name__ == "__main__":
    main()
