"""A status page's custom_domain cannot be one of the monitor's own host
names (SITE_URL's, and SITE_HOSTS), which would put a team's page at /
for every user of every team, nor a domain another page already has: a
field error in the admin, and the page is not saved."""

from __future__ import annotations

import pytest

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.urls import reverse

from projects.models import Role, StatusPage
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db
ADD = reverse("admin:projects_statuspage_add")


@pytest.fixture(autouse=True)
def own_names(settings):
    settings.SITE_URL = "https://monitor.example.com:8443/"
    settings.SITE_HOSTS = ["uptime.example.net"]


def add_page(client, domain: str, slug: str = "new-page"):
    return client.post(
        ADD,
        {
            "title": "New page",
            "slug": slug,
            "visibility": "public",
            "custom_domain": domain,
            "show_uptime_days": "90",
            "sections-TOTAL_FORMS": "0",
            "sections-INITIAL_FORMS": "0",
            "sections-MIN_NUM_FORMS": "0",
            "sections-MAX_NUM_FORMS": "1000",
        },
    )


def field_errors(response) -> list[str]:
    assert response.status_code == 200, "the form was accepted"
    return response.context["adminform"].form.errors.get("custom_domain", [])


@pytest.mark.parametrize("domain", ["monitor.example.com", "uptime.example.net"])
def test_the_monitors_own_host_names_are_refused(a, domain):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))

    errors = field_errors(add_page(editor, domain))

    assert any("this monitor's own" in error for error in errors), errors
    assert not StatusPage.objects.filter(slug="new-page").exists()


def test_a_domain_another_teams_page_has_is_refused(a, b):
    b.page.custom_domain = "status.bravo.test"
    b.page.save()
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))

    errors = field_errors(add_page(editor, "status.bravo.test"))

    assert any("already has" in error for error in errors), errors
    b.page.refresh_from_db()
    assert b.page.custom_domain == "status.bravo.test"


def test_any_other_domain_is_taken(a):
    editor = client_of(member(a.team, Role.EDITOR, "eddie"))

    response = add_page(editor, "status.alpha.test")

    assert response.status_code == 302
    page = StatusPage.objects.get(slug="new-page")
    assert (page.custom_domain, page.team) == ("status.alpha.test", a.team)


def test_the_model_refuses_them_too_and_names_the_field(a, b):
    b.page.custom_domain = "status.bravo.test"
    b.page.save()

    for domain in ("monitor.example.com", "status.bravo.test"):
        a.page.custom_domain = domain
        with pytest.raises(ValidationError) as refused:
            a.page.full_clean()
        assert "custom_domain" in refused.value.message_dict, domain


def test_a_page_keeps_its_own_domain_when_saved_again(a):
    a.page.custom_domain = "status.alpha.test"
    a.page.save()

    a.page.full_clean()


def test_a_page_that_claimed_the_monitors_name_before_does_not_take_its_root(
    client, settings, a
):
    settings.ALLOWED_HOSTS = ["monitor.example.com"]
    StatusPage.objects.filter(pk=a.page.pk).update(
        custom_domain="monitor.example.com", visibility="public"
    )
    cache.clear()

    response = client.get("/", HTTP_HOST="monitor.example.com")

    assert response.status_code == 302  # the dashboard's sign-in, not the page
    assert "/accounts/login/" in response["Location"]
