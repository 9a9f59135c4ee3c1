"""MySQL and MariaDB: up when a connection logs in and the optional query
answers (with the expected first value); polling/engine/probes/mysql.py."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qs, urlsplit

from django.core.exceptions import ValidationError

from projects.checks.kinds.driver_urls import check_expectation, check_parameters
from projects.checks.kinds.kind import CheckKind

EXAMPLE = "mysql://monitor:secret@db.example.com:3306/app?query=SELECT%201"


def check_url(parts: SplitResult) -> None:
    params = check_parameters(parts, "MySQL", ("query", "expect", "ssl"))
    check_expectation(params)
    if params.get("ssl", "true").lower() not in ("true", "false"):
        raise ValidationError("ssl is true or false.")
    if "/" in parts.path.strip("/"):
        raise ValidationError(
            "The path is the database's name: %(example)s.",
            params={"example": EXAMPLE},
        )


def up_rules(project) -> list[str]:
    params = parse_qs(urlsplit(project.url).query)
    rules = ["the server accepts the login"]
    if params.get("query"):
        rules.append(f"“{params['query'][0]}” runs")
    if params.get("expect"):
        rules.append(f"its first value is “{params['expect'][0]}”")
    return rules


KIND = CheckKind(
    name="mysql",
    label="MySQL / MariaDB",
    schemes=("mysql",),
    example=EXAMPLE,
    sends_http=False,
    secret_credentials=True,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="A MySQL check logs in and runs a query: {what}.",
    measures="connect and query time",
)
