"""A team-owned row's team is looked up by validation only when the row
does not hold the Team object it was given."""

from __future__ import annotations

import pytest

from django.core.exceptions import ValidationError

from projects.models import Project, Team

pytestmark = pytest.mark.django_db


def test_a_team_given_as_an_object_is_not_looked_up_again(
    django_assert_num_queries,
):
    team = Team.objects.create(name="ops")
    project = Project(team=team, name="api", url="http://127.0.0.1:9/")

    with django_assert_num_queries(0):
        project.clean_fields()


def test_a_team_given_by_an_id_that_does_not_exist_is_a_field_error():
    project = Project(team_id=10**9, name="api", url="http://127.0.0.1:9/")

    with pytest.raises(ValidationError) as raised:
        project.clean_fields()

    assert "team" in raised.value.message_dict
