"""Benchmark: the image's size and each role's memory when idle.

Builds the image on the local Debian base and starts compose.yaml as the
container test does (tests/support/podman.py and compose_stack.py), waits,
then reads from /proc on the host the memory of every process in each
container: PSS (each shared page divided among the processes sharing it,
so gunicorn's forked workers are not counted twice) and RSS. The poller
polls one project (the test's target) every INTERVAL seconds meanwhile, so
"idle" is the steady state of a small install, not an empty one.

    .venv/bin/python bench/container_footprint.py              # 60 s idle
    .venv/bin/python bench/container_footprint.py --idle 10    # a quick check
    .venv/bin/python bench/container_footprint.py --publish    # in docs/benchmarks/

Needs what tests/container/test_compose.py needs (podman, podman-compose,
mmdebstrap, runc; root).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

from harness import machine, markdown_table, process_tree, relative_command
from run_logs import publish_run

from tests.support.compose_stack import Stack, start_stack
from tests.support.podman import ROOT, base_image, build_image, usable_podman

APP_IMAGE = "localhost/uptime-monitor:container-bench"
POSTGRES_IMAGE = "localhost/uptime-monitor-test-postgres:container-bench"
ROLES = ("web", "worker", "tasks", "db")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=float, default=60, help="seconds to wait")
    parser.add_argument("--interval", type=int, default=60, help="poll interval, s")
    parser.add_argument("--publish", action="store_true")
    args = parser.parse_args()

    base = base_image()
    podman = usable_podman(base, Path(tempfile.mkdtemp(prefix="uptime-bench-")))
    build_image(podman, APP_IMAGE, ROOT / "Containerfile", ROOT, base)
    postgres = ROOT / "tests" / "container" / "postgres.Containerfile"
    build_image(podman, POSTGRES_IMAGE, postgres, postgres.parent, base)
    directory = Path(tempfile.mkdtemp(prefix="uptime-bench-compose-"))
    stack = start_stack(
        podman, directory, app_image=APP_IMAGE, postgres_image=POSTGRES_IMAGE
    )
    try:
        add_target_project(stack, args.interval)
        time.sleep(args.idle)
        rows = [role_memory(stack, role) for role in ROLES]
    finally:
        stack.down()
    report = render(args, podman, base, rows)
    print(report)
    if args.publish:
        print(publish_run("container-footprint", report))


def render(args, podman, base: str, rows: list[dict]) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout.strip()
    python = podman.run("run", "--rm", "--entrypoint=python", APP_IMAGE, "-V")
    return "\n".join(
        [
            f"#### Container footprint run {now}",
            "",
            f"- commit: `{commit}`",
            f"- machine: {machine()}; in the image, {python.stdout.strip()}",
            f"- image: {image_megabytes(podman, APP_IMAGE)} MB, of which the "
            f"Debian base {image_megabytes(podman, base)} MB",
            f"- idle for {args.idle:.0f} s after the start, one project polled "
            f"every {args.interval} s",
            f"- command: `{relative_command(sys.argv)}`",
            "",
            markdown_table(rows),
            "",
        ]
    )


def add_target_project(stack: Stack, interval: int) -> None:
    key = stack.exec(
        "web", "/app/container/entrypoint.sh", "createapikey", "bench", "--scope=write"
    ).stdout.split()[-1]
    body = {"name": "target", "url": "http://target:8080/", "interval": interval}
    request = urllib.request.Request(
        f"http://{stack.web_address()}/api/v1/projects/",
        data=json.dumps({**body, "interval_unit": "seconds"}).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=30).close()


def role_memory(stack: Stack, role: str) -> dict:
    pid = stack.state(role)["Pid"]
    pss = rss = 0
    processes = process_tree(pid)
    for process in processes:
        fields = smaps_rollup(process)
        pss += fields.get("Pss", 0)
        rss += fields.get("Rss", 0)
    return {
        "role": role,
        "processes": len(processes),
        "PSS MB": f"{pss / 1024:.0f}",
        "RSS MB (shared pages counted in each)": f"{rss / 1024:.0f}",
    }


def smaps_rollup(pid: int) -> dict[str, int]:
    """kB by field name; empty for a process that has exited."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines()[1:]:
        name, _, value = line.partition(":")
        fields[name] = int(value.split()[0])
    return fields


def image_megabytes(podman, image: str) -> int:
    size = podman.run("image", "inspect", "--format={{.Size}}", image).stdout
    return round(int(size) / 1_000_000)


if __name__ == "__main__":
    main()
