"""gRPC health: up when grpc.health.v1.Health/Check answers SERVING for
the service the path names; polling/engine/probes/grpc.py."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from django.core.exceptions import ValidationError

from projects.checks.kinds.kind import CheckKind

EXAMPLE = "grpc://api.example.com:50051/my.package.Service"


def check_url(parts: SplitResult) -> None:
    if not parts.port:
        raise ValidationError(
            "A gRPC check needs a port: %(example)s.", params={"example": EXAMPLE}
        )
    if parts.query or parts.fragment:
        raise ValidationError(
            "A gRPC check is grpc://host:port/service, with no query: %(example)s.",
            params={"example": EXAMPLE},
        )
    if "/" in parts.path.strip("/"):
        raise ValidationError(
            "The path is one service's full name: %(example)s.",
            params={"example": EXAMPLE},
        )
    if parts.username or parts.password:
        raise ValidationError(
            "A gRPC health check cannot log in: remove the user name."
        )


def up_rules(project) -> list[str]:
    service = urlsplit(project.url).path.strip("/")
    what = f"the service “{service}”" if service else "the server"
    return [f"the health service says {what} is SERVING"]


KIND = CheckKind(
    name="grpc",
    label="gRPC health",
    schemes=("grpc", "grpcs"),
    example=EXAMPLE,
    sends_http=False,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="A gRPC check calls the standard health service: {what}.",
    measures="call time",
    # The poller reads a grpcs:// server's certificate as an HTTPS one's
    # (polling/engine/probes/grpc.py): its expiry is watched the same way.
    tls_schemes=("grpcs",),
)
