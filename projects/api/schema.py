"""How the OpenAPI schema describes the API (the schema class and the API
key's scheme, loaded by the API's URLs).

Two things drf-spectacular does not do by itself:

- Every operation documents its error answers (400, 401, 403, 404, 429)
  with their JSON bodies, as docs/api.md lists them, so a generated client
  parses them into types instead of raising "unexpected status".
- Descriptions are written for the API's users: an operation's text is
  its handler's own docstring or its view's own, never one inherited from
  a mixin or a base class (those explain our code, not the API); a CRUD
  action without one gets a sentence from ACTIONS.
"""

from __future__ import annotations

import inspect

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent

OWN_CODE = "projects."

# What a CRUD action does, for views that say nothing more of it.
ACTIONS = {
    "list": "The key's team's {plural}, a page at a time.",
    "create": "Create a {singular} in the key's team (a write key); "
    "the answer is the {singular} as saved.",
    "retrieve": "One of the key's team's {plural}, by its id.",
    "update": "Replace a {singular}'s fields (a write key); "
    "the answer is the {singular} as saved.",
    "partial_update": "Change the fields sent of a {singular} (a write key); "
    "the answer is the {singular} as saved.",
    "destroy": "Delete a {singular} (a write key).",
}

DETAIL = {
    "type": "object",
    "description": "An error the API explains in one sentence.",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
FIELD_ERRORS = {
    "type": "object",
    "description": "What is wrong with the request, by field or parameter: "
    "each name maps to its messages (a list, or an object for a nested "
    "field). `detail` alone when the body as a whole is wrong "
    "(not JSON, too large).",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": {
        "anyOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "object", "additionalProperties": {}},
        ]
    },
}
# code: (component, schema, description); 400 for every operation, the
# others for operations that need a key (the status check does not).
ERRORS = {
    "400": ("FieldErrors", FIELD_ERRORS, "The request or a parameter is invalid."),
    "401": ("ErrorDetail", DETAIL, "No API key, or not a valid one."),
    "403": ("ErrorDetail", DETAIL, "The key may only read; this needs write."),
    "404": ("ErrorDetail", DETAIL, "No such object in the key's team, or page."),
    "429": (
        "ErrorDetail",
        DETAIL,
        "Over API_THROTTLE requests for this key; Retry-After says when to retry.",
    ),
}
KEY_ERRORS = ("401", "403", "404", "429")
RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer"},
        "description": "Seconds to wait before the next request.",
    }
}


class ApiSchema(AutoSchema):
    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(
            path, path_regex, path_prefix, method, registry
        )
        if operation is None:
            return None
        codes = ["400", *KEY_ERRORS] if operation.get("security") else ["400"]
        responses = operation["responses"]
        for code in codes:
            if "content" not in responses.get(code, {}):
                responses[code] = self._error(code, registry)
        for code, response in responses.items():
            if code.startswith("4") and "content" not in response:
                # A 409 the view declares: a sentence, like the others.
                responses[code] = self._error(code, registry, response["description"])
        return operation

    def _error(self, code: str, registry, description: str = "") -> dict:
        name, schema, default = ERRORS.get(code, ("ErrorDetail", DETAIL, ""))
        description = description or default
        component = ResolvedComponent(
            name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema
        )
        registry.register_on_missing(component)
        response = {
            "description": description,
            "content": {"application/json": {"schema": component.ref}},
        }
        if code == "429":
            response["headers"] = RETRY_AFTER
        return response

    def get_description(self) -> str:
        action = getattr(self.view, "action", None) or self.method.lower()
        handler = getattr(self.view, action, None)
        own = _own_doc(handler) or _own_doc(type(self.view))
        return own or self._action_description(action)

    def _action_description(self, action: str) -> str:
        serializer = getattr(self.view, "serializer_class", None)
        model = getattr(getattr(serializer, "Meta", None), "model", None)
        if model is None or action not in ACTIONS:
            return ""
        meta = model._meta
        return ACTIONS[action].format(
            singular=meta.verbose_name, plural=meta.verbose_name_plural
        )

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        if not _own_doc(type(serializer)):
            schema.pop("description", None)
        return schema


def _own_doc(obj) -> str:
    """obj's docstring if it is written on obj itself in our code; "" for
    a docstring inherited from a base class, or one of a library's."""
    if obj is None or not getattr(obj, "__module__", "").startswith(OWN_CODE):
        return ""
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
    else:
        doc = getattr(obj, "__doc__", None)
    return inspect.cleandoc(doc) if doc else ""


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "projects.api.authentication.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema) -> dict:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key from `manage.py createapikey` or the admin.",
        }
