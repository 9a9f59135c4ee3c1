"""What TLS costs the poller per HTTPS poll with a fresh connection, and
what reusing sessions, sharing them between handles and skipping the
certificate read save (issue #32, item 4).

    python bench/tls_reuse.py --requests 2000

nginx serves https on two ports, closing every connection after one
response (as a server does for a project polled every 60 s): one refuses
session resumption, one allows it (a session cache and tickets, as
nginx's and most servers' defaults). One thread then requests back to back
on libcurl handles set up as the probe's are (polling.engine.transport),
and prints the client's CPU per request for each variant:

- full: a full handshake every time (no resumption possible);
- full+certinfo: the same, reading the certificate chain (what a poll
  does when its certificate's expiry is due to be read);
- resumed: the server allows resumption; the handle's session cache
  (libcurl keeps it in the multi or easy handle) resumes;
- resumed+certinfo: resumption allowed, the chain asked for;
- no-cache: resumption allowed by the server, session cache off
  (CURLOPT_SSL_SESSIONID_CACHE 0): what the probe does when it must read
  a certificate.

It also reports whether libcurl gave a certificate chain on a resumed
handshake: it does not, as the server sends none, which is why the probe
turns resumption off for a request that must read the certificate.

Last, `rotating-N`: resumption allowed, requests going round N origins
(ports) on one handle, as a worker's polls go round its projects: how
many origins libcurl's session cache holds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import ROOT, free_port
from nginx import _wait_for_port, nginx_binary

sys.path.insert(0, str(ROOT))

import pycurl

CONFIG = """\
daemon off;
master_process on;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_timeout 0;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    ssl_certificate {certificate};
    ssl_certificate_key {certificate};
    server {{
        listen 127.0.0.1:{full_port} ssl;
        ssl_session_cache off;
        ssl_session_tickets off;
        location / {{ return 200 "ok"; }}
    }}
    server {{
        listen 127.0.0.1:{resume_port} ssl;
{more_listens}
        ssl_session_cache shared:SSL:10m;
        ssl_session_tickets on;
        location / {{ return 200 "ok"; }}
    }}
}}
"""


def handle(ca_bundle: str, *, certinfo: bool, session_cache: bool) -> pycurl.Curl:
    from polling.engine.transport import TLS_GROUPS

    curl = pycurl.Curl()
    curl.setopt(pycurl.NOSIGNAL, 1)
    curl.setopt(pycurl.CAINFO, ca_bundle)
    curl.setopt(pycurl.SSL_EC_CURVES, TLS_GROUPS)
    curl.setopt(pycurl.WRITEFUNCTION, lambda chunk: None)
    curl.setopt(pycurl.OPT_CERTINFO, int(certinfo))
    curl.setopt(pycurl.SSL_SESSIONID_CACHE, int(session_cache))
    return curl


def measure(url: str, curl: pycurl.Curl, requests: int) -> dict:
    curl.setopt(pycurl.URL, url)
    curl.perform()  # the first handshake is a full one in every variant
    chains = 0
    started = time.process_time()
    for _ in range(requests):
        curl.perform()
        chains += bool(curl.getinfo(pycurl.INFO_CERTINFO))
    cpu = time.process_time() - started
    return {"cpu_us_per_request": round(cpu / requests * 1e6), "chains_read": chains}


def distinct_ports(count: int) -> list[int]:
    """Free ports, none twice (free_port() may give one back again)."""
    ports: set[int] = set()
    while len(ports) < count:
        ports.add(free_port())
    return list(ports)


def measure_round(urls: list[str], curl: pycurl.Curl, requests: int) -> dict:
    for url in urls:  # a first, full handshake with each
        curl.setopt(pycurl.URL, url)
        curl.perform()
    started = time.process_time()
    for number in range(requests):
        curl.setopt(pycurl.URL, urls[number % len(urls)])
        curl.perform()
    cpu = time.process_time() - started
    return {"cpu_us_per_request": round(cpu / requests * 1e6)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--origins", default="10,20,30,60,120")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-tls-"))
    import trustme

    authority = trustme.CA()
    ca_bundle = str(folder / "ca.pem")
    authority.cert_pem.write_to_path(ca_bundle)
    certificate = folder / "server.pem"
    authority.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(
        str(certificate)
    )
    rounds = [int(each) for each in options.origins.split(",")]
    full_port, resume_port, *ports = distinct_ports(max(rounds) + 2)
    config = folder / "nginx.conf"
    config.write_text(
        CONFIG.format(
            folder=folder,
            certificate=certificate,
            full_port=full_port,
            resume_port=resume_port,
            more_listens="\n".join(
                f"        listen 127.0.0.1:{port} ssl;" for port in ports
            ),
        )
    )
    nginx = subprocess.Popen(
        [str(nginx_binary()), "-p", str(folder), "-c", str(config)],
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(full_port, nginx)
        full = f"https://127.0.0.1:{full_port}/"
        resume = f"https://127.0.0.1:{resume_port}/"
        variants = {
            "full": (full, False, True),
            "full+certinfo": (full, True, True),
            "resumed": (resume, False, True),
            "resumed+certinfo": (resume, True, True),
            "no-cache": (resume, False, False),
            "no-cache+certinfo": (resume, True, False),
        }
        for name, (url, certinfo, cache) in variants.items():
            curl = handle(ca_bundle, certinfo=certinfo, session_cache=cache)
            out = measure(url, curl, options.requests)
            print(json.dumps({"variant": name, **out}), flush=True)
            curl.close()
        for count in rounds:
            urls = [f"https://127.0.0.1:{port}/" for port in ports[:count]]
            curl = handle(ca_bundle, certinfo=False, session_cache=True)
            out = measure_round(urls, curl, options.requests)
            print(json.dumps({"variant": f"rotating-{count}", **out}), flush=True)
            curl.close()
    finally:
        nginx.terminate()
        nginx.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
