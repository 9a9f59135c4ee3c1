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


def team_form(form_class, team):
    """`form_class` whose new objects belong to `team`, and whose
    validation includes `team`, so a name taken in the team is a form
    error rather than a failed insert (and one taken in another team is
    no error at all)."""
    if team is None or "team" not in {
        f.name for f in form_class._meta.model._meta.fields
    }:
        return form_class

    class TeamForm(form_class, TeamValidatedForm):
        def __init__(self, *args, **kwargs):
            if kwargs.get("instance") is None:
                kwargs["instance"] = self._meta.model(team=team)
            super().__init__(*args, **kwargs)

    TeamForm.__name__ = form_class.__name__
    return TeamForm
