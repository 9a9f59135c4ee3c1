"""A private status page is for its own team, through every one of its
URLs: the page, its feed, its badge, its subscribe form and the confirm
link, on the main host and on the page's own domain. A visitor who is not
signed in is sent to sign in; anyone else outside the team (a member of
another team, a staff account with no team) gets a 404 and nothing of
the page."""

from __future__ import annotations

import pytest

from django.core.cache import cache
from django.test import Client

from projects.models import Role, Subscriber
from tests.support.teams import client_of, member

pytestmark = pytest.mark.django_db
DOMAIN = "status.alpha.test"
# Everything after /status/<slug>/ (or / on the page's own domain).
PAGE_PARTS = ["", "feed.atom", "badge.svg", "subscribe/"]


@pytest.fixture(autouse=True)
def empty_cache(settings):
    settings.ALLOWED_HOSTS = [DOMAIN, "testserver"]
    cache.clear()
    yield
    cache.clear()


def main_host_urls(page) -> list[str]:
    token = Subscriber.objects.get(page=page).token
    base = f"/status/{page.slug}/"
    return [base + part for part in PAGE_PARTS] + [f"{base}subscribe/confirm/{token}/"]


def on_domain(page) -> list[str]:
    """Every route the page's own domain adds to the site's."""
    from monitor.urls import urlpatterns as site_routes
    from projects.status_pages.domain_urls import urlpatterns

    page.custom_domain = DOMAIN
    page.save()
    routes = ["/" + str(p.pattern) for p in urlpatterns if p not in site_routes]
    assert len(routes) == len(PAGE_PARTS)
    return routes


def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in(a, b):
    for url in main_host_urls(a.page):
        response = Client().get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/"), url


def test_a_member_of_another_team_gets_404_and_nothing_of_the_page(a, b):
    outsider = client_of(member(b.team, Role.MANAGER, "mallory"))

    for url in main_host_urls(a.page):
        response = outsider.get(url)
        assert response.status_code == 404, url
        assert b"alpha-page" not in response.content, url


def test_a_staff_account_in_no_team_gets_404(a, b):
    stranger = client_of(member(None, None, "stan"))

    for url in main_host_urls(a.page):
        assert stranger.get(url).status_code == 404, url


def test_a_member_of_the_pages_team_gets_every_url(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    for url in main_host_urls(a.page):
        assert viewer.get(url).status_code == 200, url


def test_on_the_pages_own_domain_the_same_rule_holds(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))
    outsider = client_of(member(b.team, Role.MANAGER, "mallory"))

    for url in on_domain(a.page):
        anonymous = Client().get(url, HTTP_HOST=DOMAIN)
        assert anonymous.status_code == 302, url
        assert "/accounts/login/" in anonymous["Location"], url
        assert outsider.get(url, HTTP_HOST=DOMAIN).status_code == 404, url
        assert viewer.get(url, HTTP_HOST=DOMAIN).status_code == 200, url


def test_another_team_cannot_subscribe_to_a_private_page(a, b):
    outsider = client_of(member(b.team, Role.MANAGER, "mallory"))

    response = outsider.post(
        f"/status/{a.page.slug}/subscribe/", {"email": "mallory@example.test"}
    )

    assert response.status_code == 404
    assert not Subscriber.objects.filter(email="mallory@example.test").exists()


def test_another_team_cannot_confirm_a_subscription_to_a_private_page(a, b):
    outsider = client_of(member(b.team, Role.MANAGER, "mallory"))
    subscriber = Subscriber.objects.get(page=a.page)
    url = f"/status/{a.page.slug}/subscribe/confirm/{subscriber.token}/"

    assert Client().post(url).status_code == 302
    assert outsider.post(url).status_code == 404
    subscriber.refresh_from_db()
    assert subscriber.is_confirmed is False


def test_a_member_subscribes_to_and_confirms_a_private_page(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    response = viewer.post(
        f"/status/{a.page.slug}/subscribe/", {"email": "vera@example.test"}
    )

    assert response.status_code == 200
    subscriber = Subscriber.objects.get(email="vera@example.test")
    url = f"/status/{a.page.slug}/subscribe/confirm/{subscriber.token}/"
    assert viewer.post(url).status_code == 200
    subscriber.refresh_from_db()
    assert subscriber.is_confirmed is True


def test_a_private_pages_badge_and_feed_are_kept_out_of_shared_caches(a, b):
    viewer = client_of(member(a.team, Role.VIEWER, "vera"))

    for part in ("badge.svg", "feed.atom"):
        response = viewer.get(f"/status/{a.page.slug}/{part}")
        assert response.status_code == 200, part
        assert "private" in response["Cache-Control"], part
        assert "public" not in response["Cache-Control"], part


def test_a_public_pages_badge_and_feed_stay_open_to_everyone(a, b):
    a.page.visibility = a.page.Visibility.PUBLIC
    a.page.save()

    for url in main_host_urls(a.page):
        assert Client().get(url).status_code == 200, url
    badge = Client().get(f"/status/{a.page.slug}/badge.svg")
    assert "public" in badge["Cache-Control"]


def every_page_url(page) -> list[tuple[str, str]]:
    """(name, URL) of every route of the status pages' URLconf, so a route
    added later is walked too."""
    from projects.status_pages.urls import urlpatterns

    token = Subscriber.objects.get(page=page).token
    found = []
    for pattern in urlpatterns:
        route = str(pattern.pattern)
        url = route.replace("<slug:slug>", page.slug).replace("<str:token>", token)
        found.append((pattern.name, "/status/" + url))
    return found


def test_every_route_but_unsubscribe_hides_a_private_page_from_another_team(a, b):
    outsider = client_of(member(b.team, Role.MANAGER, "mallory"))
    routes = every_page_url(a.page)
    assert len(routes) >= 6

    for name, url in routes:
        expected = 200 if name == "unsubscribe" else 404  # its token is the key
        assert outsider.get(url).status_code == expected, url
