"""Tags: named, coloured labels on projects.

A tag groups projects across the install: the dashboard filters by it,
status-page sections can take their projects from one, and the API and the
YAML file name projects' tags by name (so a tag's name is unique within its team).
"""

from __future__ import annotations

from django.core.validators import RegexValidator
from django.db import models

from projects.models.teams import NamedInTeam, team_field

DEFAULT_TAG_COLOR = "#6b7280"

validate_color = RegexValidator(
    r"^#[0-9a-fA-F]{6}\Z",
    "Enter a colour as #rrggbb, for example #1f77b4.",
    code="invalid_color",
)


class Tag(NamedInTeam):
    team = team_field()
    name = models.CharField(max_length=50)
    color = models.CharField(
        max_length=7,
        default=DEFAULT_TAG_COLOR,
        validators=[validate_color],
        help_text="#rrggbb",
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="tag_name_per_team")
        ]

    def __str__(self) -> str:
        return self.name
