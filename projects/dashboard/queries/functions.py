"""Database functions Django has no portable spelling for, and a helper for
raw SQL results."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db.models import BigIntegerField, Func
from django.utils.dateparse import parse_datetime


class EpochSeconds(Func):
    """Whole seconds since 1970-01-01 UTC, for bucketing times by integer
    division."""

    arity = 1
    output_field = BigIntegerField()

    def as_sqlite(self, compiler, connection, **extra):
        # %%%% survives both Django's template and its placeholder pass.
        template = "CAST(strftime('%%%%s', %(expressions)s) AS INTEGER)"
        return self.as_sql(compiler, connection, template=template, **extra)

    def as_postgresql(self, compiler, connection, **extra):
        template = "CAST(FLOOR(EXTRACT(EPOCH FROM %(expressions)s)) AS BIGINT)"
        return self.as_sql(compiler, connection, template=template, **extra)


def aware_datetime(value: datetime | str | None) -> datetime | None:
    """A datetime column read by raw SQL, as an aware UTC datetime.

    SQLite hands back naive datetimes, or text when it cannot tell the
    column's type; PostgreSQL hands back aware datetimes.
    """
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value
