"""A project's escalation steps, edited inline on the project's admin page."""

from __future__ import annotations

from django.contrib import admin
from django.forms.models import BaseInlineFormSet

from projects.models import EscalationStep


class StepsFormSet(BaseInlineFormSet):
    """A project form posted without its steps part (a script, or a page
    from before steps existed) leaves the steps as they are, rather than
    refusing the whole project for a missing management form."""

    def __init__(self, data=None, *args, prefix=None, **kwargs):
        prefix = prefix or self.get_default_prefix()
        if data is not None and f"{prefix}-TOTAL_FORMS" not in data:
            data = data.copy()
            data[f"{prefix}-TOTAL_FORMS"] = "0"
            data[f"{prefix}-INITIAL_FORMS"] = "0"
        super().__init__(data, *args, prefix=prefix, **kwargs)


class EscalationStepInline(admin.TabularInline):
    model = EscalationStep
    formset = StepsFormSet
    fields = ["position", "delay_minutes", "channels"]
    extra = 0
    verbose_name = "escalation step"
    verbose_name_plural = (
        "Escalation: after so many minutes without an acknowledgement, also "
        "notify these channels"
    )
