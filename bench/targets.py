"""A cheap HTTP target for benchmarks, run as its own process.

    python bench/targets.py --port 8900

asyncio answers thousands of concurrent connections from one thread, so the
target costs the machine little next to the poller under test. Routes:

    /ok                 200
    /status/<code>      that status
    /delay/<ms>         200 after that many milliseconds
    /flap/<period>/<offset>  up for the first half of every <period>
                        seconds and 503 for the second, shifted by <offset>
                        seconds: a site that goes down and comes back
    /hang               never answers; the connection ends when the client
                        gives up (a hung poll holds nothing afterwards)
    /__stats            JSON: {"requests": <count so far>}  (not counted)

HTTP/1.1 with keep-alive; bodies of requests are read and ignored.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time

REASONS = {200: "OK", 204: "No Content", 404: "Not Found", 500: "Server Error"}


class Target:
    def __init__(self) -> None:
        self.requests = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, path = head.split(b" ", 2)[:2]
                length = _content_length(head)
                if length:
                    await reader.readexactly(length)
                answer = await self.answer(path.decode())
                if answer is None:
                    await _until_closed(reader)
                    break
                status, body = answer
                writer.write(_response(status, body, head_only=method == b"HEAD"))
                await writer.drain()
        except (
            asyncio.IncompleteReadError,
            ConnectionError,
            asyncio.LimitOverrunError,
        ):
            pass
        finally:
            writer.close()

    async def answer(self, path: str) -> tuple[int, bytes] | None:
        """The status and body to send, or None to hang."""
        route = path.partition("?")[0]
        if route == "/__stats":
            return 200, json.dumps({"requests": self.requests}).encode()
        self.requests += 1
        parts = route.strip("/").split("/")
        if parts[0] == "status" and len(parts) == 2:
            return int(parts[1]), b"status"
        if parts[0] == "delay" and len(parts) == 2:
            await asyncio.sleep(int(parts[1]) / 1000)
            return 200, b"late"
        if parts[0] == "flap" and len(parts) == 3:
            return _flap(int(parts[1]), int(parts[2]))
        if parts[0] == "hang":
            return None
        return 200, b"ok"


def _flap(period: int, offset: int) -> tuple[int, bytes]:
    down = (time.time() + offset) % period >= period / 2
    return (503, b"down") if down else (200, b"ok")


async def _until_closed(reader: asyncio.StreamReader) -> None:
    """Wait (at most an hour) until the client closes its end."""
    with contextlib.suppress(TimeoutError):
        while await asyncio.wait_for(reader.read(65536), 3600):
            pass


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def _response(status: int, body: bytes, *, head_only: bool) -> bytes:
    reason = REASONS.get(status, "Status")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\n"
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    return head if head_only else head + body


async def serve(port: int) -> None:
    target = Target()
    server = await asyncio.start_server(
        target.handle, "127.0.0.1", port, backlog=4096, limit=65536
    )
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8900)
    asyncio.run(serve(parser.parse_args().port))


if __name__ == "__main__":
    main()
