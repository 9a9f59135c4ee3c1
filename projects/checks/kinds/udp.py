"""UDP: the project's payload sent to host:port; up when a reply comes in
time, holding (or matching) the expected reply when one is set
(polling/engine/probes/udp.py)."""

from __future__ import annotations

from urllib.parse import SplitResult

from django.core.exceptions import ValidationError

from projects.checks.kinds.kind import CheckKind

EXAMPLE = "udp://ntp.example.com:123"


def check_url(parts: SplitResult) -> None:
    if not parts.port:
        raise ValidationError(
            "A UDP check needs a port: %(example)s.", params={"example": EXAMPLE}
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValidationError(
            "A UDP check is only udp://host:port, with no path or query, "
            "e.g. %(example)s.",
            params={"example": EXAMPLE},
        )
    if parts.username or parts.password:
        raise ValidationError("A UDP check cannot log in: remove the user name.")


def up_rules(project) -> list[str]:
    rules = ["a reply to the payload comes back"]
    if project.expected_reply:
        verb = "matches" if project.expected_reply_mode == "regex" else "contains"
        rules.append(f"the reply {verb} “{project.expected_reply}”")
    return rules


KIND = CheckKind(
    name="udp",
    label="UDP",
    schemes=("udp",),
    example=EXAMPLE,
    sends_http=False,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="A UDP check sends its payload, not an HTTP request: {what}.",
    measures="time to the reply",
    options=("udp_payload", "udp_payload_hex", "expected_reply", "expected_reply_mode"),
)
