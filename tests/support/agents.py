"""Agents as real processes for the tests: `manage.py runagent` with no
database setting at all (docs/agents.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.support.processes import ROOT


def start_agent(
    server_url: str, token: str, buffer_path, **extra_env: str
) -> subprocess.Popen:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")
    }
    env.update(ENV_FILE="/nonexistent", AGENT_TOKEN=token, AGENT_SYNC_SECONDS="0.5")
    env.update(extra_env)
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "runagent",
            "--server",
            server_url,
            "--buffer",
            str(buffer_path),
            "--status-interval",
            "1",
        ],
        cwd=ROOT,
        env=env,
        # Files, not pipes: a pipe nobody reads fills and stops the agent.
        stdout=open(f"{buffer_path}.out", "w"),
        stderr=open(f"{buffer_path}.err", "w"),
    )


def stop(agent: subprocess.Popen) -> tuple[int, str, str]:
    """SIGTERM, then the exit status and what the agent printed."""
    agent.send_signal(signal.SIGTERM)
    return wait(agent)


def wait(agent: subprocess.Popen) -> tuple[int, str, str]:
    try:
        agent.wait(timeout=60)
    finally:
        agent.kill()
    return agent.returncode, *output(agent)


def output(agent: subprocess.Popen) -> tuple[str, str]:
    """What the agent wrote to stdout and stderr so far."""
    buffer_path = agent.args[agent.args.index("--buffer") + 1]
    with open(f"{buffer_path}.out") as out, open(f"{buffer_path}.err") as err:
        return out.read(), err.read()
