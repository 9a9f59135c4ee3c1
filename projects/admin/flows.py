"""A flow's steps, inline on the project's page (ordered by position), and
the team's secrets the steps read, write-only.

The rules are the flow kind's (projects/checks/kinds/flow.py), the same
the API and the YAML import apply."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from projects.admin.escalation import StepsFormSet
from projects.admin.scoping import TeamScopedAdmin, TeamScopedInline
from projects.checks.kinds.flow import order_errors
from projects.models import FlowStep, Project, TeamSecret


class FlowStepsFormSet(StepsFormSet):
    """Checks the steps together: a flow has at least one, names are not
    repeated, a value is captured before a step uses it; a project that
    is not a flow has none."""

    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        forms_kept = sorted(
            (
                form
                for form in self.forms
                if form.cleaned_data and not form.cleaned_data.get("DELETE")
            ),
            key=lambda form: form.cleaned_data.get("position") or 0,
        )
        is_flow = self.instance.kind == Project.Kind.FLOW
        if is_flow and not forms_kept:
            raise ValidationError("A flow needs at least one step.")
        if not is_flow and forms_kept:
            raise ValidationError("Only a flow has steps: set its kind to Flow.")
        steps = [form.instance.as_dict() for form in forms_kept]
        messages = order_errors(steps) or self.instance.step_problems(steps)
        if messages:
            raise ValidationError(messages)


class FlowStepInline(TeamScopedInline, admin.StackedInline):
    model = FlowStep
    formset = FlowStepsFormSet
    fields = [
        ("position", "name", "method"),
        "url",
        "headers",
        "body",
        "expect",
        "capture",
    ]
    extra = 0
    ordering = ["position", "id"]
    verbose_name = "flow step"
    verbose_name_plural = (
        "Flow steps: run in order of position; the first that fails ends the poll"
    )


class TeamSecretForm(forms.ModelForm):
    """The value is asked for, never shown: left empty on a change, the
    stored one stays."""

    value = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.PasswordInput(render_value=False),
        help_text="Never shown again. Leave empty to keep the stored value.",
    )

    class Meta:
        model = TeamSecret
        fields = ["name", "value"]

    def clean_value(self) -> str:
        value = self.cleaned_data["value"]
        if value:
            return value
        if self.instance.pk:
            return TeamSecret.objects.get(pk=self.instance.pk).value
        raise ValidationError("Enter the secret's value.")


@admin.register(TeamSecret)
class TeamSecretAdmin(TeamScopedAdmin):
    form = TeamSecretForm
    list_display = ["name", "updated_at"]
    search_fields = ["name"]

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        # Only who may change it sees even its name listed.
        return self.has_change_permission(request, obj)
