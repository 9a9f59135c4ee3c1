"""Signing in, through django-allauth: single sign-on with a real OpenID
Connect provider on 127.0.0.1 (tests/support/oidc_provider.py) makes the account
of an allowed domain; REQUIRE_2FA sends a new user to set up TOTP first,
and a later sign-in without the code is refused (codes computed here).
The admin's login cannot skip any of it, and failed sign-ins are limited.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import httpx
import pytest
from allauth.mfa.models import Authenticator
from allauth.mfa.totp.internal.auth import format_hotp_value, hotp_value

from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from projects.models import Membership, Role
from tests.support.oidc_provider import OidcProvider
from tests.support.teams import make_team, member

pytestmark = pytest.mark.django_db

CLIENT_ID, CLIENT_SECRET = "monitor", "client-secret-for-tests"
ADA = {"sub": "ada-1", "email": "ada@example.test", "email_verified": True}


@pytest.fixture(autouse=True)
def fresh_rate_limits():
    """allauth counts failed sign-ins in the cache: one test's failures
    must not lock another's account."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def provider(settings):
    with OidcProvider(client_id=CLIENT_ID, client_secret=CLIENT_SECRET) as provider:
        settings.SOCIALACCOUNT_PROVIDERS = {
            "openid_connect": {
                "APPS": [
                    {
                        "provider_id": "oidc",
                        "name": "Single sign-on",
                        "client_id": CLIENT_ID,
                        "secret": CLIENT_SECRET,
                        "settings": {"server_url": provider.url},
                    }
                ]
            }
        }
        settings.OIDC_ALLOWED_DOMAINS = ["example.test"]
        provider.user = ADA
        yield provider


def sign_in_with_sso(client: Client):
    """Start at the monitor, let the provider approve, come back; returns
    the monitor's answer."""
    start = client.post(reverse("openid_connect_login", args=["oidc"]))
    assert start.status_code == 302, start.content
    approved = httpx.get(start["Location"], follow_redirects=False)
    assert approved.status_code == 302
    back = urlsplit(approved.headers["Location"])
    return client.get(f"{back.path}?{back.query}")


def totp_code(secret: str) -> str:
    return format_hotp_value(hotp_value(secret, int(time.time()) // 30))


@pytest.mark.slow
def test_sso_makes_the_account_and_2fa_is_required(provider, settings):
    settings.REQUIRE_2FA = True
    settings.OIDC_DEFAULT_TEAM = "alpha"
    a = make_team("alpha")
    client = Client()

    assert sign_in_with_sso(client).status_code == 302

    ada = User.objects.get(email="ada@example.test")
    assert Membership.objects.get(user=ada).team == a.team
    assert Membership.objects.get(user=ada).role == Role.VIEWER
    # Nothing but the second factor's setup until there is one.
    overview = client.get(reverse("dashboard:overview"))
    assert overview.status_code == 302
    assert overview["Location"].startswith(reverse("mfa_activate_totp"))
    setup = client.get(reverse("mfa_activate_totp"))
    secret = setup.context["form"].secret
    client.post(reverse("mfa_activate_totp"), {"code": totp_code(secret)})
    assert Authenticator.objects.filter(user=ada, type="totp").exists()
    assert client.get(reverse("dashboard:overview")).status_code == 200

    # The next sign-in asks for the code, and is refused without it.
    again = Client()
    asked = sign_in_with_sso(again)
    assert asked["Location"].startswith(reverse("mfa_authenticate"))
    assert again.get(reverse("dashboard:overview")).status_code == 302
    wrong = again.post(reverse("mfa_authenticate"), {"code": "000000"})
    assert wrong.status_code == 200
    assert "_auth_user_id" not in again.session
    again.post(reverse("mfa_authenticate"), {"code": totp_code(secret)})
    assert again.get(reverse("dashboard:overview")).status_code == 200
    assert provider.token_requests == 2


@pytest.mark.slow
def test_an_address_outside_the_allowed_domains_gets_no_account(provider):
    provider.user = {**ADA, "email": "eve@elsewhere.test"}

    refused = sign_in_with_sso(Client())

    assert "sign up is currently closed" in refused.content.decode()
    assert not User.objects.filter(email="eve@elsewhere.test").exists()


@pytest.mark.slow
def test_an_unverified_address_gets_no_account(provider):
    provider.user = {**ADA, "email_verified": False}

    refused = sign_in_with_sso(Client())

    assert "sign up is currently closed" in refused.content.decode()
    assert not User.objects.filter(email="ada@example.test").exists()


def test_the_admins_login_goes_through_the_one_sign_in():
    user = member(None, None, "sam")
    user.set_password("a long pass 42!")
    user.save()
    client = Client()

    page = client.get(reverse("admin:login"))
    posted = client.post(
        reverse("admin:login"), {"username": "sam", "password": "a long pass 42!"}
    )

    assert page.status_code == 302
    assert page["Location"].startswith(reverse("account_login"))
    assert posted.status_code == 302
    assert "_auth_user_id" not in client.session


def test_a_password_sign_in_asks_for_the_second_factor():
    user = member(None, None, "sam")
    user.set_password("a long pass 42!")
    user.save()
    Authenticator.objects.create(
        user=user, type=Authenticator.Type.TOTP, data={"secret": "unused"}
    )
    client = Client()

    response = client.post(
        reverse("account_login"), {"login": "sam", "password": "a long pass 42!"}
    )

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("mfa_authenticate"))
    assert "_auth_user_id" not in client.session


def test_failed_sign_ins_are_rate_limited():
    user = member(None, None, "sam")
    user.set_password("a long pass 42!")
    user.save()
    client = Client()

    for _ in range(5):
        client.post(reverse("account_login"), {"login": "sam", "password": "wrong"})
    right = client.post(
        reverse("account_login"), {"login": "sam", "password": "a long pass 42!"}
    )

    assert right.status_code in (200, 429)
    assert "_auth_user_id" not in client.session


def test_the_second_factor_page_offers_an_app_and_security_keys():
    user = member(None, None, "sam")
    user.set_password("a long pass 42!")
    user.save()
    client = Client()
    client.post(
        reverse("account_login"), {"login": "sam", "password": "a long pass 42!"}
    )

    # (Setting each up asks to sign in again unless just signed in: the
    # single sign-on test above sets TOTP up.)
    response = client.get(reverse("mfa_index"))
    assert response.status_code == 200
    index = response.content.decode()
    assert "Authenticator App" in index
    assert "Security Keys" in index
