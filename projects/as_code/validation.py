"""Reading the file: its shape, each value's type, then each entry through
the admin's own form, so an import accepts what the admin accepts and says
what the admin says. Every problem in the file is collected before any is
reported, and nothing here writes to the database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

import yaml

from django import forms
from django.core.exceptions import ValidationError
from django.db import models

from projects.as_code import bounded_yaml
from projects.as_code.schema import (
    CHANNEL_SECRET_FIELDS,
    PROJECTS,
    SECTIONS,
    STEPS,
    TOP_LEVEL_KEYS,
    VERSION,
    Section,
    values_of,
)
from projects.checks.kinds.flow import unmasked_steps
from projects.models import Team
from projects.notifications.masking import MASK

# YAML reads an unquoted 02:00 as the number 120 (base 60).
TIME_HINT = "Expected a time in quotes, like '02:00'."


@dataclass(frozen=True)
class Problem:
    where: str  # the entry: projects[shop]
    field: str  # "" for the entry as a whole
    message: str

    def __str__(self) -> str:
        where = f"{self.where}.{self.field}" if self.field else self.where
        return f"{where}: {self.message}"


class InvalidFile(Exception):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(problem) for problem in problems))
        self.problems = problems


class RefusedFile(InvalidFile):
    """The file is over the bounds of bounded_yaml: not read at all."""


@dataclass
class CheckedEntry:
    """One valid entry: its bound form, ready to save, and its values
    before (None when it is new) and after."""

    section: Section
    name: str
    form: forms.ModelForm
    old: dict[str, object] | None
    new: dict[str, object]
    references: dict[str, object] = field(default_factory=dict)


class NamesField(forms.Field):
    """A many-to-many field given by names: checked against the names
    known (in the database or the file), saved by apply.py."""

    def __init__(self, known: set[str], noun: str) -> None:
        super().__init__(required=False)
        self.known, self.noun = known, noun

    def clean(self, value: object) -> list[str]:
        names = sorted(set(value or []))
        unknown = [name for name in names if name not in self.known]
        if unknown:
            listed = ", ".join(f"“{name}”" for name in unknown)
            raise ValidationError(f"No {self.noun} named {listed}.")
        return names


class NameField(forms.Field):
    """A foreign key given by a name (an objective's project): the team's
    row of that name. One the same file creates is not stored yet while
    the file is checked: it stands in as an unsaved row with STAND_IN_PK,
    so the form's and the model's rules see a target chosen, and apply.py
    puts the real row in its place before saving."""

    def __init__(
        self, model: type[models.Model], team: Team, known: set[str], noun: str
    ):
        super().__init__(required=False)
        self.model, self.team, self.known, self.noun = model, team, known, noun

    def clean(self, value: object) -> models.Model | None:
        if value in (None, ""):
            return None
        if value not in self.known:
            raise ValidationError(f"No {self.noun} named “{value}”.")
        stored = list(self.model.objects.filter(team=self.team, name=value)[:2])
        if len(stored) > 1:
            raise ValidationError(
                f"Several {self.noun}s are named “{value}”: rename them in the "
                "admin first."
            )
        if stored:
            return stored[0]
        return self.model(pk=STAND_IN_PK, team=self.team, name=value)


# No row has it (primary keys start at 1); never saved (see NameField).
STAND_IN_PK = 0


class StandInsAllowed(forms.ModelForm):
    """Leaves a stand-in out of the model field's own check, which looks
    its primary key up in the database; the model's clean() still sees a
    target chosen."""

    named: tuple[str, ...] = ()

    def _get_validation_exclusions(self):
        exclusions = super()._get_validation_exclusions()
        for name in self.named:
            row = self.cleaned_data.get(name)
            if row is not None and row.pk == STAND_IN_PK:
                exclusions.add(name)
        return exclusions


def parse(text: str) -> dict[str, list[dict]]:
    """The file's sections, each a list of entries; raises InvalidFile when
    it is not YAML or not shaped like an export."""
    try:
        document = bounded_yaml.load(text)
    except bounded_yaml.Refused as error:
        raise RefusedFile([Problem("file", "", str(error))]) from None
    except yaml.YAMLError as error:
        raise InvalidFile([Problem("file", "", f"Not valid YAML: {error}")]) from None
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise InvalidFile([Problem("file", "", "Expected a mapping of sections.")])
    problems = [
        Problem("file", str(key), "Unknown key.")
        for key in document
        if key not in TOP_LEVEL_KEYS
    ]
    if document.get("version", VERSION) != VERSION:
        problems.append(Problem("file", "version", f"Only version {VERSION} is read."))
    for section in SECTIONS:
        entries = document.get(section.key)
        if entries is None:
            document[section.key] = entries = []
        if not isinstance(entries, list) or not all(
            isinstance(entry, dict) for entry in entries
        ):
            problems.append(Problem("file", section.key, "Expected a list of entries."))
    if problems:
        raise InvalidFile(problems)
    return {section.key: document[section.key] for section in SECTIONS}


def shape_problems(section: Section, entries: list[dict]) -> list[Problem]:
    """Names missing or repeated, unknown keys and values of the wrong type."""
    problems, seen = [], set()
    for number, entry in enumerate(entries, start=1):
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            where = f"{section.key}[#{number}]"
            problems.append(Problem(where, "name", "Every entry needs a name."))
            continue
        where = entry_label(section, name)
        if name in seen:
            problems.append(Problem(where, "name", "Another entry has this name."))
        seen.add(name)
        for key, value in entry.items():
            if key not in section.fields:
                problems.append(Problem(where, str(key), "Unknown key."))
            elif message := type_problem(section, key, value):
                problems.append(Problem(where, key, message))
    return problems


def entry_label(section: Section, name: str) -> str:
    return f"{section.key}[{name}]"


def type_problem(section: Section, name: str, value: object) -> str | None:
    """Why `value` cannot be the field's value, or None when its type fits."""
    if name in section.named:
        fits = value is None or isinstance(value, str)
        return None if fits else f"Expected the name of a {_noun(section.named[name])}."
    if name in section.references:
        fits = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if fits else "Expected a list of names."
    if name == STEPS:
        return None if isinstance(value, list) else "Expected a list of steps."
    model_field = section.model_field(name)
    if value is None:
        return None if model_field.null else "Leave the key out for the default."
    expected = _expected_types(model_field)
    if isinstance(value, bool) and bool not in expected[0]:
        return expected[1]
    return None if isinstance(value, expected[0]) else expected[1]


def _expected_types(model_field: models.Field) -> tuple[tuple[type, ...], str]:
    if isinstance(model_field, models.BooleanField):
        return (bool,), "Expected true or false."
    if isinstance(model_field, models.IntegerField):
        return (int,), "Expected a whole number."
    if isinstance(model_field, models.FloatField):
        return (int, float), "Expected a number, like 99.9."
    if isinstance(model_field, models.JSONField):
        if isinstance(model_field.get_default(), list):
            return (list,), "Expected a list."
        return (dict,), "Expected a mapping of names to values."
    if isinstance(model_field, models.DateTimeField):
        return (str, datetime), "Expected a date and time like 2026-01-31T02:00:00Z."
    if isinstance(model_field, models.TimeField):
        return (str,), TIME_HINT
    return (str,), "Expected text; put numbers in quotes, like '200'."


def bind(
    section: Section,
    entry: dict,
    instance: models.Model | None,
    known: dict[str, set[str]],
    team: Team,
) -> forms.ModelForm:
    """The admin's form for the entry, bound as if the admin had posted
    it: every field the file leaves out at its default, a channel's URL and
    secret empty (the form then keeps the stored ones)."""
    declared = {
        name: NamesField(known[target], _noun(target))
        for name, target in section.references.items()
    }
    declared |= {
        name: NameField(
            section.model_field(name).related_model, team, known[target], _noun(target)
        )
        for name, target in section.named.items()
    }
    declared["named"] = tuple(section.named)
    form_class = type(
        f"Imported{section.form.__name__}", (StandInsAllowed, section.form), declared
    )
    kind = entry.get("kind", "")
    data = {}
    for name in section.form._meta.fields:
        if name in CHANNEL_SECRET_FIELDS and section.key == "channels":
            data[name] = ""
        else:
            value = entry.get(name, section.default(name, kind))
            if section is PROJECTS and name == "headers":
                value = unmasked_headers(value, instance)
            if section is PROJECTS and name == STEPS:
                value = unmasked_steps(value, _stored_steps(instance), MASK)
            data[name] = _posted(form_class.base_fields[name], value)
    for name in section.named:
        data[name] = entry.get(name)
    # A new project's form otherwise looks up the default channels.
    initial = {"channels": []} if section is PROJECTS else {}
    instance = instance or section.model(team=team)
    return form_class(data=data, instance=instance, initial=initial)


def unmasked_headers(headers: object, instance: models.Model | None) -> object:
    """An export's masked header value (•••) stands for the stored one."""
    if not isinstance(headers, dict):
        return headers
    stored = (instance.headers if instance is not None else None) or {}
    return {
        name: stored.get(name, value) if value == MASK else value
        for name, value in headers.items()
    }


def _stored_steps(instance: models.Model | None) -> list[dict]:
    return instance.step_dicts() if instance is not None else []


def masked_header_problems(where: str, entry: dict, instance) -> list[Problem]:
    """A masked header value with no stored value to stand for."""
    steps = unmasked_steps(entry.get(STEPS), _stored_steps(instance), MASK)
    problems = [
        Problem(
            where,
            STEPS,
            f"step {number} '{step.get('name')}': headers: “{name}” is masked "
            f"({MASK}) and the flow has no stored value for it; write the "
            "value out.",
        )
        for number, step in enumerate(steps if isinstance(steps, list) else [], 1)
        if isinstance(step, dict) and isinstance(step.get("headers"), dict)
        for name, value in step["headers"].items()
        if value == MASK
    ]
    headers = unmasked_headers(entry.get("headers"), instance)
    if not isinstance(headers, dict):
        return problems
    return problems + [
        Problem(
            where,
            "headers",
            f"“{name}” is masked ({MASK}) and the project has no stored value "
            "for it; write the value out.",
        )
        for name, value in headers.items()
        if value == MASK
    ]


def _noun(section_key: str) -> str:
    return next(s.noun for s in SECTIONS if s.key == section_key)


def _posted(form_field: forms.Field, value: object) -> object:
    if isinstance(form_field, forms.JSONField):
        return json.dumps(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def form_problems(where: str, form: forms.ModelForm) -> list[Problem]:
    return [
        Problem(where, "" if name == "__all__" else name, message)
        for name, messages in form.errors.items()
        for message in messages
    ]


def checked(
    section: Section,
    entry: dict,
    instance: models.Model | None,
    known: dict[str, set[str]],
    team: Team,
) -> CheckedEntry | list[Problem]:
    """The entry validated by its form, or the form's problems."""
    old = None
    if instance is not None:
        old = values_of(section, instance, current_references(section, instance))
    form = bind(section, entry, instance, known, team)
    where = entry_label(section, entry["name"])
    if section is PROJECTS and (
        masked := masked_header_problems(where, entry, instance)
    ):
        return masked
    if not form.is_valid():
        return form_problems(where, form)
    if section is PROJECTS and "failure_threshold" in entry:
        # The form lowers a new heartbeat's threshold only when it was left
        # at the default; a value written in the file is meant.
        form.instance.failure_threshold = entry["failure_threshold"]
    references = {name: form.cleaned_data[name] for name in section.references}
    for name in section.named:
        row = form.cleaned_data[name]
        references[name] = None if row is None else row.name
    new = values_of(section, form.instance, references)
    return CheckedEntry(section, entry["name"], form, old, new, references)


def current_references(section: Section, instance: models.Model) -> dict[str, object]:
    """The names in each many-to-many field and the name of each named
    foreign key (prefetched by the caller)."""
    names: dict[str, object] = {
        name: [related.name for related in getattr(instance, name).all()]
        for name in section.references
    }
    for name in section.named:
        row = getattr(instance, name)
        names[name] = None if row is None else row.name
    return names
