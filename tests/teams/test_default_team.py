"""The default team is the install's first team: made by the migration and
again after a flush, so a team made by hand afterwards, an untrusted one
in particular, never becomes the default by being the first row."""

import pytest

from django.core.management import call_command

from projects.models import Team
from projects.models.teams import default_team


@pytest.mark.django_db(transaction=True)
def test_after_a_flush_the_default_team_is_back_before_any_other():
    call_command("flush", interactive=False, verbosity=0)

    guests = Team.objects.create(name="Guests", slug="guests")

    default = default_team()
    assert default != guests
    assert (default.slug, default.trusted) == ("default", True)


@pytest.mark.django_db(transaction=True)
def test_a_flush_leaves_one_default_team_however_often_it_runs():
    call_command("flush", interactive=False, verbosity=0)
    call_command("flush", interactive=False, verbosity=0)

    assert list(Team.objects.values_list("slug", flat=True)) == ["default"]
