"""PostgreSQL: up when a connection logs in and the optional query
answers (with the expected first value); polling/engine/probes/postgres.py."""

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

EXAMPLE = "postgres://monitor:secret@db.example.com:5432/app?query=SELECT%201"
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")


def check_url(parts: SplitResult) -> None:
    params = check_parameters(parts, "PostgreSQL", ("query", "expect", "sslmode"))
    check_expectation(params)
    if "sslmode" in params and params["sslmode"] not in SSL_MODES:
        raise ValidationError(
            "sslmode must be one of %(modes)s.", params={"modes": ", ".join(SSL_MODES)}
        )
    check_database_path(parts, EXAMPLE)


KIND = CheckKind(
    name="postgres",
    label="PostgreSQL",
    schemes=("postgres", "postgresql"),
    example=EXAMPLE,
    sends_http=False,
    secret_credentials=True,
    check_url=check_url,
    up_rules=sql_up_rules,
    unused_reason="A PostgreSQL check logs in and runs a query: {what}.",
    measures="connect and query time",
)
