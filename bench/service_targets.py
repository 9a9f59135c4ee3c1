"""The service checks' targets for the capacity benchmark, in one process
of their own (their CPU is never the poller's), all on 127.0.0.1:

    python bench/service_targets.py --smtp-port 25051 --ws-port 25052 \\
        --grpc-port 25053

- SMTP: aiosmtpd, greeting and answering EHLO, NOOP and QUIT (no TLS);
- WebSocket: the websockets package, echoing each text message as
  "echo: <text>" (as tests/support/websocket_server.py);
- gRPC: grpcio with the standard health service, the server SERVING.

Runs until terminated.
"""

from __future__ import annotations

import argparse
import signal
import threading
from concurrent import futures

import grpc
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Sink
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from websockets.sync.server import serve

GRPC_WORKERS = 8


def echo(connection) -> None:
    for message in connection:
        connection.send(f"echo: {message}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smtp-port", type=int, required=True)
    parser.add_argument("--ws-port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, required=True)
    ports = parser.parse_args()

    # A fixed name: aiosmtpd otherwise asks getfqdn() on every connection,
    # which can wait on a name server for seconds.
    smtp = Controller(
        Sink(), hostname="127.0.0.1", port=ports.smtp_port, server_hostname="bench.lan"
    )
    smtp.start()
    websocket = serve(echo, "127.0.0.1", ports.ws_port)
    threading.Thread(target=websocket.serve_forever, daemon=True).start()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=GRPC_WORKERS))
    service = health.HealthServicer()
    service.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(service, server)
    server.add_insecure_port(f"127.0.0.1:{ports.grpc_port}")
    server.start()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(1):
        pass
    server.stop(grace=None)
    websocket.shutdown()
    smtp.stop()


if __name__ == "__main__":
    main()
