"""Whether the machine's shared services answer, for tests that use them."""

from __future__ import annotations

import socket


def redis_answers() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        return False
    return True
