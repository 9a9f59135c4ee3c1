"""The file's sections and their fields, in the order the file lists them.

Each section takes its fields from the admin form that edits the model, so
a field added to a form is exported and imported without a change here.
A field equal to its default is left out of the file, and a field left out
of the file means its default (not "keep what the database has").
Renaming a field here renames it in every file people keep in git.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime, time

from django import forms
from django.db import models

from projects.checks.credentials import masked_url
from projects.forms.maintenance import MaintenanceWindowForm
from projects.forms.objective import CHANNEL_FIELDS, ObjectiveForm
from projects.forms.project import ProjectForm
from projects.models import (
    MaintenanceWindow,
    NotificationChannel,
    Project,
    ServiceLevelObjective,
    Tag,
)
from projects.notifications.forms import ChannelForm

VERSION = 1
# The URL and the signing secret may hold credentials (see
# projects/notifications/masking.py): a channel is written without them and
# imported only onto a channel of that name that already has them.
CHANNEL_SECRET_FIELDS = ("url", "secret")
# ProjectForm gives a new heartbeat project a failure threshold of 1 instead
# of the model's 3 (one missed ping is confirmed by the grace period), so
# for heartbeats 1 is the value the file leaves out.
HEARTBEAT_FAILURE_THRESHOLD = 1
# Form fields that are not a column: a flow's steps (FlowStep rows), read
# and written as the list the API shows (projects/checks/kinds/flow.py).
STEPS = "steps"

TagForm = forms.modelform_factory(Tag, fields=["name", "color"])


@dataclass(frozen=True)
class Section:
    key: str  # the top-level key: "projects"
    noun: str  # one entry, in messages: "project"
    model: type[models.Model]
    form: type[forms.ModelForm]
    fields: tuple[str, ...]
    # Many-to-many fields, named by the section they refer to.
    references: dict[str, str]
    # Whether an entry missing from the database may be created.
    creatable: bool = True
    # Foreign keys written as the name they refer to, by the section it is
    # in (an objective's "project: shop"); blank is null.
    named: dict[str, str] = dataclasses.field(default_factory=dict)
    # The rows the file leaves out (an objective on a status-page
    # section: status pages are not in the file).
    left_out: models.Q | None = None

    def default(self, field: str, kind: str = "") -> object:
        """The value a field has when the file leaves it out."""
        if field in self.named:
            return None
        if field in self.references or field == STEPS:
            return []
        if (
            self.model is Project
            and field == "failure_threshold"
            and kind == Project.Kind.HEARTBEAT
        ):
            return HEARTBEAT_FAILURE_THRESHOLD
        return plain(self.model._meta.get_field(field).get_default())

    def model_field(self, name: str) -> models.Field:
        return self.model._meta.get_field(name)


def _form_fields(form: type[forms.ModelForm], leave_out=()) -> tuple[str, ...]:
    return tuple(name for name in form._meta.fields if name not in leave_out)


TAGS = Section("tags", "tag", Tag, TagForm, ("name", "color"), {})
CHANNELS = Section(
    "channels",
    "channel",
    NotificationChannel,
    ChannelForm,
    _form_fields(ChannelForm, CHANNEL_SECRET_FIELDS),
    {},
    creatable=False,
)
PROJECTS = Section(
    "projects",
    "project",
    Project,
    ProjectForm,
    # Regions are named per install, not in the file (docs/regions.md).
    _form_fields(ProjectForm, ("regions",)),
    {"tags": "tags", "channels": "channels"},
)
MAINTENANCE_WINDOWS = Section(
    "maintenance_windows",
    "maintenance window",
    MaintenanceWindow,
    MaintenanceWindowForm,
    _form_fields(MaintenanceWindowForm),
    {"projects": "projects"},
)
OBJECTIVES = Section(
    "objectives",
    "objective",
    ServiceLevelObjective,
    ObjectiveForm,
    # A status-page section has no name of its own in the file.
    _form_fields(ObjectiveForm, ("section",)),
    # The channels told of every burn-rate rule, and of each one.
    dict.fromkeys(CHANNEL_FIELDS, "channels"),
    named={"project": "projects", "tag": "tags"},
    left_out=models.Q(section__isnull=False),
)
# Also the order an import applies them in: what is referred to comes first.
SECTIONS = (TAGS, CHANNELS, PROJECTS, MAINTENANCE_WINDOWS, OBJECTIVES)
TOP_LEVEL_KEYS = ("version", *(section.key for section in SECTIONS))


def plain(value: object) -> object:
    """A model value as the file writes it: datetimes as ISO 8601 in UTC,
    times as HH:MM (or HH:MM:SS), everything else as it is."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, time):
        return value.isoformat("minutes" if not value.second else "seconds")
    if isinstance(value, str):
        return str(value)  # a TextChoices member is a str the YAML dumper refuses
    return value


def values_of(
    section: Section, instance: models.Model, references: dict[str, object]
) -> dict[str, object]:
    """Every field of an entry as the file would write it, defaults too;
    `references` gives the many-to-many fields' names and the named
    foreign keys' name (or None)."""
    values = {}
    for field in section.fields:
        if field in section.named:
            values[field] = references.get(field)
        elif field in section.references:
            values[field] = sorted(references.get(field, []))
        elif field == STEPS:
            values[field] = instance.step_dicts()
        else:
            values[field] = plain(getattr(instance, field))
    if section.key == "projects" and values.get("url"):
        # Written masked; an import of the mask keeps the stored password.
        values["url"] = masked_url(values["url"])
    return values


def without_defaults(section: Section, values: dict[str, object]) -> dict:
    """The entry as exported: the name always, other fields when they
    differ from their default."""
    kind = values.get("kind", "")
    return {
        field: value
        for field, value in values.items()
        if field == "name" or value != section.default(field, kind)
    }
