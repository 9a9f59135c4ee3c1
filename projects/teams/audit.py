"""Recording changes in the audit log, the same way for the admin, the API
and an import: take a snapshot before, save, take one after, and record()
what differs. Secret fields are never written down: a change to one is
recorded as a change, with both values masked.

    before = snapshot(obj)  # {} for a new object
    ...save obj and its many-to-many fields...
    record(obj, before, actor=Actor.of_user(request.user, via="admin"))
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal

from django.db import models

from projects.models import AuditEntry, Team
from projects.teams.scoping import TEAM_PATHS

MASK = "•••"
# (app_label, model_name) -> fields whose values are credentials.
SECRET_FIELDS = {
    # Request headers often carry a token (Authorization, X-Api-Key).
    ("projects", "project"): {"headers"},
    ("projects", "notificationchannel"): {"url", "secret"},
    ("projects", "teamsecret"): {"value"},
    ("projects", "subscriber"): {"webhook_url", "token"},
    ("projects", "invitation"): {"token_hash"},
    ("projects", "apikey"): {"key", "key_hash", "hashed_key", "prefix"},
}
# Changed by the poller and the writer, not by people: not worth an entry.
IGNORED_FIELDS = {
    "id",
    "updated_at",
    "created_at",
    "last_polled_at",
    "last_status_code",
    "last_response_time_ms",
    "consecutive_failures",
    "failing_since",
    "state",
    "tls_expires_at",
    "domain_expires_at",
    "ping_deadline",
    "deliverer_wakes_at",
    "last_error",
    "password",
    "last_login",
}


@dataclass(frozen=True)
class Actor:
    name: str
    via: str  # admin, api, import
    user: object | None = None

    @classmethod
    def of_user(cls, user, *, via: str) -> Actor:
        return cls(user.get_username(), via, user)


def snapshot(obj: models.Model | None) -> dict:
    """The object's recorded fields as JSON values, as stored now."""
    if obj is None or obj.pk is None:
        return {}
    stored = type(obj)._default_manager.filter(pk=obj.pk).first()
    return _values(stored) if stored is not None else {}


def record(
    obj: models.Model,
    before: dict,
    *,
    actor: Actor,
    deleted: bool = False,
    related: Mapping[str, Iterable[models.Model]] | None = None,
) -> AuditEntry | None:
    """Write an entry for what changed since `before`; None when nothing did.

    `related`: many-to-many values the caller has just saved ({field name:
    objects}, such as a saved form's cleaned_data), taken as they are
    rather than read back; the other many-to-many fields are read."""
    after = {} if deleted else _values(obj, related)
    if deleted:
        action = AuditEntry.Action.DELETED
    else:
        action = AuditEntry.Action.CHANGED if before else AuditEntry.Action.CREATED
    changes = _differences(obj, before, after)
    if action == AuditEntry.Action.CHANGED and not changes:
        return None
    team_id = team_id_of(obj)
    if team_id is None:
        return None
    return AuditEntry.objects.create(
        team_id=team_id,
        actor=actor.user,
        actor_name=actor.name[:200],
        via=actor.via,
        object_type=obj._meta.label_lower,
        object_id=str(obj.pk),
        object_repr=str(obj)[:200],
        action=action,
        changes=changes,
    )


def team_id_of(obj: models.Model) -> int | None:
    if isinstance(obj, Team):
        return obj.pk
    path = TEAM_PATHS.get(type(obj))
    if path is None:
        return None
    value = obj
    *hops, last = path.split("__")
    for hop in hops:
        value = getattr(value, hop, None)
        if value is None:
            return None
    return getattr(value, f"{last}_id", None)


def entries_for(obj: models.Model):
    return AuditEntry.objects.filter(
        object_type=obj._meta.label_lower, object_id=str(obj.pk)
    )


def saved_related(form) -> dict[str, list[models.Model]]:
    """What a ModelForm's save_m2m() has set (it sets each field to
    exactly its cleaned value), for record(related=...)."""
    return {
        field.name: list(form.cleaned_data[field.name])
        for field in form.instance._meta.many_to_many
        if field.name in form.cleaned_data
    }


def _values(obj: models.Model, related: Mapping[str, Iterable] | None = None) -> dict:
    related = related or {}
    secret = _secret_fields(obj)
    values = {}
    for field in obj._meta.concrete_fields:
        if field.name in IGNORED_FIELDS:
            continue
        value = getattr(obj, field.attname)
        values[field.name] = _digest(value) if field.name in secret else _json(value)
    if obj.pk is not None:
        for field in obj._meta.many_to_many:
            items = related.get(field.name)
            if items is None:
                items = getattr(obj, field.name).all()
            values[field.name] = sorted(str(item) for item in items)
    return values


def _differences(obj: models.Model, before: dict, after: dict) -> list[dict]:
    secret = _secret_fields(obj)
    names = list(dict.fromkeys([*after, *before]))
    return [
        {
            "field": name,
            "old": _shown(before.get(name), name in secret),
            "new": _shown(after.get(name), name in secret),
        }
        for name in names
        if before.get(name) != after.get(name)
    ]


def _secret_fields(obj: models.Model) -> set[str]:
    return SECRET_FIELDS.get((obj._meta.app_label, obj._meta.model_name), set())


def _digest(value) -> str:
    """Compares secrets without keeping them; never written down."""
    return hashlib.sha256(str(value).encode()).hexdigest() if value else ""


def _shown(value, secret: bool):
    if not secret:
        return value
    return MASK if value else ""


def _json(value):
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (str, int, float, bool, list, dict)) or value is None:
        return value
    return str(value)
