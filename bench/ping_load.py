"""The load of the ping benchmark: wrk for a steady load, an asyncio client
for a herd, and a probe that times a page of the site meanwhile.

wrk (Debian's `wrk`) keeps N connections busy, each sending its next ping
as soon as the last is answered: the closed loop of cron hosts behind a
proxy. It is C, so the client costs the two shared cores little. The herd
needs what wrk cannot do: each project pinged exactly once, every answer
counted, a 503 sent again after its Retry-After as `curl --retry` does,
and the time until the last answer; it runs on uvloop when installed.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

# Each wrk thread starts at its own place in the keys and goes round them.
WRK_SCRIPT = """
local keys = {}
for line in io.lines(os.getenv("PING_KEYS")) do keys[#keys + 1] = line end
local counter = 0
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("offset", threads * 7919)
end
function init(args)
  counter = offset or 0
end
function request()
  counter = counter + 1
  local path = "/ping/" .. keys[(counter % #keys) + 1]
  return wrk.format("POST", path, {["Content-Type"] = "text/plain"}, "ok")
end
"""


@dataclass
class WrkResult:
    connections: int
    seconds: float
    requests: int
    per_second: float
    percentiles_ms: dict[str, float]
    non_2xx: int
    socket_errors: int

    @property
    def errors(self) -> int:
        return self.non_2xx + self.socket_errors


def run_wrk(port: int, keys_file: Path, connections: int, seconds: float) -> WrkResult:
    """POST pings for `seconds` over `connections` kept-alive connections."""
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(WRK_SCRIPT)
        script.flush()
        command = [
            "wrk",
            f"-t{min(2, connections)}",
            f"-c{connections}",
            f"-d{seconds:g}s",
            "--timeout",
            "10s",
            "--latency",
            "-s",
            script.name,
            f"http://127.0.0.1:{port}/",
        ]
        env = {"PING_KEYS": str(keys_file), "PATH": "/usr/bin:/bin"}
        output = subprocess.run(
            command, env=env, capture_output=True, text=True, check=True
        ).stdout
    return parse_wrk(output, connections, seconds)


def parse_wrk(output: str, connections: int, seconds: float) -> WrkResult:
    percentiles = {
        share: _ms(value)
        for share, value in re.findall(r"^\s+(\d+)%\s+(\S+)\s*$", output, re.MULTILINE)
    }
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    return WrkResult(
        connections=connections,
        seconds=seconds,
        requests=requests,
        per_second=float(re.search(r"Requests/sec:\s+(\S+)", output).group(1)),
        percentiles_ms=percentiles,
        non_2xx=int(non_2xx.group(1)) if non_2xx else 0,
        socket_errors=sum(int(n) for n in sockets.groups()) if sockets else 0,
    )


def _ms(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value).groups()
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]
    return round(float(number) * scale, 1)


# The herd ----------------------------------------------------------------------


@dataclass
class HerdResult:
    seconds: float = 0.0  # from the first ping sent to the last answer
    latencies: list[float] = field(default_factory=list)  # of each 2xx, s
    statuses: dict[int, int] = field(default_factory=dict)  # every answer
    retried: int = 0  # 503s sent again after their Retry-After
    failures: dict[str, int] = field(default_factory=dict)  # no answer
    answered_2xx: set[str] = field(default_factory=set)  # keys


def run_herd(
    port: int, keys: list[str], connections: int, *, retry: bool
) -> HerdResult:
    """Ping every key once over `connections` connections, as fast as the
    server answers; with `retry`, a 503 is sent again after its Retry-After
    (capped at 5 s, so a run ends)."""
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    return runner(_herd(port, keys, connections, retry))


async def _herd(port: int, keys: list[str], connections: int, retry: bool):
    result = HerdResult()
    queue = iter(keys)
    started = time.monotonic()
    await asyncio.gather(
        *(_connection(port, queue, result, retry) for _ in range(connections))
    )
    result.seconds = time.monotonic() - started
    return result


async def _connection(port: int, keys, result: HerdResult, retry: bool) -> None:
    reader = writer = None
    for key in keys:
        while True:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            sent = time.monotonic()
            try:
                status, retry_after = await _ping(reader, writer, key)
            except (OSError, asyncio.IncompleteReadError, ValueError) as error:
                name = type(error).__name__
                result.failures[name] = result.failures.get(name, 0) + 1
                writer.close()
                reader = writer = None
                break  # not sent again: a client cannot tell if it was stored
            result.statuses[status] = result.statuses.get(status, 0) + 1
            if status == 503 and retry:
                result.retried += 1
                await asyncio.sleep(min(retry_after, 5.0))
                continue
            if 200 <= status < 300:
                result.latencies.append(time.monotonic() - sent)
                result.answered_2xx.add(key)
            break
    if writer is not None:
        writer.close()


async def _ping(reader, writer, key: str) -> tuple[int, float]:
    writer.write(
        f"POST /ping/{key} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nok".encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    await reader.readexactly(int(length.group(1)))
    retry_after = re.search(rb"(?i)\r\nretry-after: *(\d+)", head)
    if re.search(rb"(?i)\r\nconnection: *close", head):
        writer.close()
        raise ConnectionResetError("the server closed the connection")
    return status, float(retry_after.group(1)) if retry_after else 1.0


# The rest of the site ------------------------------------------------------------


class SiteProbe:
    """Fetches a page of the site every `every` seconds on a thread of its
    own while the load runs: does the rest of the site keep working?"""

    def __init__(self, port: int, path: str, every: float = 0.25) -> None:
        self.url = f"http://127.0.0.1:{port}{path}"
        self.every = every
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> SiteProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import httpx

        with httpx.Client(timeout=30) as client:
            while not self._stop.wait(self.every):
                started = time.monotonic()
                try:
                    status = client.get(self.url).status_code
                    problem = "" if status < 400 else f"HTTP {status}"
                except httpx.HTTPError as error:
                    problem = type(error).__name__
                if problem:
                    self.errors[problem] = self.errors.get(problem, 0) + 1
                else:
                    self.latencies.append(time.monotonic() - started)
