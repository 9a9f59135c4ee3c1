"""The image's HEALTHCHECK: is this container's role doing its job?

    web      GET /api/v1/status/ answers 200 (it answers 503 without the database)
    worker   the poller's control endpoint answers GET /status
    tasks    qcluster is running (and its cluster's processes, if it has one)
    other    healthy: a migrate or a one-off command has nothing to serve

Exit 0 when healthy, 1 otherwise, with one line saying why. Standard
library only, and no Django: it runs every 30 seconds, and must answer in
a fraction of a second.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import http.client
import os
import sys
from pathlib import Path

ROLE_FILE = Path("/tmp/uptime-monitor-role")
TIMEOUT_SECONDS = 4
# polling/auth.py derives the poller's control token from SECRET_KEY with
# this purpose; tests/container/test_scripts.py checks the two agree.
TOKEN_PURPOSE = b"uptime-monitor poller control v1"


def main() -> int:
    role = ROLE_FILE.read_text().strip() if ROLE_FILE.exists() else ""
    check = CHECKS.get(role)
    if check is None:
        return report(True, f"nothing to check for {role or 'this command'}")
    try:
        healthy, why = check()
    except OSError as error:
        healthy, why = False, f"{role}: {error}"
    return report(healthy, why)


def report(healthy: bool, why: str) -> int:
    print(why)
    return 0 if healthy else 1


def web() -> tuple[bool, str]:
    """The status endpoint, asked as a proxy in front would ask it: by an
    allowed host name, over https when BEHIND_PROXY trusts the header."""
    port = int(os.environ.get("PORT", "8000"))
    headers = {"Host": allowed_host(), "X-Forwarded-Proto": "https"}
    status = get("127.0.0.1", port, "/api/v1/status/", headers)
    return status == 200, f"web: /api/v1/status/ answered {status}"


def allowed_host() -> str:
    """A Host header ALLOWED_HOSTS accepts: its first entry, with a
    leading-dot or wildcard entry made into a name it matches."""
    first = os.environ.get("ALLOWED_HOSTS", "127.0.0.1").split(",")[0].strip()
    if first in ("", "*"):
        return "127.0.0.1"
    return "health" + first if first.startswith(".") else first


def worker() -> tuple[bool, str]:
    bind = os.environ.get("POLLER_CONTROL_BIND", "127.0.0.1:8765")
    host, _, port = bind.rpartition(":")
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    headers = {"Authorization": f"Bearer {control_token()}"}
    status = get(host.strip("[]"), int(port), "/status", headers)
    return status == 200, f"worker: the control endpoint answered {status}"


def control_token() -> str:
    """As polling.auth.control_token() makes it, from the environment."""
    explicit = os.environ.get("POLLER_CONTROL_TOKEN", "")
    if explicit:
        return explicit
    key = os.environ.get("SECRET_KEY", "").encode()
    return hmac.new(key, TOKEN_PURPOSE, hashlib.sha256).hexdigest()


def tasks() -> tuple[bool, str]:
    """With one worker qcluster runs the tasks itself and exits when its
    worker dies; with more, it exits when django-q2's cluster dies, and
    until it notices, fewer than the parent and its sentinel means
    trouble."""
    expected = 1 if tasks_in_one_process() else 2
    running = sum(1 for cmdline in process_command_lines() if b"qcluster" in cmdline)
    return running >= expected, f"tasks: {running} of {expected} qcluster processes"


def tasks_in_one_process() -> bool:
    """As monitor/settings.py reads Q_WORKERS (default 1)."""
    return os.environ.get("Q_WORKERS", "1").strip() == "1"


def process_command_lines() -> list[bytes]:
    lines = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            # A process may exit while we look.
            with contextlib.suppress(OSError):
                lines.append((entry / "cmdline").read_bytes())
    return lines


def get(host: str, port: int, path: str, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection(host, port, timeout=TIMEOUT_SECONDS)
    try:
        connection.request("GET", path, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


CHECKS = {"web": web, "worker": worker, "tasks": tasks}

if __name__ == "__main__":
    sys.exit(main())
