"""Many-to-many fields as JSON lists: of ids, or of names."""

from __future__ import annotations

from rest_framework import serializers


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
