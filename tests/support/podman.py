"""podman for the container tests: a configuration under which it runs
containers on this machine (or the reason it cannot), and the images.

Two things keep podman's defaults from running a container in a VM like
CI's, both seen on Debian 12's podman 4.3:
- crun 1.8 refuses a host whose cgroup v2 hierarchy holds a controller
  while the others are on v1 ("cgroups in hybrid mode not supported");
  runc runs there;
- podman asks for rlimits (nofile 1048576, nproc 4194304) above the hard
  limits of a process without CAP_SYS_RESOURCE; limits within this
  process's own (nproc at most pid_max) are granted.
So when `podman run` fails as it is, it is tried again with a
containers.conf of our own (CONTAINERS_CONF) that names runc and those
limits; when that fails too, the tests skip with both errors.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# runc is needed only where crun fails (above); the skip then says so.
TOOLS = ("podman", "podman-compose", "mmdebstrap")
INSTALL_HINT = "apt-get install -y podman podman-compose mmdebstrap runc"
# The host's CA bundle, for pip inside a build behind a TLS-intercepting
# proxy; it holds the usual public CAs too, so it is right on any machine.
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
BUILD_TIMEOUT = 900


class PodmanUnusable(Exception):
    """podman cannot run containers here; the message says why."""


class PodmanFailed(Exception):
    """A podman command exited non-zero; the message has its stderr."""

    def __init__(self, done: subprocess.CompletedProcess) -> None:
        command = " ".join(done.args)
        super().__init__(f"{command} exited {done.returncode}:\n{done.stderr[-3000:]}")


@dataclass
class Podman:
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    def run(self, *args: str, timeout: float = 120, check: bool = True):
        done = subprocess.run(
            ["podman", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and done.returncode != 0:
            raise PodmanFailed(done)
        return done

    def compose(self, directory: Path, *args: str, timeout: float = 300):
        return subprocess.run(
            ["podman-compose", *args],
            cwd=directory,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def base_image() -> str:
    """The local copy of debian:bookworm-slim, built (or found) by the
    project's own script."""
    script = ROOT / "container" / "build-base.sh"
    done = subprocess.run(
        [str(script)], capture_output=True, text=True, timeout=BUILD_TIMEOUT
    )
    if done.returncode != 0:
        raise RuntimeError(f"{script} failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip()


def usable_podman(base: str, config_dir: Path) -> Podman:
    """A Podman whose `run` works, as podman is or with our containers.conf;
    raises PodmanUnusable with both errors when neither runs `true`."""
    as_is = Podman()
    first = as_is.run("run", "--rm", base, "true", check=False)
    if first.returncode == 0:
        return as_is
    config = config_dir / "containers.conf"
    config.write_text(fallback_config())
    adjusted = Podman(env={**os.environ, "CONTAINERS_CONF": str(config)})
    second = adjusted.run("run", "--rm", base, "true", check=False)
    if second.returncode == 0:
        return adjusted
    raise PodmanUnusable(
        "podman cannot run a container here. As installed: "
        f"{first.stderr.strip()!r}; with runc and rlimits within this "
        f"process's own ({config}): {second.stderr.strip()!r}"
    )


def fallback_config() -> str:
    files = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    processes = min(resource.getrlimit(resource.RLIMIT_NPROC)[1], pid_max())
    return (
        "[containers]\n"
        f'default_ulimits = ["nofile={files}:{files}", '
        f'"nproc={processes}:{processes}"]\n'
        "[engine]\n"
        'runtime = "runc"\n'
    )


def pid_max() -> int:
    return int(Path("/proc/sys/kernel/pid_max").read_text())


def build_image(
    podman: Podman, tag: str, containerfile: Path, context: Path, base: str
) -> str:
    """Build `containerfile` on `base` as `tag`; the layer cache makes a
    rebuild of unchanged steps cost seconds. Docker format, as OCI images
    carry no HEALTHCHECK."""
    args = [
        "build",
        "--format=docker",
        "--network=host",
        f"--build-arg=BASE_IMAGE={base}",
        f"--file={containerfile}",
        f"--tag={tag}",
    ]
    if HOST_CA_BUNDLE.exists():
        args += [
            "--build-arg=PIP_CERT=/run/host-ca.crt",
            f"--volume={HOST_CA_BUNDLE}:/run/host-ca.crt:ro",
        ]
    done = podman.run(*args, str(context), timeout=BUILD_TIMEOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"podman build of {containerfile} failed:\n{done.stderr}")
    return tag
