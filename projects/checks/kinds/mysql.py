"""MySQL and MariaDB: up when a connection logs in and the optional query
answers (with the expected first value); polling/engine/probes/mysql.py."""

from __future__ import annotations

from urllib.parse import SplitResult

from django.core.exceptions import ValidationError

from projects.checks.kinds.driver_urls import (
    check_database_path,
    check_expectation,
    check_parameters,
    sql_up_rules,
)
from projects.checks.kinds.kind import CheckKind

EXAMPLE = "mysql://monitor:secret@db.example.com:3306/app?query=SELECT%201"


def check_url(parts: SplitResult) -> None:
    params = check_parameters(parts, "MySQL", ("query", "expect", "ssl"))
    check_expectation(params)
    if params.get("ssl", "true").lower() not in ("true", "false"):
        raise ValidationError("ssl is true or false.")
    check_database_path(parts, EXAMPLE)


KIND = CheckKind(
    name="mysql",
    label="MySQL / MariaDB",
    schemes=("mysql",),
    example=EXAMPLE,
    sends_http=False,
    secret_credentials=True,
    check_url=check_url,
    up_rules=sql_up_rules,
    unused_reason="A MySQL check logs in and runs a query: {what}.",
    measures="connect and query time",
)
