"""Flows: a project of kind flow runs its steps in order in one poll
(projects/checks/kinds/flow.py has their rules, polling/engine/probes/
flow.py runs them), and reads its team's secrets.

A step's rules live in JSON (`expect`, `capture`) in the shape the API and
the YAML file use, so the three surfaces share one validation.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models, transaction
from django.utils import timezone

from projects.checks.kinds.flow import METHODS, normal_step
from projects.models.project import Project
from projects.models.teams import NamedInTeam, team_field
from projects.signals import projects_bulk_changed

SECRET_NAME_HELP = "Letters, digits and _: steps read it as {{secrets.NAME}}."


class FlowStep(models.Model):
    """One request of a flow, in `position` order (then by id: the admin
    saves its rows one by one, so positions may repeat for a moment)."""

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="flow_steps"
    )
    position = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=200)
    method = models.CharField(
        max_length=7, choices=[(m, m) for m in METHODS], default="GET"
    )
    url = models.CharField(
        "URL",
        max_length=2000,
        help_text="May hold {{name}} (captured by an earlier step, URL-encoded "
        "here) and {{secrets.NAME}}.",
    )
    headers = models.JSONField(default=dict, blank=True)
    body = models.TextField(blank=True)
    expect = models.JSONField(
        default=dict,
        blank=True,
        help_text='Rules, e.g. {"status": "200-299", "keyword": "orders", '
        '"json": [{"query": "token", "operator": "!=", "expected": null}], '
        '"headers": {"Content-Type": "json"}, "max_response_time_ms": 800}. '
        "Empty: status 200.",
    )
    capture = models.JSONField(
        default=dict,
        blank=True,
        help_text='Values for later steps, e.g. {"token": "json:token"}; '
        "json:<JMESPath>, header:<Name>, regex:<pattern> (its first group) "
        "or status.",
    )

    class Meta:
        ordering = ["position", "id"]
        indexes = [
            # A target's steps, read by project when the poller loads it.
            models.Index(fields=["project", "position"], name="flowstep_project")
        ]

    def __str__(self) -> str:
        return self.name

    def as_dict(self) -> dict:
        """The step as the API and the YAML file write it."""
        step, _ = normal_step(
            {key: getattr(self, key) for key in ("name", "method", "url", "headers")}
            | {"body": self.body, "expect": self.expect, "capture": self.capture}
        )
        return step

    def clean(self) -> None:
        _, errors = normal_step(self.as_dict())
        if errors:
            raise ValidationError(errors)


class TeamSecret(NamedInTeam):
    """A value a flow's steps send ({{secrets.NAME}}), write-only: the
    admin never shows it again, results, logs, payloads and exports never
    hold it (the probe masks it in what it stores)."""

    team = team_field()
    name = models.CharField(
        max_length=100,
        validators=[RegexValidator(r"^[A-Za-z_][A-Za-z0-9_]*$", SECRET_NAME_HELP)],
        help_text=SECRET_NAME_HELP,
    )
    value = models.CharField(max_length=2000)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "name"], name="teamsecret_name_per_team"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        super().save(*args, **kwargs)
        self._flows_changed()

    def delete(self, *args, **kwargs):
        deleted = super().delete(*args, **kwargs)
        self._flows_changed()
        return deleted

    def _flows_changed(self) -> None:
        """The team's flows poll with the secret as it is now: marked
        changed, so a poller's reload reads them again, and announced
        after the commit, so a running poller syncs them at once."""
        flows = Project.objects.filter(team_id=self.team_id, kind=Project.Kind.FLOW)
        project_ids = list(flows.values_list("pk", flat=True))
        if not project_ids:
            return
        flows.update(updated_at=timezone.now())
        transaction.on_commit(
            lambda: projects_bulk_changed.send(sender=Project, project_ids=project_ids)
        )
