"""Teams own projects, tags, channels and maintenance windows; people see
and change a team's objects through a membership with a role.

Every team-owned row has a non-null `team`. Code that makes a row without
saying which team (an old script, a YAML import without --team) puts it in
the install's first team, the "Default" the migration created, so a
one-team install never has to know teams exist.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.core.validators import validate_email
from django.db import models

_ADDRESS_SEPARATORS = re.compile(r"[\s,;]+")


def addresses(text: str) -> list[str]:
    """The addresses in a list of them: separated by commas, semicolons,
    spaces or lines."""
    return [a for a in _ADDRESS_SEPARATORS.split(text) if a]


def validate_addresses(text: str) -> None:
    """Raises ValidationError naming each one that is not an address."""
    wrong = []
    for address in addresses(text):
        try:
            validate_email(address)
        except ValidationError:
            wrong.append(address)
    if wrong:
        listed = ", ".join(f"“{a}”" for a in wrong)
        raise ValidationError(f"Not an e-mail address: {listed}.")


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=50, unique=True)
    trusted = models.BooleanField(
        default=False,
        help_text="Its checks and channels may reach the networks in "
        "POLL_BLOCKED_NETWORKS (loopback, private networks, cloud metadata). "
        "Only for a team that runs the install; the install's first team is.",
    )
    monthly_report = models.BooleanField(
        "e-mail a monthly report",
        default=False,
        help_text="On the 1st of each month, the last calendar month's report "
        "(uptime, incidents, objectives) by e-mail.",
    )
    monthly_report_recipients = models.TextField(
        blank=True,
        validators=[validate_addresses],
        help_text="E-mail addresses, one a line or separated by commas; "
        "blank: every member of the team with an address.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        # The install's first team is the operator's own, as the Default
        # team the upgrade made is: a one-team install watches its own
        # network. Teams made later start untrusted (docs/teams.md).
        if self._state.adding and not Team.objects.exists():
            self.trusted = True
        super().save(*args, **kwargs)


class Role(models.TextChoices):
    """Each role may do everything the ones before it may."""

    VIEWER = "viewer", "Viewer"
    EDITOR = "editor", "Editor"
    MANAGER = "manager", "Manager"


ROLE_RANK = {Role.VIEWER: 1, Role.EDITOR: 2, Role.MANAGER: 3}


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=7, choices=Role, default=Role.VIEWER)

    class Meta:
        ordering = ["team__name", "user__username"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "team"], name="membership_one_per_user_and_team"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"

    def allows(self, role: str) -> bool:
        return ROLE_RANK[self.role] >= ROLE_RANK[role]


DEFAULT_TEAM_NAME = "Default"
# The install's first team as made in a fresh or flushed database
# (default_team_id, and ProjectsConfig's post_migrate receiver).
DEFAULT_TEAM_FIELDS = {"name": DEFAULT_TEAM_NAME, "slug": "default", "trusted": True}


def default_team_id() -> int:
    """The install's first team, made on first use in a fresh database;
    trusted, as the migration makes it: it is the operator's own."""
    first = Team.objects.order_by("pk").values_list("pk", flat=True).first()
    if first is not None:
        return first
    return Team.objects.create(**DEFAULT_TEAM_FIELDS).pk


def default_team() -> Team:
    return Team.objects.get(pk=default_team_id())


class NamedInTeam(models.Model):
    """A model whose `name` is unique within its team (a UniqueConstraint
    on team and name): a taken name is an error on `name`, in words."""

    class Meta:
        abstract = True

    def unique_error_message(self, model_class, unique_check):
        if tuple(unique_check) == ("team", "name"):
            noun = model_class._meta.verbose_name
            return ValidationError(
                f"This team already has a {noun} with this name.", code="unique"
            )
        return super().unique_error_message(model_class, unique_check)

    def validate_constraints(self, exclude=None) -> None:
        try:
            super().validate_constraints(exclude)
        except ValidationError as error:
            raise _name_taken_on_name(error) from None


def _name_taken_on_name(error: ValidationError) -> ValidationError:
    errors = error.update_error_dict({})
    general = errors.pop(NON_FIELD_ERRORS, [])
    taken = [e for e in general if e.code == "unique"]
    rest = [e for e in general if e.code != "unique"]
    if taken:
        errors.setdefault("name", []).extend(taken)
    if rest:
        errors[NON_FIELD_ERRORS] = rest
    return ValidationError(errors)


class TeamField(models.ForeignKey):
    """A team-owned row's team. It comes from the server (the request's
    team, or the default one), never from what a user typed, and a form
    validates it only for the constraints that name it (a name unique in
    its team). So when the row holds the Team object its value came from,
    the team is not looked up again: a query per save, for a row that the
    foreign key's constraint guards at the insert anyway."""

    def validate(self, value, model_instance) -> None:
        cached = self.is_cached(model_instance)
        if (
            cached
            and value is not None
            and self.get_cached_value(model_instance).pk == value
        ):
            return
        super().validate(value, model_instance)

    def deconstruct(self):
        # Migrations see the plain ForeignKey it is in the database.
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.ForeignKey", args, kwargs


def team_field() -> models.ForeignKey:
    return TeamField(
        Team, on_delete=models.PROTECT, default=default_team_id, related_name="+"
    )
