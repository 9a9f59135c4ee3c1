"""How much disk a table takes per row, its indexes included.

Used by `manage.py storage_report` and bench/bench_storage.py. Sizes are
what the database has allocated: run VACUUM (PostgreSQL) or VACUUM and
ANALYZE (SQLite) first, or dead rows and free pages count too.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, models


@dataclass(frozen=True, slots=True)
class Relation:
    name: str
    kind: str  # "table" or "index"
    bytes: int


@dataclass(frozen=True, slots=True)
class TableStorage:
    table: str
    rows: int
    relations: list[Relation]

    @property
    def total_bytes(self) -> int:
        return sum(r.bytes for r in self.relations)

    @property
    def bytes_per_row(self) -> float | None:
        """None for an empty table."""
        return self.total_bytes / self.rows if self.rows else None

    def per_row(self, relation: Relation) -> float | None:
        return relation.bytes / self.rows if self.rows else None


def table_storage(model: type[models.Model]) -> TableStorage:
    """The table of `model` and each of its indexes, in bytes."""
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
        rows = cursor.fetchone()[0]
        if connection.vendor == "postgresql":
            relations = _postgresql_sizes(cursor, table)
        else:
            relations = _sqlite_sizes(cursor, table)
    return TableStorage(table, rows, relations)


def vacuum(model: type[models.Model]) -> None:
    """VACUUM and ANALYZE, so sizes count live rows only. Takes a lock the
    writer waits for on SQLite: for benchmarks and quiet moments."""
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"VACUUM ANALYZE {table}")
        else:
            cursor.execute("VACUUM")
            cursor.execute(f"ANALYZE {table}")


def _postgresql_sizes(cursor, table: str) -> list[Relation]:
    # pg_table_size: the heap with its TOAST, free space and visibility
    # maps; pg_relation_size of each index is the whole index.
    cursor.execute(
        """
        SELECT %s, 'table', pg_table_size(%s::regclass)
        UNION ALL
        SELECT c.relname, 'index', pg_relation_size(c.oid)
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = %s::regclass
        ORDER BY 2 DESC, 1
        """,
        [table, table, table],
    )
    return [Relation(*row) for row in cursor.fetchall()]


def _sqlite_sizes(cursor, table: str) -> list[Relation]:
    cursor.execute(
        """
        SELECT s.name, CASE WHEN s.name = %s THEN 'table' ELSE 'index' END,
               SUM(s.pgsize)
        FROM dbstat AS s JOIN sqlite_schema AS m ON m.name = s.name
        WHERE m.tbl_name = %s
        GROUP BY s.name
        ORDER BY 2 DESC, 1
        """,
        [table, table],
    )
    return [Relation(*row) for row in cursor.fetchall()]
