"""StatusField: a poll's `up`/`down`, stored in one byte."""

from __future__ import annotations

from django.db import models

UP, DOWN = "up", "down"


class StatusField(models.CharField):
    """`up` or `down` in Python (Status's values), a boolean in the table.

    A poll's row is written millions of times a day; stored as text the
    status takes 3 to 5 bytes and pushes the row past a PostgreSQL
    alignment step (docs/benchmarks/2026-11-24-storage-bytes-per-poll.md).
    The boolean takes one. Everything read through Django (filters,
    values(), the admin) sees `up` and `down`; raw SQL sees the boolean
    (true: up), and a writer that bypasses Django stores True or False.
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("max_length", 4)
        super().__init__(*args, **kwargs)

    def db_type(self, connection) -> str:
        return "boolean" if connection.vendor == "postgresql" else "bool"

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return None if value is None else value == UP

    def from_db_value(self, value, expression, connection):
        return None if value is None else (UP if value else DOWN)
