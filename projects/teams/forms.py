"""Forms of team-owned models: `team` is not on the form (the current team
is), but it is validated, so a name taken in the team is a form error on
`name` rather than a failed insert."""

from __future__ import annotations

from django import forms


class TeamValidatedForm(forms.ModelForm):
    def _get_validation_exclusions(self):
        exclusions = super()._get_validation_exclusions()
        exclusions.discard("team")
        return exclusions
