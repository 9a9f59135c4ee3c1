"""TimeIndex: an index on a time column that rows arrive in order of."""

from __future__ import annotations

from django.db import models


class TimeIndex(models.Index):
    """BRIN on PostgreSQL, a B-tree elsewhere.

    Rows of these tables are written in time order, so on PostgreSQL a BRIN
    index (the smallest and largest time of every 128 pages) finds a time
    range for a few kilobytes, where a B-tree costs about 30 bytes per row.
    autosummarize covers each range as soon as it fills, instead of at the
    next VACUUM. Retention deletes keep the summaries tight (see
    projects.housekeeping.chunks). SQLite has only B-trees.
    """

    def create_sql(self, model, schema_editor, using="", **kwargs):
        if schema_editor.connection.vendor != "postgresql":
            return super().create_sql(model, schema_editor, using=using, **kwargs)
        statement = super().create_sql(
            model, schema_editor, using=" USING brin", **kwargs
        )
        statement.parts["extra"] = (
            " WITH (autosummarize = on)" + statement.parts["extra"]
        )
        return statement


class PackedIndex(models.Index):
    """A B-tree whose pages PostgreSQL fills to the brim (fillfactor 100).

    For keys that only grow, overall (an id) or within their leading
    column (project, polled_at): PostgreSQL splits a full page just before
    the new key, leaving the left page as full as the fillfactor allows,
    and no key lands there again, so the default 90 % leaves a tenth of
    every page empty for good. SQLite has no fillfactor.
    """

    def __init__(self, *args, unique: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # A unique index: Django's UniqueConstraint takes no fillfactor.
        self.unique = unique

    def deconstruct(self):
        path, args, kwargs = super().deconstruct()
        if self.unique:
            kwargs["unique"] = True
        return path, args, kwargs

    def create_sql(self, model, schema_editor, using="", **kwargs):
        statement = super().create_sql(model, schema_editor, using=using, **kwargs)
        if self.unique:
            statement.template = statement.template.replace(
                "CREATE INDEX", "CREATE UNIQUE INDEX", 1
            )
        if schema_editor.connection.vendor == "postgresql":
            statement.parts["extra"] = (
                " WITH (fillfactor = 100)" + statement.parts["extra"]
            )
        return statement
