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

Then `rotating-N`: resumption allowed, requests going round N origins
(ports) on one handle, as a worker's polls go round its projects: how
many origins libcurl's session cache holds.

Last, with `--hosts N` (e.g. 2000,10000), the poller's own path at N
hosts: nginx listens on N more ports (each an origin to libcurl, as N
hosts are), allows resumption and closes every connection after one
response; a child process runs the engine's Executor on make_transfers()
and poll_steps() as runpoller does (100 slots), goes round all N twice
(the first reads each certificate, the second keeps a session) and then
`--rounds` more times, measured: its own CPU per poll (getrusage; nginx's
is apart), the handshakes nginx resumed, and its RSS. Each run is made
with the code of `--before` (a checkout, e.g. main's worktree) and of
this one, interleaved, `--repeats` times.
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
worker_rlimit_nofile 19500;
events {{ worker_connections 19000; }}
http {{
    access_log off;
    keepalive_timeout 0;
    log_format resumed $ssl_session_reused;
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
    server {{
{host_listens}
        access_log {folder}/hosts.log resumed;
        ssl_session_cache shared:HOSTS:50m;
        ssl_session_timeout 1h;
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


def hosts_run(code: str, ca_bundle: str, ports: list[int], rounds: int) -> dict:
    """bench/tls_hosts_client.py: the poller's part, in a process of its
    own (the one whose CPU is measured), with the engine of `code`."""
    out = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("tls_hosts_client.py")),
            code,
            ca_bundle,
            str(rounds),
            ",".join(map(str, ports)),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=code,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def resumed_share(log: Path) -> tuple[int, int]:
    """(resumed, handshakes) logged by nginx since the log was emptied."""
    marks = log.read_text().split()
    log.write_text("")
    return marks.count("r"), len(marks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--origins", default="10,20,30,60,120")
    parser.add_argument("--hosts", default="", help="e.g. 2000,10000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--before", default="", help="a checkout of the old code")
    parser.add_argument("--only-hosts", action="store_true")
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
    host_counts = [int(each) for each in options.hosts.split(",") if each]
    full_port, resume_port, *ports = distinct_ports(
        max(rounds) + 2 + max(host_counts, default=0)
    )
    ports, host_ports = ports[: max(rounds)], ports[max(rounds) :]
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
            host_listens="\n".join(
                f"        listen 127.0.0.1:{port} ssl;" for port in host_ports
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
            if options.only_hosts:
                break
            curl = handle(ca_bundle, certinfo=certinfo, session_cache=cache)
            out = measure(url, curl, options.requests)
            print(json.dumps({"variant": name, **out}), flush=True)
            curl.close()
        for count in [] if options.only_hosts else rounds:
            urls = [f"https://127.0.0.1:{port}/" for port in ports[:count]]
            curl = handle(ca_bundle, certinfo=False, session_cache=True)
            out = measure_round(urls, curl, options.requests)
            print(json.dumps({"variant": f"rotating-{count}", **out}), flush=True)
            curl.close()
        codes = {"after": str(ROOT)}
        if options.before:
            codes = {"before": options.before, **codes}
        log = folder / "hosts.log"
        for count in host_counts:
            for repeat in range(options.repeats):
                for name, code in codes.items():
                    resumed_share(log)
                    out = hosts_run(code, ca_bundle, host_ports[:count], options.rounds)
                    resumed, handshakes = resumed_share(log)
                    row = {"hosts": count, "run": name, "repeat": repeat, **out}
                    # Of every round, the 2 unmeasured ones included.
                    row["resumed"] = f"{resumed}/{handshakes}"
                    print(json.dumps(row), flush=True)
    finally:
        nginx.terminate()
        nginx.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
