"""WebSocket (ws://, wss://): up when the upgrade succeeds and, with
`?send=`, a reply containing `?expect=` arrives in time;
polling/engine/probes/websocket.py."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qs, parse_qsl, urlsplit

from django.core.exceptions import ValidationError

from projects.checks.kinds.kind import CheckKind

EXAMPLE = "wss://live.example.com/socket?send=ping&expect=pong"


def check_url(parts: SplitResult) -> None:
    names = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True)]
    for name in ("send", "expect"):
        if names.count(name) > 1:
            raise ValidationError("“%(name)s” is given twice.", params={"name": name})
    if "expect" in names and "send" not in names:
        raise ValidationError(
            "“expect” is looked for in the reply to a message: add ?send=, "
            "e.g. %(example)s.",
            params={"example": EXAMPLE},
        )
    if parts.fragment:
        raise ValidationError("A WebSocket check's URL has no #fragment.")


def up_rules(project) -> list[str]:
    params = parse_qs(urlsplit(project.url).query, keep_blank_values=True)
    rules = ["the upgrade to WebSocket succeeds (101)"]
    if "send" in params:
        expected = params.get("expect", [""])[0]
        reply = f"a reply containing “{expected}”" if expected else "a reply"
        rules.append(f"“{params['send'][0]}” gets {reply}")
    return rules


KIND = CheckKind(
    name="websocket",
    label="WebSocket",
    schemes=("ws", "wss"),
    example=EXAMPLE,
    sends_http=False,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="A WebSocket check upgrades and sends one message: {what}.",
    measures="upgrade and reply time",
    tls_schemes=("wss",),
    secret_credentials=True,
)
