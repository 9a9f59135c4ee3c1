"""The OpenAPI schema passes the validators people point at it
(conformance review O1, O2): openapi-spec-validator accepts it, every
operation documents its error answers with the bodies the API really
sends, its words are written for the API's users, and a client generated
by openapi-python-client parses errors into types.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import httpx
import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator
from openapi_spec_validator import validate

from django.test import Client

from projects.api.schema import ERRORS
from projects.api.serializers.forms import FormBackedSerializer
from projects.api.teams import Audited

KEY_ERRORS = ["400", "401", "403", "404", "429"]
GENERATOR = Path(sys.executable).with_name("openapi-python-client")


@pytest.fixture(scope="module")
def schema() -> dict:
    # Through JSON, as a client reads it (no lazy strings, no tuples).
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(json.dumps(generated, default=str))


def operations(schema: dict):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield f"{method.upper()} {path}", operation


def error_schema(schema: dict, code: str) -> dict:
    """The documented body of `code`, with the components to resolve it."""
    return {
        "$ref": f"#/components/schemas/{ERRORS[code][0]}",
        "components": schema["components"],
    }


def test_the_schema_is_valid_openapi(schema):
    validate(schema)


def test_every_operation_documents_its_errors_with_a_json_body(schema):
    missing = {}
    for name, operation in operations(schema):
        codes = KEY_ERRORS if operation.get("security") else ["400"]
        documented = operation["responses"]
        lacking = [
            code
            for code in codes
            if "application/json" not in documented.get(code, {}).get("content", {})
        ]
        if lacking:
            missing[name] = lacking

    assert len(list(operations(schema))) >= 30
    assert missing == {}


def test_operations_are_described_in_words_not_internal_docstrings(schema):
    internal = [
        " ".join(doc.split()[:6])
        for doc in (Audited.__doc__, FormBackedSerializer.__doc__)
    ]
    described = [op.get("description", "") for _, op in operations(schema)]
    components = schema["components"]["schemas"].values()
    texts = described + [c.get("description", "") for c in components]

    assert all(described), "an operation has no description"
    for words in internal:
        assert [t for t in texts if words in " ".join(t.split())] == []


def test_the_error_bodies_sent_are_the_documented_ones(
    schema, read_api, write_api, make_project, settings
):
    project = make_project()
    bodies = {
        "400": read_api.get("/api/v1/incidents/", {"project": "²"}),
        "401": Client().get("/api/v1/projects/", HTTP_AUTHORIZATION="Bearer nope"),
        "403": read_api.post("/api/v1/tags/", {"name": "t"}),
        "404": read_api.get("/api/v1/projects/999999/"),
    }
    settings.API_THROTTLE = "1/min"
    write_api.get(f"/api/v1/projects/{project.pk}/")
    bodies["429"] = write_api.get(f"/api/v1/projects/{project.pk}/")

    assert {code: r.status_code for code, r in bodies.items()} == {
        code: int(code) for code in bodies
    }
    for code, response in bodies.items():
        jsonschema.validate(response.json(), error_schema(schema, code))
    assert "Retry-After" in bodies["429"].headers


def test_a_form_error_is_the_documented_body(schema, write_api):
    response = write_api.post(
        "/api/v1/projects/",
        {"name": "", "url": "http://127.0.0.1:9/", "interval": 1},
    )

    assert response.status_code == 400
    jsonschema.validate(response.json(), error_schema(schema, "400"))


@pytest.fixture(scope="module")
def generated_client(schema, tmp_path_factory):
    """The modules of a client openapi-python-client generated from the
    schema: its client, its models, and the operations the test calls."""
    folder = tmp_path_factory.mktemp("client")
    (folder / "schema.json").write_text(json.dumps(schema))
    done = subprocess.run(
        [GENERATOR, "generate", "--path", "schema.json", "--meta", "none"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": str(GENERATOR.parent)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout, done.stdout
    package = next(p.name for p in folder.iterdir() if (p / "client.py").exists())
    names = [
        "client",
        "models",
        "api.projects.projects_retrieve",
        "api.incidents.incidents_list",
    ]
    sys.path.insert(0, str(folder))
    try:
        yield {name: importlib.import_module(f"{package}.{name}") for name in names}
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m.split(".")[0] == package]:
            del sys.modules[name]


class DjangoTransport(httpx.BaseTransport):
    """httpx requests answered by Django's test client: the generated
    client talks to the app in this test's database, with no server."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = Client(raise_request_exception=False).generic(
            request.method,
            str(request.url.copy_with(scheme=None, host=None)),
            data=request.read(),
            content_type=request.headers.get("content-type", ""),
            headers={"Authorization": request.headers.get("authorization", "")},
        )
        return httpx.Response(
            answer.status_code, headers=dict(answer.items()), content=answer.content
        )


def test_a_generated_client_parses_errors_into_types(generated_client, read_api):
    modules, models = generated_client, generated_client["models"]

    def client(token: str):
        return (
            modules["client"]
            .AuthenticatedClient(base_url="http://testserver", token=token)
            .set_httpx_client(
                httpx.Client(
                    base_url="http://testserver",
                    transport=DjangoTransport(),
                    headers={"Authorization": f"Bearer {token}"},
                )
            )
        )

    retrieve = modules["api.projects.projects_retrieve"].sync_detailed
    incidents = modules["api.incidents.incidents_list"].sync_detailed

    not_found = retrieve(999999, client=client(read_api.key))
    refused = retrieve(1, client=client("nope"))
    invalid = incidents(client=client(read_api.key), project=-1)

    assert (not_found.status_code, refused.status_code) == (404, 401)
    assert isinstance(not_found.parsed, models.ErrorDetail)
    assert isinstance(refused.parsed, models.ErrorDetail)
    assert "API key" in refused.parsed.detail
    assert invalid.status_code == 400
    assert isinstance(invalid.parsed, models.FieldErrors)
    assert "project" in invalid.parsed.additional_properties
