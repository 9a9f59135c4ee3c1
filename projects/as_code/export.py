"""Writing the file: every tag, channel (without its URL and secret),
project (its headers' values masked, unless asked for) and maintenance
window, each section sorted by name, each entry's fields in a fixed
order and only where they differ from the default. The same database
always gives the same text, so a diff of two exports shows exactly what
changed.
"""

from __future__ import annotations

import yaml

from projects.as_code.schema import (
    PROJECTS,
    SECTIONS,
    STEPS,
    VERSION,
    values_of,
    without_defaults,
)
from projects.as_code.validation import current_references
from projects.checks.kinds.flow import masked_steps
from projects.models import Team
from projects.models.teams import default_team
from projects.notifications.masking import MASK, masked_headers
from projects.teams.scoping import for_team


def export_document(team: Team | None = None, *, with_secrets: bool = False) -> dict:
    """The file of `team`'s objects (the install's first team when None).
    Projects' header values are masked unless `with_secrets` (S4-15);
    importing a masked value keeps the stored one."""
    team = team or default_team()
    document: dict = {"version": VERSION}
    for section in SECTIONS:
        rows = section.model.objects.prefetch_related(
            *section.references, *section.named
        )
        if section.left_out is not None:
            rows = rows.exclude(section.left_out)
        if STEPS in section.fields:
            rows = rows.prefetch_related("flow_steps")
        rows = for_team(rows, team)
        entries = [
            without_defaults(
                section, values_of(section, row, current_references(section, row))
            )
            for row in rows
        ]
        if section is PROJECTS and not with_secrets:
            for entry in entries:
                if "headers" in entry:
                    entry["headers"] = masked_headers(entry["headers"])
                if STEPS in entry:
                    entry[STEPS] = masked_steps(entry[STEPS], MASK)
        document[section.key] = sorted(entries, key=lambda entry: entry["name"])
    return document


def export_yaml(team: Team | None = None, *, with_secrets: bool = False) -> str:
    return dump(export_document(team, with_secrets=with_secrets))


def dump(document: dict) -> str:
    return yaml.safe_dump(
        document,
        sort_keys=False,  # the schema's order, not the alphabet's
        allow_unicode=True,
        default_flow_style=False,
        width=10_000,  # one value, one line: diffs stay line by line
    )
