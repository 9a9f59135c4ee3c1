"""A channel's URL and secret are write-only: no role reads them back on
any page, and no filter compares against them (a `startswith` filter
answers yes or no, which spells a secret out a character at a time)."""

from __future__ import annotations

import pytest

from django.urls import reverse

from projects.models import Role
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db

CHANNELS = reverse("admin:projects_notificationchannel_changelist")


@pytest.fixture(params=[Role.VIEWER, Role.EDITOR, Role.MANAGER])
def client(request, a):
    return client_of(member(a.team, request.param, "someone"))


def test_no_role_reads_a_channels_secret_or_url_on_its_pages(client, a):
    change = reverse("admin:projects_notificationchannel_change", args=[a.channel.pk])
    pages = [
        client.get(CHANNELS),
        client.get(change),
        client.get(reverse("admin:projects_project_change", args=[a.project.pk])),
        client.get(reverse("admin:projects_project_export_yaml")),
        client.get(reverse("dashboard:project", args=[a.project.pk])),
    ]

    for page in pages:
        assert page.status_code == 200
        text = page.content.decode()
        assert a.channel.secret not in text
        assert a.channel.secret[6:12] not in text  # nor a part of it
        assert "hook-token" not in text


@pytest.mark.parametrize(
    ("changelist", "lookup"),
    [
        (CHANNELS, "secret__startswith"),
        (CHANNELS, "url__contains"),
        (CHANNELS, "secret__gt"),
        (reverse("admin:projects_project_changelist"), "channels__secret__startswith"),
        (
            reverse("admin:projects_notification_changelist"),
            "channel__secret__startswith",
        ),
        (
            reverse("admin:projects_deliveryattempt_changelist"),
            "notification__channel__secret__startswith",
        ),
        (
            reverse("admin:projects_deliveryattempt_changelist"),
            "notification__channel__url__startswith",
        ),
    ],
)
def test_no_filter_compares_against_a_secret(client, a, changelist, lookup):
    response = client.get(changelist, {lookup: "whsec_"})

    assert response.status_code == 400


def test_a_superuser_cannot_filter_by_a_secret_either(admin_client, a):
    assert admin_client.get(CHANNELS, {"secret__startswith": "w"}).status_code == 400


def test_filters_on_other_fields_still_work(client, a):
    response = client.get(CHANNELS, {"kind__exact": "webhook"})

    assert response.status_code == 200
    assert "alpha-hook" in response.content.decode()
