"""A real gRPC server on 127.0.0.1 with the standard health service
(grpcio-health-checking), whose statuses a test sets."""

from __future__ import annotations

from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
UNKNOWN = health_pb2.HealthCheckResponse.UNKNOWN


class HealthServer:
    def __init__(
        self,
        *,
        with_health: bool = True,
        pem: bytes | tuple[bytes, bytes] | None = None,
    ) -> None:
        """`pem`: a key and certificate in one, or (key, certificate chain),
        for a server that speaks TLS."""
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.health = health.HealthServicer()
        if with_health:
            health_pb2_grpc.add_HealthServicer_to_server(self.health, self._server)
        if pem is None:
            self.port = self._server.add_insecure_port("127.0.0.1:0")
        else:
            key, chain = pem if isinstance(pem, tuple) else (pem, pem)
            credentials = grpc.ssl_server_credentials([(key, chain)])
            self.port = self._server.add_secure_port("127.0.0.1:0", credentials)

    def set(self, service: str, status) -> None:
        self.health.set(service, status)

    def __enter__(self) -> HealthServer:
        self._server.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.stop(grace=None).wait(5)
