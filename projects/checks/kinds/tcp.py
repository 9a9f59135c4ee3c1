"""TCP port: up when a connection is accepted in time; its response time
is the time to connect (polling/engine/probes/tcp.py)."""

from __future__ import annotations

from urllib.parse import SplitResult

from django.core.exceptions import ValidationError

from projects.checks.kinds.kind import CheckKind

EXAMPLE = "tcp://db.example.com:5432"


def check_url(parts: SplitResult) -> None:
    if not parts.port:
        raise ValidationError(
            "A TCP check needs a port: %(example)s.", params={"example": EXAMPLE}
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValidationError(
            "A TCP check is only tcp://host:port, with no path or query, "
            "e.g. %(example)s.",
            params={"example": EXAMPLE},
        )
    if parts.username or parts.password:
        raise ValidationError("A TCP check cannot log in: remove the user name.")


def up_rules(project) -> list[str]:
    return ["the port accepts a connection"]


KIND = CheckKind(
    name="tcp",
    label="TCP port",
    schemes=("tcp",),
    example=EXAMPLE,
    sends_http=False,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="A TCP check only opens a connection: {what}.",
    measures="connect time",
)
