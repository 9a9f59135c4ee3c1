"""probe() and the network around it: DNS inside the deadline, hosts with
several addresses, and nothing taken from the environment (proxies,
.netrc). Everything stays on 127.0.0.0/8."""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from polling.engine.probe import make_handle
from polling.engine.types import Outcome, Target, Task
from tests.support.executor_probe import open_handle, run_poll
from tests.support.target_server import TargetServer

ROOT = Path(__file__).resolve().parents[2]
MARGIN = 1.5  # as in test_probe.py


def poll(handle, url: str, **fields) -> Outcome:
    return run_poll(
        handle, Task(Target(project_id=9, url=url, **fields), datetime.now(UTC))
    )


def timed_poll(handle, url: str, **fields) -> tuple[Outcome, float]:
    start = time.monotonic()
    outcome = poll(handle, url, **fields)
    return outcome, time.monotonic() - start


def random_loopback() -> str:
    """An address in 127.0.0.0/8 that other test runs are unlikely to use."""
    octets = random.randint(2, 254), random.randint(0, 255), random.randint(1, 254)
    return "127." + ".".join(map(str, octets))


# Hosts with several addresses ------------------------------------------------


def blackhole(address: str, port: int) -> list[socket.socket]:
    """A listener on address:port whose accept queue is full: Linux drops
    further SYNs, so a connect there hangs as to a dead host."""
    listener = socket.socket()
    listener.bind((address, port))
    listener.listen(0)
    sockets = [listener]
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex((address, port))
        sockets.append(filler)
    return sockets


@pytest.fixture
def dead_addresses(target_server):
    """Two addresses on target_server's port where connecting hangs."""
    addresses = [random_loopback(), random_loopback()]
    sockets = [
        s for address in addresses for s in blackhole(address, target_server.port)
    ]
    yield addresses
    for each in sockets:
        each.close()


def test_it_moves_on_from_addresses_that_do_not_answer(
    poll_mode, target_server, dead_addresses
):
    port = target_server.port
    addresses = ",".join([*dead_addresses, "127.0.0.1"])
    handle = open_handle(poll_mode, resolve=[f"several.test:{port}:{addresses}"])

    outcome, seconds = timed_poll(
        handle, f"http://several.test:{port}/ok", timeout_seconds=3
    )

    assert outcome.up is True
    assert seconds < 3


def test_a_host_whose_addresses_all_hang_takes_one_timeout_in_all(
    poll_mode, target_server, dead_addresses
):
    port = target_server.port
    handle = open_handle(
        poll_mode, resolve=[f"dead.test:{port}:{','.join(dead_addresses)}"]
    )

    outcome, seconds = timed_poll(
        handle, f"http://dead.test:{port}/ok", timeout_seconds=1
    )

    assert outcome.error == "timed out after 1 s"
    assert seconds < 1 + MARGIN


# Nothing from the environment -------------------------------------------------


def test_it_ignores_proxies_in_the_environment(monkeypatch, target_server):
    with TargetServer() as proxy:
        for name in (
            "http_proxy",
            "HTTP_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ):
            monkeypatch.setenv(name, proxy.url("/"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)

        outcome = poll(make_handle(), target_server.url("/ok"))

        assert outcome.up is True
        assert proxy.count() == 0
    assert target_server.count("/ok") == 1


def test_it_ignores_netrc(monkeypatch, tmp_path, target_server):
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login someone password s3cret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETRC", str(netrc))

    poll(make_handle(), target_server.url("/echo"))

    assert target_server.requests[0].header("Authorization") is None


# DNS inside the deadline ------------------------------------------------------
#
# The system resolver is pointed at a server on 127.x.y.z:53 that reads
# queries and never answers. Only /etc/resolv.conf says where the resolver
# asks, so the poll runs in a child process with a private mount namespace
# and its own resolv.conf (unshare; needs root, as in CI).

CHILD = """
import json, sys, time
from datetime import UTC, datetime
from polling.engine.types import Target, Task
from tests.support.executor_probe import open_handle, run_poll

handle = open_handle(sys.argv[1])
results = []
for url in sys.argv[2:]:
    start = time.monotonic()
    task = Task(Target(1, url, timeout_seconds=1), datetime.now(UTC))
    outcome = run_poll(handle, task)
    results.append([outcome.error, outcome.dns_ms, time.monotonic() - start])
print(json.dumps(results), flush=True)
handle.close()
"""


@pytest.fixture
def silent_dns_server():
    address = random_loopback()
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        server.bind((address, 53))
    except PermissionError:
        pytest.skip("binding port 53 needs root")
    yield address
    server.close()


def run_with_resolver(nameserver: str, tmp_path: Path, mode: str, *urls: str) -> list:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) from util-linux")
    resolv = tmp_path / "resolv.conf"
    resolv.write_text(f"nameserver {nameserver}\noptions timeout:3 attempts:1\n")
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    command = (
        f"mount --bind {resolv} /etc/resolv.conf && "
        f"exec {sys.executable} {script} {mode} {' '.join(urls)}"
    )
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", command],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0 and "unshare failed" in done.stderr:
        pytest.skip(f"cannot make a mount namespace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_dns_server_that_never_answers_cannot_outlast_the_timeout(
    poll_mode, silent_dns_server, target_server, tmp_path
):
    [(error, dns_ms, seconds), (after_error, _, after_seconds)] = run_with_resolver(
        silent_dns_server,
        tmp_path,
        poll_mode,
        "http://silent.example/",
        target_server.url("/ok"),
    )

    assert error == "timed out after 1 s"
    assert dns_ms is None
    assert seconds < 1 + MARGIN
    # The abandoned lookup holds nothing up: the next poll runs at once.
    assert after_error == ""
    assert after_seconds < 1
