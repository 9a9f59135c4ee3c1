"""What the kernel says about a test server's connections (Linux)."""

from __future__ import annotations

from pathlib import Path


def requests_read(port: int) -> int:
    """Connections to `port` whose bytes the server has all read (its
    side's receive queue is empty), from /proc/net/tcp."""
    read = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            receive_queue = int(fields[4].split(":")[1], 16)
            established = fields[3] == "01"
            if local_port == port and established and receive_queue == 0:
                read += 1
    return read
