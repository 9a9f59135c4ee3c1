"""nginx as the fast benchmark target: our own process, config and log.

The binary is /usr/sbin/nginx when installed. Otherwise it is taken out of
Debian's `nginx` package (`apt-get download` + `dpkg-deb -x`) into a cache
folder: installing the package would also start the system's nginx service
on port 80, which a benchmark has no business doing.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from harness import free_port

CACHE = Path.home() / ".cache" / "uptime-monitor-bench" / "nginx"
CONFIG = """\
daemon off;
master_process on;
worker_processes {workers};
worker_rlimit_nofile 65536;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 30000; }}
http {{
    log_format counted '$status';
    access_log off;
    keepalive_timeout 120s;
    keepalive_requests 1000000;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        access_log {folder}/access.log counted;
        location = /ok {{ default_type text/plain; return 200 "ok"; }}
        location / {{ return 404; }}
    }}
{tls_server}}}
"""
# HTTPS with a full handshake for every request: no keep-alive, no session
# cache, no tickets, so neither client can resume a session.
TLS_SERVER = """\
    server {{
        listen 127.0.0.1:{port} ssl backlog=4096;
        ssl_certificate {certificate};
        ssl_certificate_key {certificate};
        ssl_session_cache off;
        ssl_session_tickets off;
        keepalive_timeout 0;
        access_log {folder}/access.log counted;
        location = /ok {{ default_type text/plain; return 200 "ok"; }}
        location / {{ return 404; }}
    }}
"""


def nginx_binary() -> Path:
    """The nginx to run, fetched from Debian's package if none is here."""
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    cached = CACHE / "usr" / "sbin" / "nginx"
    if not cached.exists():
        _extract_debian_package(CACHE)
    return cached


def _extract_debian_package(into: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        download = subprocess.run(
            ["apt-get", "download", "nginx"], cwd=folder, capture_output=True, text=True
        )
        if download.returncode != 0:
            raise RuntimeError(
                "nginx is not installed and `apt-get download nginx` failed "
                f"(try `apt-get update` first):\n{download.stderr}"
            )
        package = next(Path(folder).glob("nginx_*.deb"))
        into.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", str(package), str(into)], check=True)


class NginxTarget:
    """nginx answering `GET /ok` with 200 "ok", one access-log line per
    request so the requests it served can be counted.

    It also serves https on `tls_port`, with a certificate for 127.0.0.1
    from a throwaway authority whose PEM is at `ca_bundle`, and a fresh
    handshake for every request.
    """

    def __init__(self, *, workers: int = 1) -> None:
        self.workers = workers
        self.port = free_port()
        self.tls_port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="bench-nginx-"))
        self.ca_bundle = str(self.folder / "ca.pem")
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> NginxTarget:
        config = self.folder / "nginx.conf"
        tls_server = TLS_SERVER.format(
            port=self.tls_port,
            certificate=self._issue_certificate(),
            folder=self.folder,
        )
        config.write_text(
            CONFIG.format(
                workers=self.workers,
                folder=self.folder,
                port=self.port,
                tls_server=tls_server,
            )
        )
        binary = str(nginx_binary())
        error_log = str(self.folder / "error.log")
        self.process = subprocess.Popen(
            [binary, "-p", str(self.folder), "-c", str(config), "-e", error_log]
        )
        _wait_for_port(self.port, self.process)
        return self

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        self.process.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def tls_url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.tls_port}{path}"

    def _issue_certificate(self) -> Path:
        import trustme

        authority = trustme.CA()
        authority.cert_pem.write_to_path(self.ca_bundle)
        certificate = self.folder / "server.pem"
        authority.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(
            str(certificate)
        )
        return certificate

    def requests(self) -> int:
        """Requests answered so far (lines in the access log)."""
        with open(self.folder / "access.log", "rb") as log:
            return sum(
                chunk.count(b"\n") for chunk in iter(lambda: log.read(1 << 20), b"")
            )


def _wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nginx did not start listening")
