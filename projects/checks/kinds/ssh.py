"""SSH: up when the server sends its identification line ("SSH-2.0-…")
in time, holding the expected text when one is set; the line is the
poll's message (polling/engine/probes/ssh.py)."""

from __future__ import annotations

from urllib.parse import SplitResult

from django.core.exceptions import ValidationError

from projects.checks.kinds.kind import CheckKind

EXAMPLE = "ssh://git.example.com:22"


def check_url(parts: SplitResult) -> None:
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValidationError(
            "An SSH check is only ssh://host[:port], with no path or query, "
            "e.g. %(example)s.",
            params={"example": EXAMPLE},
        )
    if parts.username or parts.password:
        raise ValidationError(
            "An SSH check only reads the server's banner: remove the user name."
        )


def up_rules(project) -> list[str]:
    rules = ["the server sends an SSH- identification line"]
    if project.expected_reply:
        verb = "matches" if project.expected_reply_mode == "regex" else "contains"
        rules.append(f"the line {verb} “{project.expected_reply}”")
    return rules


KIND = CheckKind(
    name="ssh",
    label="SSH",
    schemes=("ssh",),
    example=EXAMPLE,
    sends_http=False,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="An SSH check only reads the server's banner: {what}.",
    measures="time to the banner",
    options=("expected_reply", "expected_reply_mode"),
    default_port=22,
)
