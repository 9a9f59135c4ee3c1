"""Secrets shown masked: Apprise URLs (S4-04), headers, payload links (S4-10)."""

from __future__ import annotations

import pytest

from projects.notifications.masking import (
    MASK,
    masked_email,
    masked_headers,
    masked_payload,
    masked_url,
)

# (URL, what may be shown): the review's URLs and services whose host is a token.
APPRISE = [
    (
        "json://user:pass@hooks.example.com/T0/B0/SECRETPATH"
        "?+Authorization=Bearer%20HDRSECRET&-token=QSECRET",
        f"json://hooks.example.com/{MASK}",
    ),
    (
        "form://hooks.example.com/path?-api_key=APIKEY1&+X-Api-Key=HDRKEY2",
        f"form://hooks.example.com/{MASK}",
    ),
    (
        "jsons://hooks.example.com/services/SECRETPATH123",
        f"jsons://hooks.example.com/{MASK}",
    ),
    (
        "xml://hooks.example.com:8080/?token=QSECRET",
        f"xml://hooks.example.com:8080/{MASK}",
    ),
    ("ntfy://user:pw@ntfy.sh/secret-topic-123", f"ntfy://ntfy.sh/{MASK}"),
    ("ntfy://secret-topic-123", f"ntfy://{MASK}"),
    ("tgram://123456789:AAHSECRETBOTTOKEN/987654", f"tgram://{MASK}"),
    ("discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV", f"discord://{MASK}"),
    ("json://[::1]:8080/hook", f"json://[::1]:8080/{MASK}"),
    ("json://hooks.example.com", "json://hooks.example.com/"),
]
SECRETS = ["pass", "SECRETPATH", "HDRSECRET", "QSECRET", "APIKEY1", "HDRKEY2"]


@pytest.mark.parametrize(("url", "shown"), APPRISE)
def test_an_apprise_url_shows_the_scheme_and_host_only(url, shown):
    masked = masked_url("apprise", url)

    assert masked == shown
    for secret in [*SECRETS, "secret-topic", "AAHSECRET", "JHMHI8", "987654"]:
        assert secret not in masked


def test_header_values_are_masked_and_names_kept():
    headers = {"Authorization": "Bearer x", "Accept": "text/html"}

    assert masked_headers(headers) == {"Authorization": MASK, "Accept": MASK}
    assert masked_headers(None) == {}


def test_a_payloads_links_and_tokens_are_masked_at_any_depth():
    payload = {
        "event": "status.confirm",
        "links": {
            "confirm": "https://x/confirm/TOKEN1/",
            "unsubscribe": "https://x/u/T/",
        },
        "items": [{"token": "TOKEN2", "title": "kept"}],
    }

    masked = masked_payload(payload)

    assert masked == {
        "event": "status.confirm",
        "links": {"confirm": MASK, "unsubscribe": MASK},
        "items": [{"token": MASK, "title": "kept"}],
    }


def test_an_address_shows_its_domain_only():
    assert masked_email("ann@example.com, bob@example.org") == (
        f"{MASK}@example.com, {MASK}@example.org"
    )
