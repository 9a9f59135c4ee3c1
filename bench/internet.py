"""The internet-like target of the capacity benchmark (issue #32).

Real targets are not 1 ms away on loopback: a poll takes 20-500 ms, most
are HTTPS, and each opens a fresh connection, since a project polled every
60 s finds the server has closed its idle connection (after 5 s on common
servers). Every project here gets a URL on 127.0.0.1 drawn from such a
spread (`project_urls`):

- a response delay from a log-normal spread, median 90 ms, clipped to
  20-2,000 ms (about 5 % above 300 ms): the long tail of slow servers;
- 70 % over HTTPS, 30 % plain HTTP;
- 3 % answer only after 15 s, beyond their 10 s timeout;
- 1 % point at a port where nothing listens: refused at once.

`InternetTarget` serves them: nginx terminates TLS and HTTP, with no
keep-alive and no TLS session reuse (one origin stands in for thousands of
hosts, so neither a kept connection nor a resumed session could be shared
between projects as it can here), and hands each request to
bench/targets.py, which answers /delay/<ms> after that long, over
connections nginx keeps. The target's CPU (nginx and targets.py) is
measured apart from the poller's.
"""

from __future__ import annotations

import math
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness import ProcessSample, TargetProcess, free_port
from nginx import _wait_for_port, nginx_binary

HTTPS_SHARE = 0.70
SLOW_SHARE = 0.03  # answer after SLOW_MS, beyond the 10 s timeout
REFUSED_SHARE = 0.01
SLOW_MS = 15_000
MEDIAN_MS = 90
SIGMA = 0.8  # of the log-normal spread of delays
MIN_MS, MAX_MS = 20, 2000
SEED = 32

CONFIG = """\
daemon off;
master_process on;
worker_processes {workers};
worker_rlimit_nofile 65536;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 30000; }}
http {{
    access_log off;
    keepalive_timeout 0;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    upstream delays {{
        server 127.0.0.1:{delay_port};
        keepalive 512;
    }}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        listen 127.0.0.1:{tls_port} ssl backlog=4096;
        ssl_certificate {certificate};
        ssl_certificate_key {certificate};
        ssl_session_cache off;
        ssl_session_tickets off;
        location / {{
            proxy_pass http://delays;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout 60s;
        }}
    }}
}}
"""


def delay_ms(draw: random.Random) -> int:
    """One server's response time: log-normal, clipped."""
    value = MEDIAN_MS * math.exp(draw.gauss(0, SIGMA))
    return int(min(max(value, MIN_MS), MAX_MS))


def project_urls(count: int, target: InternetTarget) -> list[str]:
    """The URL of each of `count` projects, the same for the same count."""
    draw = random.Random(SEED)
    urls = []
    for number in range(count):
        kind = draw.random()
        https = draw.random() < HTTPS_SHARE
        if kind < REFUSED_SHARE:
            url = target.refused_url(https)
        elif kind < REFUSED_SHARE + SLOW_SHARE:
            url = target.url(f"/delay/{SLOW_MS}", https)
        else:
            url = target.url(f"/delay/{delay_ms(draw)}", https)
        urls.append(f"{url}?p={number}")
    return urls


def write_urls(count: int, target: InternetTarget, folder: Path) -> Path:
    path = folder / f"internet-urls-{count}.txt"
    path.write_text("\n".join(project_urls(count, target)) + "\n")
    return path


class InternetTarget:
    """nginx (TLS and HTTP, no keep-alive, no session reuse) in front of
    bench/targets.py's /delay/<ms>, and a port that refuses."""

    def __init__(self, *, workers: int = 1) -> None:
        self.workers = workers
        self.port = free_port()
        self.tls_port = free_port()
        self.refused_port = free_port()  # nothing listens here
        self.folder = Path(tempfile.mkdtemp(prefix="bench-internet-"))
        self.ca_bundle = str(self.folder / "ca.pem")
        self.delays = TargetProcess()
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> InternetTarget:
        self.delays.__enter__()
        config = self.folder / "nginx.conf"
        config.write_text(
            CONFIG.format(
                workers=self.workers,
                folder=self.folder,
                port=self.port,
                tls_port=self.tls_port,
                delay_port=self.delays.port,
                certificate=self._issue_certificate(),
            )
        )
        self.process = subprocess.Popen(
            [
                str(nginx_binary()),
                "-p",
                str(self.folder),
                "-c",
                str(config),
                "-e",
                str(self.folder / "error.log"),
            ]
        )
        _wait_for_port(self.port, self.process)
        return self

    def __exit__(self, *exc_info) -> None:
        if self.process:
            self.process.terminate()
            self.process.wait(10)
        self.delays.__exit__(*exc_info)
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, path: str, https: bool) -> str:
        if https:
            return f"https://127.0.0.1:{self.tls_port}{path}"
        return f"http://127.0.0.1:{self.port}{path}"

    def refused_url(self, https: bool) -> str:
        scheme = "https" if https else "http"
        return f"{scheme}://127.0.0.1:{self.refused_port}/"

    def requests(self) -> int:
        """Requests the delay target has answered or is answering."""
        return self.delays.requests()

    def cpu_seconds(self) -> float:
        """CPU of nginx (its workers included) and of targets.py so far."""
        total = 0.0
        for pid in (self.process.pid, self.delays.process.pid):
            sample = ProcessSample(pid, descendants=True)
            sample.read()
            total += sample.cpu_seconds
        return total

    def _issue_certificate(self) -> Path:
        import trustme

        authority = trustme.CA()
        authority.cert_pem.write_to_path(self.ca_bundle)
        certificate = self.folder / "server.pem"
        authority.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(
            str(certificate)
        )
        return certificate
