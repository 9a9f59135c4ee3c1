"""HTTP(S): the project's request, judged by status, keyword, JSON and
response time (polling/engine/probes/http.py)."""

from __future__ import annotations

from urllib.parse import SplitResult

from projects.checks.expectations import normalized_status_codes
from projects.checks.kinds.kind import CheckKind


def check_url(parts: SplitResult) -> None:
    """Any path, query and credentials go with the request."""


def up_rules(project) -> list[str]:
    rules = [f"status {normalized_status_codes(project.expected_status)}"]
    if project.keyword:
        verb = "contains" if project.keyword_mode == "contains" else "does not contain"
        rules.append(f"the body {verb} “{project.keyword}”")
    for item in project.header_assertions or ():
        value = f" {item.get('value')}" if item.get("value") else ""
        rules.append(f"header {item.get('name')} {item.get('operator')}{value}")
    if project.json_query:
        rules.append(
            f"JSON {project.json_query} {project.json_operator} {project.json_expected}"
        )
    return rules


KIND = CheckKind(
    name="http",
    label="HTTP(S)",
    schemes=("http", "https"),
    example="https://example.com/health",
    sends_http=True,
    check_url=check_url,
    up_rules=up_rules,
    tls_schemes=("https",),
)
