"""Projects as the API shows and takes them: every field the admin edits,
validated by the admin's ProjectForm, plus the current state."""

from __future__ import annotations

import functools
import json

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from django.urls import reverse

from projects.api.serializers.fields import RelatedIdsField, RelatedNamesField
from projects.api.serializers.forms import FormBackedSerializer
from projects.api.teams import scoped
from projects.checks.credentials import masked_url
from projects.checks.kinds.flow import masked_steps
from projects.dashboard.queries.overview import State
from projects.forms.project import ProjectForm
from projects.models import Project, Region, Status, Tag
from projects.notifications.links import absolute_url
from projects.notifications.masking import MASK, masked_headers

EDITABLE = ProjectForm.Meta.fields
DATETIMES = {
    "last_polled_at",
    "failing_since",
    "tls_expires_at",
    "domain_expires_at",
    "created_at",
    "updated_at",
}
CURRENT_STATE = [
    "last_polled_at",
    "last_status",
    "last_status_code",
    "last_response_time_ms",
    "consecutive_failures",
    "failing_since",
    "tls_expires_at",
    "domain_expires_at",
]


def may_read_secrets(request) -> bool:
    """Header values are for write keys (and callers with no request);
    a read key sees each header's name with its value masked (S4-15)."""
    if request is None:
        return True
    return bool(getattr(request.auth, "can_write", False))


# The fields' own rendering of a datetime; DATETIMES are all plain
# DateTimeFields, which need nothing of their serializer to render.
_DATETIME = serializers.DateTimeField()


@functools.cache
def readable_names(serializer_class: type[serializers.Serializer]) -> list[str]:
    """The names of the fields a serializer shows, in order. Its fields are
    built afresh for every serializer (a tenth of a page of 100): the
    names, once."""
    return [field.field_name for field in serializer_class()._readable_fields]


def _related(project: Project, name: str) -> list:
    """A many-to-many field's objects: the list the view prefetched
    (projects_with_state), else read now."""
    prefetched = getattr(project, f"{name[:-1]}_list", None)
    return prefetched if prefetched is not None else list(getattr(project, name).all())


class ProjectSerializer(FormBackedSerializer):
    form_class = ProjectForm

    tags = RelatedNamesField(
        required=False, help_text="Tag names; each tag must exist (see tags/)."
    )
    channels = RelatedIdsField(
        required=False,
        help_text="Notification channel ids. Left out on create: the default "
        "channels, as the admin's add form offers.",
    )
    regions = RelatedNamesField(
        required=False,
        help_text="Region names that poll the project; empty: every region "
        "with live pollers.",
    )
    state = serializers.SerializerMethodField(
        help_text="down, pending, up, maintenance, waiting (not polled yet) "
        "or paused: as the dashboard shows it."
    )
    interval_seconds = serializers.IntegerField(read_only=True)
    # Declared: a read-only model field loses allow_blank, and the schema
    # would then refuse the "" of a project never polled.
    last_status = serializers.ChoiceField(
        choices=Status.choices, allow_blank=True, read_only=True
    )
    steps = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="Flows: the steps, in order, each {name, method, url, headers, "
        "body, expect, capture} (docs/checks.md, Flows); empty for other kinds.",
    )
    ping_url = serializers.SerializerMethodField(
        help_text="Heartbeat projects: the URL their job calls; null otherwise."
    )

    class Meta:
        model = Project
        fields = [
            "id",
            *EDITABLE,
            "interval_seconds",
            "state",
            *CURRENT_STATE,
            "ping_url",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", *CURRENT_STATE, "created_at", "updated_at"]

    def to_representation(self, project: Project) -> dict:
        """What DRF's generic walk over the fields gives (a test holds the
        two equal) at a fraction of its cost: most of a page of 100
        projects went there."""
        data = {}
        reveal = may_read_secrets(self.context.get("request"))
        for name in readable_names(type(self)):
            if name in DATETIMES:
                value = getattr(project, name)
                data[name] = (
                    None if value is None else _DATETIME.to_representation(value)
                )
            elif name == "tags":
                data[name] = [tag.name for tag in _related(project, "tags")]
            elif name == "channels":
                data[name] = [channel.pk for channel in _related(project, "channels")]
            elif name == "regions":
                data[name] = [region.name for region in _related(project, "regions")]
            elif name == "state":
                data[name] = project.display_state
            elif name == "steps":
                steps = project.step_dicts()
                data[name] = steps if reveal else masked_steps(steps, MASK)
            elif name == "ping_url":
                data[name] = self.get_ping_url(project)
            elif name == "url":
                data[name] = masked_url(project.url)
            elif name == "headers" and not reveal:
                data[name] = masked_headers(project.headers)
            else:
                data[name] = getattr(project, name)
        return data

    @extend_schema_field(serializers.ChoiceField(choices=State.choices))
    def get_state(self, project: Project) -> str:
        return project.display_state

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_ping_url(self, project: Project) -> str | None:
        if not project.is_heartbeat or project.ping_key is None:
            return None
        return absolute_url(reverse("pings:ping", args=[project.ping_key]))

    def _save(self) -> Project:
        project = super()._save()
        # What the form just saved, shown without reading it back.
        project.tag_list = list(self._form.cleaned_data["tags"])
        project.channel_list = list(self._form.cleaned_data["channels"])
        project.region_list = list(self._form.cleaned_data["regions"])
        return project

    def validate_tags(self, names: list[str]) -> list[int]:
        names = list(dict.fromkeys(names))
        tags = scoped(self.context["request"], Tag.objects.filter(name__in=names))
        found = dict(tags.values_list("name", "pk"))
        missing = [name for name in names if name not in found]
        if missing:
            raise serializers.ValidationError(
                [f"No tag is named “{name}”; create it first." for name in missing]
            )
        return [found[name] for name in names]

    def validate_regions(self, names: list[str]) -> list[int]:
        """Regions are the install's, not a team's: any known name."""
        names = list(dict.fromkeys(names))
        found = dict(Region.objects.filter(name__in=names).values_list("name", "pk"))
        missing = [name for name in names if name not in found]
        if missing:
            raise serializers.ValidationError(
                [f"No region is named “{name}”." for name in missing]
            )
        return [found[name] for name in names]

    def form_value(self, name: str, value: object) -> object:
        if name in ("headers", "steps"):
            return json.dumps(value)  # the form's JSON field reads text
        return super().form_value(name, value)
