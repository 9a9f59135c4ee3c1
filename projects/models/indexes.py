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
