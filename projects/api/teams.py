"""An API key sees and changes only its team's objects.

Every view narrows its queryset with `scoped(request, queryset)`, which asks
projects.teams.scoping, the one place team queries are made: another team's
id is then simply not found (404), exactly like an id that does not exist.
Forms get the key's team as the new object's team, and their choices of
related objects (tags, channels, projects) are the team's only, so another
team's id is a field error like an unknown one.

Changes are recorded in the audit log with the key's name, via "api".
"""

from __future__ import annotations

import functools

from rest_framework.request import Request

from django import forms
from django.db import transaction
from django.db.models import Model, QuerySet

from projects.models import ApiKey, Team
from projects.teams.audit import Actor, record, snapshot
from projects.teams.forms import team_form
from projects.teams.scoping import TEAM_PATHS, for_team

API = "api"


def key_team(request: Request) -> Team | None:
    api_key = getattr(request, "auth", None)
    return api_key.team if isinstance(api_key, ApiKey) else None


def scoped(request: Request, queryset: QuerySet) -> QuerySet:
    """The queryset's rows of the key's team; none without a key."""
    return for_team(queryset, key_team(request))


def scoped_form_class(
    form_class: type[forms.ModelForm], request: Request
) -> type[forms.ModelForm]:
    """`form_class` whose new objects are the key's team's and whose related
    choices are that team's only."""
    return _team_form_class(form_class, key_team(request))


# Making a form class costs about as much as the rest of a create: one per
# form and team, made once (teams compare and hash by their id).
@functools.lru_cache(maxsize=256)
def _team_form_class(
    form_class: type[forms.ModelForm], team: Team | None
) -> type[forms.ModelForm]:
    with_team = team_form(form_class, team)

    class ScopedForm(with_team):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            for field in self.fields.values():
                queryset = getattr(field, "queryset", None)
                if queryset is not None and queryset.model in TEAM_PATHS:
                    field.queryset = for_team(queryset, team)

    ScopedForm.__name__ = form_class.__name__
    return ScopedForm


def api_actor(request: Request) -> Actor:
    return Actor(request.auth.name, via=API)


class Audited:
    """For a view whose changes go through `save_audited` and
    `delete_audited`: each is an AuditEntry by the key, via the API."""

    def save_audited(self, obj_before: Model | None, save, related=None) -> Model:
        """`related()`, if given, returns the many-to-many values just
        saved (audit.record's `related`)."""
        with transaction.atomic():
            before = snapshot(obj_before)
            saved = save()
            values = related() if related else None
            record(saved, before, actor=api_actor(self.request), related=values)
        return saved

    def perform_destroy(self, instance: Model) -> None:
        with transaction.atomic():
            before = snapshot(instance)
            record(instance, before, actor=api_actor(self.request), deleted=True)
            instance.delete()
