"""What an import would do: the entries it would create, the fields it
would change (old → new) and the projects --prune would disable.

The plan is computed from the file and the database without writing
anything, so a dry run and the admin's preview show exactly what the
real import then applies. A second import of the same file plans nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db import models

from projects.as_code.schema import CHANNELS, PROJECTS, SECTIONS, Section
from projects.as_code.validation import (
    CheckedEntry,
    InvalidFile,
    Problem,
    checked,
    entry_label,
    parse,
    shape_problems,
)
from projects.models import Project, Team
from projects.models.teams import default_team
from projects.teams.scoping import for_team

NO_CHANNEL = (
    "No channel has this name. A channel's URL and secret are not in the "
    "file: create the channel in the admin first."
)
CHANNEL_KIND = "A channel's kind is changed in the admin, with its URL."
SHARED_NAME = "Several {noun}s have this name: rename them in the admin first."


@dataclass
class Plan:
    creates: list[CheckedEntry] = field(default_factory=list)
    changes: list[CheckedEntry] = field(default_factory=list)
    disables: list[Project] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not (self.creates or self.changes or self.disables)

    def lines(self) -> list[str]:
        """Each change as the dry run prints it."""
        if self.is_empty:
            return ["no changes"]
        lines = [f"create {_title(entry)}" for entry in self.creates]
        for entry in self.changes:
            lines.append(f"change {_title(entry)}")
            lines.extend(
                f"    {name}: {shown(old)} → {shown(new)}"
                for name, old, new in differences(entry)
            )
        lines.extend(f"disable project “{project.name}”" for project in self.disables)
        return lines

    def summary(self) -> str:
        if self.is_empty:
            return "no changes"
        return (
            f"{len(self.creates)} created, {len(self.changes)} changed, "
            f"{len(self.disables)} disabled"
        )


def plan_import(text: str, *, prune: bool = False, team: Team | None = None) -> Plan:
    """The plan for importing `text` into `team` (the install's first team
    when None); raises InvalidFile naming every invalid entry and field."""
    team = team or default_team()
    document = parse(text)
    problems = [
        problem
        for section in SECTIONS
        for problem in shape_problems(section, document[section.key])
    ]
    if problems:
        raise InvalidFile(problems)
    stored = {section.key: _stored(section, team) for section in SECTIONS}
    known = _known_names(document, stored)
    plan, problems = Plan(), []
    for section in SECTIONS:
        for entry in document[section.key]:
            result = _check(section, entry, stored[section.key], known, team)
            if isinstance(result, list):
                problems.extend(result)
            elif result.old is None:
                plan.creates.append(result)
            elif result.old != result.new:
                plan.changes.append(result)
    if problems:
        raise InvalidFile(problems)
    if prune:
        plan.disables = _unlisted_projects(document, stored[PROJECTS.key])
    return plan


def _stored(section: Section, team: Team) -> dict[str, list[models.Model]]:
    """The section's rows by name (a list: maintenance window names may
    repeat), with their many-to-many fields prefetched."""
    rows: dict[str, list[models.Model]] = {}
    queryset = section.model.objects.prefetch_related(
        *section.references, *section.named
    )
    for row in for_team(queryset, team):
        rows.setdefault(row.name, []).append(row)
    return rows


def _known_names(document: dict, stored: dict) -> dict[str, set[str]]:
    """The names an entry may refer to: stored, or created by the file."""
    known = {}
    for section in SECTIONS:
        names = set(stored[section.key])
        if section.creatable:
            names |= {entry["name"] for entry in document[section.key]}
        known[section.key] = names
    return known


def _check(
    section: Section, entry: dict, stored: dict, known: dict, team: Team
) -> CheckedEntry | list[Problem]:
    where = entry_label(section, entry["name"])
    rows = stored.get(entry["name"], [])
    if len(rows) > 1:
        return [Problem(where, "name", SHARED_NAME.format(noun=section.noun))]
    instance = rows[0] if rows else None
    if section is CHANNELS:
        if instance is None:
            return [Problem(where, "", NO_CHANNEL)]
        if entry.get("kind", instance.kind) != instance.kind:
            return [Problem(where, "kind", CHANNEL_KIND)]
    return checked(section, entry, instance, known, team)


def _unlisted_projects(document: dict, stored: dict) -> list[Project]:
    listed = {entry["name"] for entry in document[PROJECTS.key]}
    return sorted(
        (
            rows[0]
            for name, rows in stored.items()
            if name not in listed and rows[0].enabled
        ),
        key=lambda project: project.name,
    )


def differences(entry: CheckedEntry) -> list[tuple[str, object, object]]:
    """(field, old, new) for each field the entry changes, in file order."""
    return [
        (name, entry.old[name], entry.new[name])
        for name in entry.section.fields
        if entry.old[name] != entry.new[name]
    ]


def shown(value: object) -> str:
    """A value on one line: text as it is, the rest as JSON."""
    if isinstance(value, str):
        return value if value else '""'
    return json.dumps(value, ensure_ascii=False)


def _title(entry: CheckedEntry) -> str:
    return f"{entry.section.noun} “{entry.name}”"
