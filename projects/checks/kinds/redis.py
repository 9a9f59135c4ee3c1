"""Redis (rediss:// over TLS): up when a connection logs in and the
command (default PING) answers, with the expected reply when one is
given; polling/engine/probes/redis.py."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qs, urlsplit

from django.core.exceptions import ValidationError

from projects.checks.kinds.driver_urls import check_parameters
from projects.checks.kinds.kind import CheckKind

EXAMPLE = "redis://:secret@cache.example.com:6379/0?command=PING&expect=PONG"


def check_url(parts: SplitResult) -> None:
    params = check_parameters(parts, "Redis", ("command", "query", "expect"))
    if "command" in params and "query" in params:
        raise ValidationError("Give the command once: ?command= (or ?query=).")
    database = parts.path.strip("/")
    if database and not database.isdigit():
        raise ValidationError(
            "The path is the database's number: %(example)s.",
            params={"example": EXAMPLE},
        )


def up_rules(project) -> list[str]:
    params = parse_qs(urlsplit(project.url).query)
    command = (params.get("command") or params.get("query") or ["PING"])[0]
    rules = [f"the server answers {command}"]
    if params.get("expect"):
        rules.append(f"with “{params['expect'][0]}”")
    return rules


KIND = CheckKind(
    name="redis",
    label="Redis",
    schemes=("redis", "rediss"),
    example=EXAMPLE,
    sends_http=False,
    secret_credentials=True,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="A Redis check sends one command: {what}.",
    measures="connect and command time",
)
