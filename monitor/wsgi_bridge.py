"""Django's WSGI application behind the ASGI server, on a pool of threads.

The web worker's event loop reads each request's body first, and only a
request that has arrived whole takes one of the WEB_THREADS threads: a
client that trickles its headers or its body holds a socket, never a
thread (gunicorn's threaded workers, before, needed a deadline on every
request for that). The threads live as long as the worker, so each keeps
its database connection between requests (CONN_MAX_AGE), as before; a
Django view behind ASGI would instead run on a new thread, with a new
connection, per request.
"""

from __future__ import annotations

import asyncio

from a2wsgi import WSGIMiddleware

# A request whose body has not arrived by then is answered 408.
BODY_SECONDS = 30.0
# Larger bodies are refused (413) before they are held in memory.
MAX_BODY_BYTES = 32 * 1024 * 1024


class BodyFirst:
    def __init__(self, wsgi_application, *, threads: int) -> None:
        self.app = WSGIMiddleware(wsgi_application, workers=threads)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            body = await asyncio.wait_for(read_body(receive), BODY_SECONDS)
        except ConnectionAbortedError:
            return
        except TimeoutError:
            await refuse(send, 408, b"the request did not arrive in time\n")
            return
        except ValueError:
            await refuse(send, 413, b"the request body is too large\n")
            return
        await self.app(scope, replay(body, receive), send)


async def read_body(receive) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionAbortedError
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > MAX_BODY_BYTES:
            raise ValueError(size)
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes, receive):
    """A receive() that gives the body once, then waits as the server's."""
    given = False

    async def receive_again():
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive_again


async def refuse(send, status: int, text: bytes) -> None:
    headers = [(b"content-type", b"text/plain"), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})
