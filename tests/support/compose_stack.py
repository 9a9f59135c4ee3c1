"""compose.yaml, started by podman-compose with the test's own images and a
target to poll (tests/container/compose.test.yaml), in a directory of its
own with a .env of fresh secrets.

Debian 12's podman-compose (1.0.3) starts every service at once and ignores
depends_on conditions, so the stack is started in the order compose.yaml's
conditions ask for: db until it answers, migrate until it exits, the rest.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.podman import ROOT, Podman
from tests.support.waiting import wait_until

# The test's own compose file and images, beside the test.
ASSETS = ROOT / "tests" / "container"
# Time for the first start of each part on a loaded 2-core machine.
DATABASE_START_SECONDS = 60
MIGRATE_SECONDS = 240
SERVICE_START_SECONDS = 120


@dataclass
class Stack:
    podman: Podman
    directory: Path
    project: str

    def container(self, service: str) -> str:
        return f"{self.project}_{service}_1"

    def compose(self, *args: str) -> subprocess.CompletedProcess:
        files = ["-f", "compose.yaml", "-f", "compose.test.yaml"]
        return self.podman.compose(self.directory, "-p", self.project, *files, *args)

    def up(self, *services: str) -> None:
        self.compose("up", "-d", "--no-build", "--no-deps", *services)

    def exec(self, service: str, *command: str, check: bool = True):
        return self.podman.run("exec", self.container(service), *command, check=check)

    def logs(self, service: str) -> str:
        done = self.podman.run("logs", self.container(service))
        return done.stdout + done.stderr

    def state(self, service: str) -> dict:
        done = self.podman.run("inspect", "--format=json", self.container(service))
        return json.loads(done.stdout)[0]["State"]

    def healthy(self, service: str) -> bool:
        check = ("healthcheck", "run", self.container(service))
        return self.podman.run(*check, check=False).returncode == 0

    def web_address(self) -> str:
        """host:port where the web's port 8000 is published on loopback."""
        done = self.podman.run("port", self.container("web"), "8000/tcp")
        return done.stdout.strip().splitlines()[0]

    def sql(self, query: str, *, database: str = "uptime") -> str:
        psql = ("psql", "--username=uptime", f"--dbname={database}", "-tAc", query)
        return self.exec("db", *psql).stdout.strip()

    def down(self) -> None:
        self.compose("down", "--volumes", "--timeout=5")
        self.podman.run("network", "rm", "--force", f"{self.project}_default")


def start_stack(
    podman: Podman, directory: Path, *, app_image: str, postgres_image: str
) -> Stack:
    """db, then migrate, then web, worker, tasks and the target, each
    waited for; the caller calls down() whatever happens."""
    shutil.copy(ROOT / "compose.yaml", directory / "compose.yaml")
    shutil.copy(ASSETS / "compose.test.yaml", directory / "compose.test.yaml")
    write_env(directory, app_image=app_image, postgres_image=postgres_image)
    stack = Stack(podman, directory, project=f"uptimetest{secrets.token_hex(4)}")
    try:
        start_in_order(stack)
    except BaseException:
        stack.down()
        raise
    return stack


def start_in_order(stack: Stack) -> None:
    stack.up("db")
    ready = ("pg_isready", "--username=uptime", "--dbname=uptime")
    wait_until(
        lambda: stack.exec("db", *ready, check=False).returncode == 0,
        timeout=DATABASE_START_SECONDS,
    )
    stack.up("migrate")
    wait_until(
        lambda: stack.state("migrate")["Status"] == "exited", timeout=MIGRATE_SECONDS
    )
    migrated = stack.state("migrate")["ExitCode"]
    assert migrated == 0, f"migrate exited {migrated}:\n{stack.logs('migrate')}"
    serving = ("web", "worker", "tasks", "target")
    stack.up(*serving)
    for service in ("web", "worker"):
        wait_until(lambda s=service: stack.healthy(s), timeout=SERVICE_START_SECONDS)
    wait_until(lambda: resolves(stack, ("db", *serving)), timeout=SERVICE_START_SECONDS)


def resolves(stack: Stack, names: tuple[str, ...]) -> bool:
    """Whether the web container finds every one of `names` through the
    network's DNS.

    aardvark-dns (podman's) reloads its records for each container that
    joins, and a query that arrives meanwhile goes unanswered ("Temporary
    failure in name resolution"), or the resolver asks the host's name
    server next in resolv.conf, which has never heard of "db" ("Name or
    service not known"). podman-compose starts the serving containers in
    an order of its own, so no one of them is known to join last: once
    all of them resolve, every one has joined and no reload is left.
    """
    lookup = f"import socket\nfor name in {names!r}: socket.getaddrinfo(name, None)"
    return stack.exec("web", "python", "-c", lookup, check=False).returncode == 0


def write_env(directory: Path, *, app_image: str, postgres_image: str) -> None:
    """.env.example as a user fills it in, plus the test's images, a web
    port the host picks, and polls a second apart."""
    settings = {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "POSTGRES_PASSWORD": secrets.token_hex(16),
        "POLLER_CONTROL_TOKEN": secrets.token_hex(32),
        "WEB_ADDRESS": "127.0.0.1:",
        "MIN_POLL_INTERVAL": "1",
        "UPTIME_MONITOR_IMAGE": app_image,
        "POSTGRES_IMAGE": postgres_image,
    }
    lines = []
    for line in (ROOT / ".env.example").read_text().splitlines():
        name = line.partition("=")[0]
        lines.append(f"{name}={settings.pop(name)}" if name in settings else line)
    lines += [f"{name}={value}" for name, value in settings.items()]
    (directory / ".env").write_text("\n".join(lines) + "\n")
