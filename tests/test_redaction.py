"""redact_url(): URLs without their credentials, for messages and logs."""

from __future__ import annotations

import pytest

from projects.redaction import MASK, is_secret_name, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://example.com/health", "https://example.com/health"),
        ("https://user:pa55@example.com/x", "https://example.com/x"),
        ("https://user@example.com:8443/x", "https://example.com:8443/x"),
        ("https://a:b@[::1]:8080/", "https://[::1]:8080/"),
        ("https://example.com/?token=abc", f"https://example.com/?token={MASK}"),
        (
            "https://example.com/s?q=uptime&API_KEY=k&page=2",
            f"https://example.com/s?q=uptime&API_KEY={MASK}&page=2",
        ),
        (
            "https://x.test/?X-Amz-Signature=f00&sig=1&Signature=2",
            f"https://x.test/?X-Amz-Signature={MASK}&sig={MASK}&Signature={MASK}",
        ),
        (
            "https://x.test/cb?code=123&state=ok",
            f"https://x.test/cb?code={MASK}&state=ok",
        ),
        (
            "https://x.test/?refresh_token=r&client_secret=s&monkey=m",
            f"https://x.test/?refresh_token={MASK}&client_secret={MASK}&monkey={MASK}",
        ),
        (
            "https://x.test/?password=p&passwd=p&pwd=p&auth=a",
            f"https://x.test/?password={MASK}&passwd={MASK}&pwd={MASK}&auth={MASK}",
        ),
        ("https://x.test/#access_token=t", f"https://x.test/#access_token={MASK}"),
        ("https://x.test/?token=&flag", "https://x.test/?token=&flag"),
        (
            "https://x.test/?a%20b=c+d&tok%65n=t",
            f"https://x.test/?a%20b=c+d&tok%65n={MASK}",
        ),
        ("tcp://user:pw@db.internal:5432", "tcp://db.internal:5432"),
        ("https://x.test:notaport/", MASK),
        ("", ""),
    ],
)
def test_a_url_is_shown_without_its_secrets(url, shown):
    assert redact_url(url) == shown


def test_nothing_secret_is_left_in_a_url_full_of_secrets():
    url = "https://admin:hunter2@example.com/api?apikey=s3cr3t&Access_Token=t0k3n"

    shown = redact_url(url)

    for secret in ("admin", "hunter2", "s3cr3t", "t0k3n"):
        assert secret not in shown
    assert shown.startswith("https://example.com/api?")


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("token", True),
        ("TOKEN", True),
        ("csrftoken", True),
        ("my_secret_value", True),
        ("keyword", True),  # contains "key": masked, to be safe
        ("code", True),
        ("page", False),
        ("q", False),
        ("status", False),
    ],
)
def test_which_names_look_secret(name, secret):
    assert is_secret_name(name) is secret
