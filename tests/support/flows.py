"""The flow of issue #44's contract, as the YAML file spells it, and the
team secret it reads."""

from __future__ import annotations

from projects.models import Team, TeamSecret
from projects.models.teams import default_team

SHOP_PASSWORD = "s3cret-Pa55word-7731"

CONTRACT_YAML = """\
projects:
- name: checkout works
  kind: flow
  interval: 60
  timeout_seconds: 20
  steps:
  - name: log in
    method: POST
    url: {base}/api/login
    headers: {{Content-Type: application/json}}
    body: '{{"user": "probe", "password": "{{{{secrets.shop_password}}}}"}}'
    expect: {{status: "200", json: [{{query: "token", operator: "!=", expected: null}}]}}
    capture: {{token: "json:token"}}
  - name: my orders
    method: GET
    url: {base}/api/orders
    headers: {{Authorization: "Bearer {{{{token}}}}"}}
    expect: {{status: "200-299", keyword: "orders", max_response_time_ms: 800}}
"""  # noqa: E501 - the issue's text, line for line


def contract_yaml(base: str = "https://shop.example.com") -> str:
    return CONTRACT_YAML.format(base=base)


def contract_steps(base: str = "https://shop.example.com") -> list[dict]:
    """The contract's steps in their normal form (every key present)."""
    return [
        {
            "name": "log in",
            "method": "POST",
            "url": f"{base}/api/login",
            "headers": {"Content-Type": "application/json"},
            "body": '{"user": "probe", "password": "{{secrets.shop_password}}"}',
            "expect": {
                "status": "200",
                "json": [{"query": "token", "operator": "!=", "expected": None}],
            },
            "capture": {"token": "json:token"},
        },
        {
            "name": "my orders",
            "method": "GET",
            "url": f"{base}/api/orders",
            "headers": {"Authorization": "Bearer {{token}}"},
            "body": "",
            "expect": {
                "status": "200-299",
                "keyword": "orders",
                "max_response_time_ms": 800,
            },
            "capture": {},
        },
    ]


def shop_secret(team: Team | None = None, value: str = SHOP_PASSWORD) -> TeamSecret:
    return TeamSecret.objects.create(
        team=team or default_team(), name="shop_password", value=value
    )
