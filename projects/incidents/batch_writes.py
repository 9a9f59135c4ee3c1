"""Writing a batch of rows in a few statements, for the poller's writer.

On PostgreSQL the rows travel as one JSON parameter, taken apart by the
statement (INSERT … SELECT, or UPDATE … FROM, the rows): a statement per
batch, its text the same every time (psycopg prepares it once), instead of
a statement per row.
SQLite runs one short statement per row with executemany, which is what
it does fastest: its statements cost no round trip, and it parses each
once per batch.

Columns are named by field and typed from the model, so a field added
later needs no edit here. `cursor` is a DB-API cursor in the caller's
transaction: on PostgreSQL a plain psycopg cursor, on SQLite Django's; batch_cursor()
gives one.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime

from django.db import connection, models


@contextlib.contextmanager
def batch_cursor() -> Iterator:
    """A cursor for a batch's statements on this thread's connection, in
    its transaction, raising Django's database errors."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            yield cursor
        return
    # Django binds parameters on the client: psycopg renders every row into
    # SQL text in Python. A plain psycopg cursor sends them apart from a
    # statement it prepares once, for a fraction of the CPU.
    import psycopg

    connection.ensure_connection()
    with (
        connection.wrap_database_errors,
        psycopg.Cursor(connection.connection) as cursor,
    ):
        yield cursor


@contextlib.contextmanager
def pipeline(cursor) -> Iterator[None]:
    """Send the block's statements without waiting for each one's result,
    on PostgreSQL: the server runs one while the client builds the next.
    Only for statements whose results nobody reads in the block; their
    errors are raised when it ends."""
    if connection.vendor != "postgresql":
        yield
        return
    with cursor.connection.pipeline():
        yield


def quote(name: str) -> str:
    return connection.ops.quote_name(name)


def columns(model: type[models.Model], fields: Sequence[str]) -> list[models.Field]:
    """The model's fields by name, as stored (attname: project_id)."""
    return [model._meta.get_field(name) for name in fields]


def insert_rows(
    cursor,
    model: type[models.Model],
    fields: Sequence[str],
    rows: Sequence[tuple],
    *,
    skip_duplicates: bool = False,
) -> None:
    """Insert `rows` (values in the order of `fields`) into the model's
    table. With `skip_duplicates`, a row that clashes with a stored one (or
    an earlier one of `rows`) on a unique index is left out instead of
    failing the statement."""
    if not rows:
        return
    table = quote(model._meta.db_table)
    fields_ = columns(model, fields)
    names = ", ".join(quote(f.column) for f in fields_)
    conflict = " ON CONFLICT DO NOTHING" if skip_duplicates else ""
    if connection.vendor == "postgresql":
        # One statement, where COPY needed four to skip duplicates (a
        # staging table made, filled, copied from and emptied).
        source = _json_rows_source(fields_, [f.column for f in fields_])
        cursor.execute(
            f"INSERT INTO {table} ({names}) {source}{conflict}", [_json_rows(rows)]
        )
        return
    marks = ", ".join(["%s"] * len(fields_))
    sql = f"INSERT INTO {table} ({names}) VALUES ({marks}){conflict}"
    cursor.executemany(sql, rows)


def update_rows(
    cursor,
    model: type[models.Model],
    fields: Sequence[str],
    rows: Sequence[tuple],
    *,
    expressions: dict[str, str] | None = None,
    key: str | None = None,
    condition: str = "",
) -> int:
    """Set `fields` of the rows whose `key` field (the primary key unless
    named) equals each row's last value. Returns how many rows changed.

    `expressions` replaces the plain assignment of some fields with SQL in
    which `{new}` is the new value and `{old}` the stored one, e.g.
    "COALESCE({new}, {old})". `condition`, SQL about the stored row
    naming its columns as `{table}.column`, leaves out rows it is false
    for."""
    if not rows:
        return 0
    table = quote(model._meta.db_table)
    fields_ = columns(model, fields)
    key_field = model._meta.get_field(key) if key else model._meta.pk
    expressions = expressions or {}
    condition = f" AND {condition.format(table=table)}" if condition else ""
    if connection.vendor == "postgresql":
        return _update_from_json(
            cursor, table, fields_, key_field, rows, expressions, condition
        )
    assignments = ", ".join(
        f"{quote(f.column)} = {_expression(f, '%s', table, expressions)}"
        for f in fields_
    )
    cursor.executemany(
        f"UPDATE {table} SET {assignments} "
        f"WHERE {quote(key_field.column)} = %s{condition}",
        rows,
    )
    return cursor.rowcount


def _update_from_json(
    cursor, table, fields_, key_field, rows, expressions, condition
) -> int:
    names = [f"new_{f.column}" for f in fields_]
    assignments = ", ".join(
        f"{quote(f.column)} = "
        + _expression(f, f"new.{quote(name)}", table, expressions)
        for f, name in zip(fields_, names, strict=True)
    )
    source = _json_rows_source([*fields_, key_field], [*names, "new_key"])
    cursor.execute(
        f"UPDATE {table} SET {assignments} FROM ({source}) AS new "
        f"WHERE {table}.{quote(key_field.column)} = new.new_key{condition}",
        [_json_rows(rows)],
    )
    return cursor.rowcount


def _expression(field, new: str, table: str, expressions: dict[str, str]) -> str:
    template = expressions.get(field.name)
    if template is None:
        return new
    return template.format(new=new, old=f"{table}.{quote(field.column)}")


def _json_rows_source(fields_: Sequence[models.Field], names: Sequence[str]) -> str:
    """A SELECT of the rows passed as _json_rows(rows) in its one parameter:
    each row's values, in the order of `fields_`, typed as their columns
    and named `names`.

    One JSON text, made by json.dumps in C, costs the client a fraction of
    what psycopg spends dumping a Python list per column for unnest().
    jsonb, not json: jsonb parses each row once, json again for every
    value taken out of it."""
    values = ", ".join(
        f"(element->>{i})::{field.cast_db_type(connection)} AS {quote(name)}"
        for i, (field, name) in enumerate(zip(fields_, names, strict=True))
    )
    return f"SELECT {values} FROM jsonb_array_elements(%s::jsonb) AS element"


def _json_rows(rows: Sequence[tuple]) -> str:
    """The parameter of _json_rows_source(): the rows as a JSON array of
    arrays, datetimes as ISO 8601 text."""
    return json.dumps(rows, default=_json_value)


def _json_value(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} has no JSON form here: {value!r}")


def datetime_adapter() -> Callable[[datetime | None], str | None]:
    """How to pass a datetime to the cursor: as the ISO 8601 text of
    _json_rows() to PostgreSQL; to SQLite as the naive UTC text Django
    stores, made for a fraction of the cost of adapt_datetimefield_value.

    Both remember the last few thousand answers: a batch passes each
    poll's time twice (its row, its project's state) and each hour once
    per project (the rollups), and making the text is what costs."""
    if connection.vendor == "postgresql":
        return _iso_text
    return _sqlite_datetime


@functools.lru_cache(maxsize=4096)
def _iso_text(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


@functools.lru_cache(maxsize=4096)
def _sqlite_datetime(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    return value.isoformat(" ")[: -len("+00:00")]


def upsert_rows(
    cursor,
    model: type[models.Model],
    fields: Sequence[str],
    rows: Sequence[tuple],
    *,
    conflict: Sequence[str],
    updates: dict[str, str],
) -> None:
    """Insert `rows`; where one clashes with a stored row on the unique
    fields `conflict`, set each field of `updates` to its SQL instead, in
    which `{new}` is the value offered and `{old}` the stored one. No two
    rows may clash with each other."""
    if not rows:
        return
    table = quote(model._meta.db_table)
    fields_ = columns(model, fields)
    names = ", ".join(quote(f.column) for f in fields_)
    if connection.vendor == "postgresql":
        columns_ = [f.column for f in fields_]
        source, params = _json_rows_source(fields_, columns_), [_json_rows(rows)]
    else:
        marks = ", ".join(["%s"] * len(fields_))
        source, params = f"VALUES ({marks})", rows
    targets = ", ".join(quote(f.column) for f in columns(model, conflict))
    assignments = ", ".join(
        f"{quote(f.column)} = "
        + updates[f.name].format(
            new=f"excluded.{quote(f.column)}", old=f"{table}.{quote(f.column)}"
        )
        for f in columns(model, list(updates))
    )
    sql = (
        f"INSERT INTO {table} ({names}) {source} "
        f"ON CONFLICT ({targets}) DO UPDATE SET {assignments}"
    )
    if connection.vendor == "postgresql":
        cursor.execute(sql, params)
    else:
        cursor.executemany(sql, params)
