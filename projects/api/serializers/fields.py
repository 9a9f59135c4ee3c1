"""Many-to-many fields as JSON lists: of ids, or of names; a time of day."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

# HH:MM, HH:MM:SS or HH:MM:SS.ffffff: what TimeField writes and reads.
LOCAL_TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?$"


@extend_schema_field(
    {"type": "string", "pattern": LOCAL_TIME_PATTERN, "example": "02:00:00"}
)
class LocalTimeField(serializers.TimeField):
    """A time of day with no offset (a weekly window's, in its time zone).

    The schema says so with a pattern: format "time" is RFC 3339's
    full-time, which requires an offset, so every answer about a weekly
    window ("02:00:00") broke the schema. Schemathesis met one only when an
    earlier generated request had left a weekly window behind, and then
    could not reproduce it ("inconsistent results")."""


class RelatedIdsField(serializers.ListField):
    """Written and shown as a list of ids; the form checks that they exist."""

    child = serializers.IntegerField(
        min_value=1, error_messages={"invalid": "Enter a whole number."}
    )

    def to_representation(self, manager) -> list[int]:
        # .all() reads what the view prefetched: no query per object.
        return [related.pk for related in manager.all()]


class RelatedNamesField(serializers.ListField):
    """Written and shown as a list of names (tags)."""

    child = serializers.CharField(allow_blank=False, trim_whitespace=True)

    def to_representation(self, manager) -> list[str]:
        return [related.name for related in manager.all()]
