"""Ping: icmp://host. Up when at least one of `ping_count` echo requests
is answered and the loss is at most `ping_max_loss_percent`; the average
round trip is the poll's time (polling/engine/probes/icmp.py)."""

from __future__ import annotations

from urllib.parse import SplitResult

from django.core.exceptions import ValidationError

from projects.checks.kinds.kind import CheckKind

EXAMPLE = "icmp://router.example.com"


def check_url(parts: SplitResult) -> None:
    if parts.port or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValidationError(
            "A ping is only icmp://host, with no port, path or query, "
            "e.g. %(example)s.",
            params={"example": EXAMPLE},
        )
    if parts.username or parts.password:
        raise ValidationError("A ping cannot log in: remove the user name.")


def up_rules(project) -> list[str]:
    return [
        f"at least one of {project.ping_count} pings is answered",
        f"the loss is at most {project.ping_max_loss_percent} %",
    ]


KIND = CheckKind(
    name="icmp",
    label="ping (ICMP)",
    schemes=("icmp",),
    example=EXAMPLE,
    sends_http=False,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="A ping sends ICMP echo requests, not an HTTP request: {what}.",
    measures="round trip",
    options=("ping_count", "ping_max_loss_percent"),
)
