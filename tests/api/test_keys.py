"""API keys: stored as hashes, sent as Bearer, scoped, revocable, throttled."""

from __future__ import annotations

from io import StringIO

import pytest
from rest_framework.test import APIClient

from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.utils import timezone

from projects.models import ApiKey, Project
from projects.models.api_keys import hash_key

PROJECT = {"name": "site", "url": "http://127.0.0.1:9/"}


@pytest.fixture(autouse=True)
def _fresh_throttle_counts():
    cache.clear()
    yield
    cache.clear()


def bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.mark.django_db
def test_createapikey_prints_the_key_alone_and_stores_only_its_hash():
    out = StringIO()
    call_command("createapikey", "deploy script", "--scope", "write", stdout=out)

    key = out.getvalue().strip()
    assert out.getvalue() == key + "\n"
    stored = ApiKey.objects.get()
    assert stored.name == "deploy script"
    assert stored.scope == "write"
    assert stored.key_hash == hash_key(key) != key
    assert stored.prefix == key[:8]
    assert len(key) >= 43  # 32 random bytes, base64
    assert key not in str(list(ApiKey.objects.values()))


@pytest.mark.django_db
def test_createapikey_refuses_an_unknown_scope():
    with pytest.raises(CommandError, match="invalid choice: 'admin'"):
        call_command("createapikey", "x", "--scope", "admin")
    assert not ApiKey.objects.exists()


@pytest.mark.django_db
def test_a_missing_key_is_401_with_a_json_error():
    response = APIClient().get("/api/v1/projects/")

    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    assert "API key" in response.json()["detail"]
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "header", ["Bearer nope", "Token abc", "Bearer ", "Basic dXNlcjpwYXNz"]
)
def test_a_wrong_key_is_401(header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)

    response = client.get("/api/v1/projects/")

    assert response.status_code == 401
    assert response.json()["detail"]


@pytest.mark.django_db
def test_a_revoked_key_is_401():
    api_key, key = ApiKey.issue("old", "write")
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=timezone.now())

    response = bearer(key).get("/api/v1/projects/")

    assert response.status_code == 401
    assert response.json() == {"detail": "Unknown or revoked API key."}


def test_a_read_key_reads_but_gets_403_on_every_write_method(read_api, make_project):
    project = make_project()
    assert read_api.get("/api/v1/projects/").status_code == 200

    writes = [
        read_api.post("/api/v1/projects/", PROJECT, format="json"),
        read_api.patch(f"/api/v1/projects/{project.pk}/", {"interval": 10}),
        read_api.put("/api/v1/projects/by-name/site/", PROJECT, format="json"),
        read_api.post(f"/api/v1/projects/{project.pk}/pause/"),
        read_api.delete(f"/api/v1/projects/{project.pk}/"),
    ]

    assert [response.status_code for response in writes] == [403] * 5
    assert "write scope" in writes[0].json()["detail"]
    assert Project.objects.get().enabled is True


def test_a_write_key_writes(write_api):
    response = write_api.post("/api/v1/projects/", PROJECT, format="json")

    assert response.status_code == 201, response.json()


def test_using_a_key_records_when_at_most_once_a_minute(write_api):
    write_api.get("/api/v1/tags/")
    first = ApiKey.objects.get().last_used_at
    write_api.get("/api/v1/tags/")

    assert first is not None
    assert ApiKey.objects.get().last_used_at == first


def test_beyond_the_throttle_a_key_gets_429_with_retry_after(
    write_api, read_api, settings
):
    settings.API_THROTTLE = "3/min"
    answers = [write_api.get("/api/v1/tags/").status_code for _ in range(4)]

    assert answers == [200, 200, 200, 429]
    refused = write_api.get("/api/v1/tags/")
    assert int(refused["Retry-After"]) > 0
    assert "throttled" in refused.json()["detail"].lower()
    # Counted per key: another key is not held back.
    assert read_api.get("/api/v1/tags/").status_code == 200


def test_status_needs_no_key(db):
    response = APIClient().get("/api/v1/status/")

    assert response.status_code == 200
    assert response.json()["database"] is True
