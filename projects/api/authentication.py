"""Bearer API keys: `Authorization: Bearer <key>`.

The key is looked up by its SHA-256 (projects/models/api_keys.py), so no
comparison of secrets happens in Python at all. The key never reaches a log:
it travels in a header, and nothing here prints it.
"""

from __future__ import annotations

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from django.contrib.auth.models import AnonymousUser

from projects.models import ApiKey
from projects.models.api_keys import hash_key

SCHEME = "Bearer"


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[AnonymousUser, ApiKey] | None:
        """None when no key is sent (the permission then answers 401)."""
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _, key = header.partition(" ")
        if scheme.lower() != SCHEME.lower() or not key.strip():
            raise exceptions.AuthenticationFailed(
                "Send the key as: Authorization: Bearer <key>."
            )
        api_key = (
            ApiKey.objects.filter(key_hash=hash_key(key.strip()), revoked_at=None)
            # Its team scopes every query (projects/api/teams.py); its name
            # signs the audit log.
            .select_related("team")
            .only("pk", "name", "scope", "last_used_at", "team")
            .first()
        )
        if api_key is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked API key.")
        api_key.note_use()
        return AnonymousUser(), api_key

    def authenticate_header(self, request: Request) -> str:
        # Makes a missing or wrong key a 401 (with WWW-Authenticate), not 403.
        return f'{SCHEME} realm="api"'
