from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from projects.checks.credentials import masked_url, unmasked_url
from projects.checks.kinds.flow import clean_steps
from projects.models import DEFAULT_INTERVAL, NotificationChannel, Project
from projects.teams.forms import TeamValidatedForm

# Left out of a submitted form, these keep their defaults, so forms and
# scripts written before these options existed still save.
DEFAULTED_FIELDS = (
    "kind",
    "keyword_mode",
    "json_operator",
    "expected_reply_mode",
    "dns_expected_rcode",
    "dns_answer_match",
    "ping_count",
    "ping_max_loss_percent",
    "grace_seconds",
    "failure_threshold",
    "recovery_threshold",
    "tls_expiry_warning_days",
)
# Changes after which a heartbeat project's next ping is awaited afresh.
HEARTBEAT_RESTARTS = {"kind", "interval", "interval_unit", "grace_seconds", "enabled"}


class StepsField(forms.JSONField):
    """A flow's steps as a list, checked by the flow kind's one set of
    rules (projects/checks/kinds/flow.py)."""

    def to_python(self, value: object) -> list[dict]:
        return clean_steps(super().to_python(value))

    def has_changed(self, initial: object, data: object) -> bool:
        try:
            return clean_steps(self.to_python(data)) != (initial or [])
        except ValidationError:
            return True


class ProjectForm(TeamValidatedForm):
    """The one form for editing a project; the model holds the rules."""

    # A declared field loses the model's default as its initial value, and
    # an empty add form would offer "null".
    headers = forms.JSONField(
        required=False,
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        error_messages={
            "invalid": 'Headers must be valid JSON, like {"Accept": "text/html"}.'
        },
        help_text='Request headers as a JSON object, e.g. {"Accept": "text/html"}.',
    )

    header_assertions = forms.JSONField(
        required=False,
        initial=list,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        error_messages={
            "invalid": "Header assertions must be valid JSON, like "
            '[{"name": "Cache-Control", "operator": "contains", "value": '
            '"no-store"}].'
        },
        help_text=Project._meta.get_field("header_assertions").help_text,
    )

    # The model's PositiveIntegerField would say "at least 0" for -5, but 0
    # is not allowed either.
    interval = forms.IntegerField(min_value=1, initial=DEFAULT_INTERVAL)

    # A flow's steps, for the API and the YAML file; the admin edits them
    # inline instead (projects/admin/flows.py) and leaves this out.
    steps = StepsField(
        required=False,
        initial=list,
        help_text="Flows: the steps, in order (docs/checks.md, Flows).",
    )

    class Meta:
        model = Project
        fields = [
            "name",
            "kind",
            "tags",
            "url",
            "method",
            "headers",
            "body",
            "follow_redirects",
            "allow_insecure_redirects",
            "verify_tls",
            "expected_status",
            "keyword",
            "keyword_mode",
            "keyword_case_sensitive",
            "json_query",
            "json_operator",
            "json_expected",
            "header_assertions",
            "udp_payload",
            "udp_payload_hex",
            "expected_reply",
            "expected_reply_mode",
            "ping_count",
            "ping_max_loss_percent",
            "dns_expected_rcode",
            "dns_expected_answers",
            "dns_answer_match",
            "dns_require_dnssec",
            "max_response_time_ms",
            "degraded_after_ms",
            "tls_expiry_warning_days",
            "domain_expiry_warning_days",
            "interval",
            "interval_unit",
            "grace_seconds",
            "timeout_seconds",
            "failure_threshold",
            "recovery_threshold",
            "enabled",
            "channels",
            "regions",
            "quorum",
            "steps",
        ]
        widgets = {
            "channels": forms.CheckboxSelectMultiple,
            "regions": forms.CheckboxSelectMultiple,
            "kind": forms.RadioSelect,
            "url": forms.URLInput(attrs={"size": 80}),
            "body": forms.Textarea(attrs={"rows": 3, "cols": 60}),
            "keyword": forms.TextInput(attrs={"size": 60}),
            "json_query": forms.TextInput(attrs={"size": 60}),
            "udp_payload": forms.Textarea(attrs={"rows": 2, "cols": 60}),
            "dns_expected_answers": forms.Textarea(attrs={"rows": 3, "cols": 60}),
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        team_id = self.instance.team_id
        # Only the project's own team's channels and tags, to offer or accept.
        for name in ("channels", "tags"):
            if name in self.fields and hasattr(self.fields[name], "queryset"):
                field = self.fields[name]
                field.queryset = field.queryset.filter(team_id=team_id)
        # The caller's initial, not the instance's: a new instance has none.
        if not self.instance.pk and "channels" not in (kwargs.get("initial") or {}):
            defaults = NotificationChannel.objects.filter(
                is_default=True, team_id=team_id
            )
            self.initial["channels"] = list(defaults.values_list("pk", flat=True))
        # A service check's password is write-only: the form shows it
        # masked, and clean_url() keeps the stored one when the mask comes back.
        if self.instance.pk and self.instance.url:
            self.initial["url"] = masked_url(self.instance.url)
        if "steps" in self.fields and self.instance.pk and self.instance.is_flow:
            self.initial["steps"] = self.instance.step_dicts()
        # A view-only admin form has no editable fields at all.
        for name in DEFAULTED_FIELDS:
            if name in self.fields:
                self.fields[name].required = False

    def clean_url(self) -> str:
        url = self.cleaned_data.get("url") or ""
        stored = Project.objects.filter(pk=self.instance.pk).values_list(
            "url", flat=True
        )
        return unmasked_url(url, stored.first() or "") if self.instance.pk else url

    def clean(self) -> dict:
        cleaned = super().clean()
        for name in DEFAULTED_FIELDS:
            if cleaned.get(name) in (None, "") and name not in self.errors:
                cleaned[name] = Project._meta.get_field(name).default
        threshold = Project._meta.get_field("failure_threshold")
        if (
            self._becomes_heartbeat(cleaned)
            and cleaned.get("failure_threshold") == threshold.default
        ):
            # The grace period already confirms a missed ping; a heartbeat
            # checked once a day must not wait three days to alert.
            cleaned["failure_threshold"] = self.instance.failure_threshold = 1
        self._take_steps(cleaned)
        regions, quorum = cleaned.get("regions"), cleaned.get("quorum")
        if regions and quorum and quorum > len(regions):
            self.add_error(
                "quorum",
                f"A quorum of {quorum} needs at least {quorum} regions; "
                f"{len(regions)} are chosen.",
            )
        return cleaned

    def _take_steps(self, cleaned: dict) -> None:
        """Hand the steps to the project, whose save() stores them: a
        flow's when they changed, none when it stops being a flow."""
        if "steps" not in self.fields or "steps" in self.errors:
            return
        steps = cleaned.get("steps") or []
        if cleaned.get("kind") == Project.Kind.FLOW:
            if not steps:
                self.add_error("steps", "A flow needs at least one step.")
            elif "steps" in self.changed_data or not self.instance.pk:
                self.instance.steps_to_save = steps
        elif steps:
            self.add_error(
                "steps", "Only a flow has steps: set kind to flow, or leave them out."
            )
        elif self.instance.is_flow:
            self.instance.steps_to_save = []

    def _becomes_heartbeat(self, cleaned: dict) -> bool:
        return cleaned.get("kind") == Project.Kind.HEARTBEAT and (
            self.instance.pk is None or "kind" in self.changed_data
        )

    def save(self, commit: bool = True) -> Project:
        project = self.instance
        if project.is_heartbeat and HEARTBEAT_RESTARTS & set(self.changed_data):
            project.restart_heartbeat(timezone.now())
        # A new project saved here and now has the form's many-to-many
        # values and nothing else: its channels are the ones chosen (their
        # initial value is the default channels), so the receiver that
        # attaches the defaults to a project made elsewhere leaves it alone.
        self._adding = commit and project._state.adding
        project.channels_chosen = self._adding
        return super().save(commit)

    def _save_m2m(self) -> None:
        """Django's, which replaces each field's values (a read, then the
        difference); for a project just created there is nothing to
        replace, and the values are added with no read."""
        if not getattr(self, "_adding", False):
            return super()._save_m2m()
        for field in self.instance._meta.many_to_many:
            if field.name in self.cleaned_data and field.name in self.fields:
                related = getattr(self.instance, field.name)
                related.add(*self.cleaned_data[field.name])

    def clean_header_assertions(self) -> object:
        assertions = self.cleaned_data["header_assertions"]
        return [] if assertions in (None, "") else assertions

    def clean_headers(self) -> object:
        headers = self.cleaned_data["headers"]
        return {} if headers in (None, "") else headers
