"""One poller per SQLite database: an exclusive lock file beside it.

SQLite has no shard leases (polling/leases.py needs PostgreSQL), so two
pollers on one SQLite file would poll every project twice. The first
runpoller holds an flock on `<database>.poller.lock`; the kernel frees it
when that process ends in any way, SIGKILL included, so a stale file never
blocks a restart. The file holds the holder's pid, for the refusal message.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

LOCK_SUFFIX = ".poller.lock"


class PollerAlreadyRunning(Exception):
    """Another poller holds this SQLite database."""


class SinglePollerLock:
    """Held from acquire() until release() or the end of the process."""

    def __init__(self, database_path: str | os.PathLike) -> None:
        self.path = Path(f"{database_path}{LOCK_SUFFIX}")
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise PollerAlreadyRunning naming its holder."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise PollerAlreadyRunning(_refusal(holder, self.path)) from None
        # Truncate only once the lock is held: the file names its holder.
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Free the lock; the file stays (removing it would race a newcomer
        that opened it a moment before)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def lock_for(settings_dict: dict) -> SinglePollerLock | None:
    """The lock for this database, or None when it needs none (PostgreSQL,
    or an in-memory SQLite database no other process can open)."""
    if not settings_dict["ENGINE"].endswith("sqlite3"):
        return None
    name = str(settings_dict["NAME"])
    if name in ("", ":memory:") or name.startswith("file:"):
        return None
    return SinglePollerLock(name)


def _read_pid(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode().strip())
    except (OSError, ValueError):
        return None  # the holder has not written its pid yet


def _refusal(pid: int | None, path: Path) -> str:
    who = f"pid {pid}" if pid else "another process"
    return (
        f"Another poller ({who}) is already running on this SQLite database "
        f"(it holds {path}). SQLite allows one poller; several pollers need "
        "PostgreSQL (DATABASE_URL=postgres://...)."
    )
