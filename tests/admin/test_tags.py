"""Tags: a unique name and a #rrggbb colour, edited on the project's admin page."""

from __future__ import annotations

import pytest

from django.core.exceptions import ValidationError
from django.urls import reverse

from projects.models import Project, Tag

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("color", ["#1f77b4", "#ABCDEF"])
def test_a_six_digit_hex_colour_is_accepted(color):
    Tag(name="web", color=color).full_clean()


@pytest.mark.parametrize("color", ["1f77b4", "#fff", "red", "#gggggg"])
def test_anything_else_is_a_field_error(color):
    with pytest.raises(ValidationError) as caught:
        Tag(name="web", color=color).full_clean()

    assert caught.value.message_dict == {
        "color": ["Enter a colour as #rrggbb, for example #1f77b4."]
    }


def test_two_tags_cannot_share_a_name():
    Tag.objects.create(name="web")

    with pytest.raises(ValidationError) as caught:
        Tag(name="web").full_clean()

    assert list(caught.value.message_dict) == ["name"]


def test_the_admin_filters_projects_by_tag(admin_client):
    web = Tag.objects.create(name="web")
    tagged = Project.objects.create(name="tagged", url="http://127.0.0.1:9/")
    tagged.tags.add(web)
    Project.objects.create(name="untagged", url="http://127.0.0.1:9/")

    response = admin_client.get(
        reverse("admin:projects_project_changelist"), {"tags__id__exact": web.pk}
    )

    assert response.status_code == 200
    names = [p.name for p in response.context["cl"].result_list]
    assert names == ["tagged"]


def test_the_tag_list_counts_projects(admin_client):
    web = Tag.objects.create(name="web")
    for name in ("a", "b"):
        Project.objects.create(name=name, url="http://127.0.0.1:9/").tags.add(web)

    response = admin_client.get(reverse("admin:projects_tag_changelist"))

    assert response.status_code == 200
    assert [t.project_count for t in response.context["cl"].result_list] == [2]
