"""A security key as second factor, in a real browser: headless Chromium
with the DevTools virtual authenticator (CTAP2, user verification on)
registers a key on allauth's MFA pages, signs out, and signs in again with
the password and then the key.

WebAuthn needs a secure context and an RP id the origin belongs to:
http://localhost is one (http://127.0.0.1 is not a valid RP id), so the
browser talks to the live server by that name.
"""

from __future__ import annotations

import re

import pytest

from projects.models import Role
from tests.support.browser import CHROMIUM, MISSING, chromium_context
from tests.support.teams import make_team, member

PASSWORD = "webauthn-test-password"
AUTHENTICATOR = {
    "protocol": "ctap2",
    "transport": "usb",
    "hasResidentKey": True,
    "hasUserVerification": True,
    "isUserVerified": True,
    "automaticPresenceSimulation": True,
}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


@pytest.fixture
def vera(transactional_db):
    """Made before Playwright starts: its event loop makes Django refuse
    ORM calls."""
    user = member(make_team("alpha").team, Role.VIEWER, "vera")
    user.set_password(PASSWORD)
    user.save()
    return user


@pytest.fixture
def site(live_server) -> str:
    return live_server.url.replace("127.0.0.1", "localhost")


@pytest.fixture
def browser_page(vera, tmp_path):
    """A page with a virtual security key plugged in; yields the page and
    a function that lists the credentials the key holds."""
    with chromium_context(tmp_path / "profile") as context:
        page = context.new_page()
        devtools = context.new_cdp_session(page)
        devtools.send("WebAuthn.enable")
        key = devtools.send(
            "WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR}
        )["authenticatorId"]

        def credentials() -> list[dict]:
            listed = devtools.send("WebAuthn.getCredentials", {"authenticatorId": key})
            return listed["credentials"]

        yield page, credentials


def sign_in_with_password(page, site: str) -> None:
    page.goto(f"{site}/accounts/login/")
    page.fill("#id_login", "vera")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


def test_a_security_key_is_registered_and_then_signs_in(browser_page, site):
    page, credentials = browser_page
    sign_in_with_password(page, site)
    page.wait_for_url(f"{site}/")

    page.goto(f"{site}/accounts/2fa/webauthn/add/")
    # allauth asks for the password again before a key is added.
    page.wait_for_url(re.compile(r"/accounts/reauthenticate/"))
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/accounts/2fa/webauthn/add/$"))
    page.fill("#id_name", "desk key")
    page.click("#mfa_webauthn_add")
    page.wait_for_url(lambda url: not url.endswith("/webauthn/add/"))
    registered = credentials()
    page.goto(f"{site}/accounts/2fa/webauthn/")
    listed = page.content()

    page.goto(f"{site}/accounts/logout/")
    page.click("button[type=submit]")
    sign_in_with_password(page, site)
    page.wait_for_url(re.compile(r"/accounts/2fa/authenticate/"))
    asked_for_second_factor = page.url
    page.click("#mfa_webauthn_authenticate")
    page.wait_for_url(f"{site}/")
    dashboard = page.content()

    assert len(registered) == 1
    assert registered[0]["rpId"] == "localhost"
    assert "desk key" in listed
    assert asked_for_second_factor.endswith("/accounts/2fa/authenticate/")
    assert "alpha-site" in dashboard
    assert credentials()[0]["signCount"] >= 1  # the key signed the sign-in
