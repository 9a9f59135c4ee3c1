"""Standard Webhooks secrets and signatures, checked against the spec's
reference implementation."""

from __future__ import annotations

import time

import pytest
from standardwebhooks.webhooks import Webhook

from projects.notifications.signing import new_secret, secret_key, signed_headers


def test_a_new_secret_is_whsec_base64_and_verifies_with_the_reference():
    secret = new_secret()
    body = b'{"event":"test"}'

    headers = signed_headers(secret, "msg_1", int(time.time()), body)

    assert secret.startswith("whsec_")
    assert len(secret_key(secret)) == 24
    assert Webhook(secret).verify(body, headers) == {"event": "test"}


def test_the_signature_covers_the_id_and_timestamp():
    secret = new_secret()
    one = signed_headers(secret, "msg_1", 1_700_000_000, b"{}")
    other_id = signed_headers(secret, "msg_2", 1_700_000_000, b"{}")
    other_time = signed_headers(secret, "msg_1", 1_700_000_001, b"{}")

    signatures = {h["webhook-signature"] for h in (one, other_id, other_time)}
    assert len(signatures) == 3


def test_without_a_secret_the_headers_carry_no_signature():
    headers = signed_headers("", "msg_1", 1_700_000_000, b"{}")

    assert headers == {"webhook-id": "msg_1", "webhook-timestamp": "1700000000"}


@pytest.mark.parametrize(
    ("secret", "message"),
    [
        ("c2VjcmV0c2VjcmV0c2VjcmV0", "starts with whsec_"),
        ("whsec_not base64!", "followed by base64"),
        ("whsec_c2hvcnQ=", "at least 16 bytes"),
    ],
)
def test_a_malformed_secret_is_refused_with_a_reason(secret, message):
    with pytest.raises(ValueError, match=message):
        secret_key(secret)
