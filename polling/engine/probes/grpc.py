"""The gRPC health check (grpc://host:port[/service], grpcs:// over TLS):
the standard grpc.health.v1.Health/Check for the service the path names
(empty: the server as a whole). Up when the answer is SERVING; NOT_SERVING,
UNKNOWN and SERVICE_UNKNOWN, a service the server does not know and a
server without the health service are each a readable failure. The call
is the poll's first-byte phase.

The channel goes to the address resolved and checked against the blocked
networks (drivers.py); the host name stays the authority, and what TLS
verifies (against certifi's authorities).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Sequence
from datetime import datetime
from typing import Any

import certifi

from polling.engine.blocked import Network
from polling.engine.probes.drivers import DriverFailed, Watch, endpoint, resolve
from polling.engine.reasons import timed_out
from polling.engine.transport import Exchange, Transport
from polling.engine.types import Outcome, Task

SCHEMES = ("grpc", "grpcs")
# "...:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: self signed
# certificate: OK" in a handshake failure's details.
_OPENSSL_ERROR = re.compile(r"OPENSSL_internal:([A-Z_]+)(?:: ([^:]+))?")
DEFAULT_PORT = 443


def poll_steps(
    handle: Transport, task: Task, started_at: datetime
) -> Generator[Exchange, Any, Outcome]:
    """The check run here, blocking (probe()); the executor hands these
    polls to the side pool instead (engine/side_pool.py)."""
    return check(task, started_at, handle.blocked_networks)
    yield  # a generator that needs no exchange


def check(task: Task, started_at: datetime, networks: Sequence[Network]) -> Outcome:
    """One gRPC health check of the task's target; never raises."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    target = task.target
    watch = Watch()
    try:
        point = endpoint(target.url, DEFAULT_PORT)
        address = resolve(point, networks, trusted=target.trusted, watch=watch)
        service = point.path.strip("/")
        with _channel(grpc, point, address) as channel, watch.phase("query"):
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service),
                timeout=target.timeout_seconds,
            )
    except DriverFailed as failed:
        return watch.outcome(task, started_at, failed.reason)
    except grpc.RpcError as error:
        reason = _reason(grpc, error, service, target.timeout_seconds)
        return watch.outcome(task, started_at, reason)
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)
    reason = "" if status == "SERVING" else f"gRPC health: {status}"
    return watch.outcome(task, started_at, reason, status)


def _channel(grpc, point, address: str):
    where = (
        f"ipv6:[{address}]:{point.port}"
        if ":" in address
        else (f"ipv4:{address}:{point.port}")
    )
    options = [("grpc.default_authority", point.host), ("grpc.enable_retries", 0)]
    if point.scheme == "grpcs":
        with open(certifi.where(), "rb") as roots:
            credentials = grpc.ssl_channel_credentials(root_certificates=roots.read())
        options.append(("grpc.ssl_target_name_override", point.host))
        return grpc.secure_channel(where, credentials, options=options)
    return grpc.insecure_channel(where, options=options)


def _reason(grpc, error, service: str, timeout: float) -> str:
    code, details = error.code(), " ".join((error.details() or "").split())
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return timed_out(timeout)
    if code == grpc.StatusCode.NOT_FOUND:
        return f"gRPC health: SERVICE_UNKNOWN (the server does not know “{service}”)"
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return "gRPC health: the server has no health service (UNIMPLEMENTED)"
    if "Connection refused" in details:
        return "connection refused"
    if tls := _OPENSSL_ERROR.search(details):
        reason, detail = tls.groups()
        if reason == "CERTIFICATE_VERIFY_FAILED":
            return f"TLS certificate verify failed: {detail or 'unknown reason'}"
        return f"TLS error: {reason.lower().replace('_', ' ')}"
    return f"gRPC: {code.name}: {details}"
