"""Who may do what: any valid key may read, only a write key may change."""

from __future__ import annotations

from rest_framework import exceptions, permissions
from rest_framework.request import Request

from projects.models import ApiKey


class ApiKeyScope(permissions.BasePermission):
    def has_permission(self, request: Request, view) -> bool:
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            raise exceptions.NotAuthenticated(
                "An API key is needed: Authorization: Bearer <key>."
            )
        if request.method in permissions.SAFE_METHODS or api_key.can_write:
            return True
        raise exceptions.PermissionDenied(
            "This key may only read; changes need a key with the write scope."
        )
