"""A Hurl file (https://hurl.dev/docs/hurl-file.html) as a flow: its
common subset becomes the steps of projects/checks/kinds/flow.py, and
every line outside it is reported, never dropped silently.

The subset:

- each entry's request line (`POST https://…`), its headers and its body
  (JSON starting with `{` or `[`, or a ``` block);
- its response line (`HTTP 200`, `HTTP/1.1 201`; `HTTP *` checks no
  status) and the response headers under it (each must contain its value);
- `[Captures]`: `name: jsonpath "$.a.b[0]"`, `name: header "Name"`,
  `name: regex "(…)"` (first group) and `name: status`;
- `[Asserts]`: `status == 200`, `jsonpath "$.x" <op> <value>` with ==,
  !=, <, > or contains, `jsonpath "$.x" exists` (not null),
  `body contains "…"` (and `not contains`), `header "Name" contains "…"`
  and `duration < 800` (the step's slow limit, in ms).

JSONPath becomes JMESPath for the dotted subset ($.a.b[0].c); Hurl's
`{{name}}` stays a captured value, or becomes `{{secrets.name}}` for the
names given as secrets (Hurl's --secret).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_REQUEST = re.compile(r"^([A-Z]+)\s+(\S+)\s*$")
_RESPONSE = re.compile(r"^HTTP(?:/[\d.]+)?\s+(\d{3}|\*)\s*$")
_HEADER = re.compile(r"^([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s*:\s*(.*)$")
_SECTION = re.compile(r"^\[([A-Za-z]+)\]\s*$")
_QUOTED = r'"((?:[^"\\]|\\.)*)"'
_CAPTURE = re.compile(
    rf"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(jsonpath|header|regex)\s+{_QUOTED}\s*$"
)
_CAPTURE_STATUS = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*status\s*$")
_JSON_ASSERT = re.compile(
    rf"^jsonpath\s+{_QUOTED}\s+(==|!=|<|>|contains|exists)\s*(.*)$"
)
_STATUS_ASSERT = re.compile(r"^status\s+==\s+(\d{3})\s*$")
_BODY_ASSERT = re.compile(rf"^body\s+(not\s+)?contains\s+{_QUOTED}\s*$")
_HEADER_ASSERT = re.compile(rf"^header\s+{_QUOTED}\s+contains\s+{_QUOTED}\s*$")
_DURATION_ASSERT = re.compile(r"^duration\s+<\s+(\d+)\s*$")
_JSONPATH = re.compile(r"^\$((?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*)$")
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}")


@dataclass
class HurlFlow:
    """The steps read, and "line N: text: why" for every line left out."""

    steps: list[dict] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)


@dataclass
class _Entry:
    step: dict
    section: str = "request"  # request, body, response, Captures, Asserts


def read_hurl(text: str, secrets: frozenset[str] = frozenset()) -> HurlFlow:
    """The flow of a Hurl file; `secrets` are the variables that are team
    secrets ({{name}} -> {{secrets.name}})."""
    flow = HurlFlow()
    entry: _Entry | None = None
    body: list[str] | None = None
    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()

        def skip(why: str) -> None:
            flow.unsupported.append(f"line {number}: {line}: {why}")  # noqa: B023

        if body is not None:  # inside a ``` block
            if line == "```":
                entry.step["body"] = "\n".join(body)
                body = None
            else:
                body.append(raw)
            continue
        if not line or line.startswith("#"):
            continue
        if (request := _REQUEST.match(line)) and not _RESPONSE.match(line):
            if request.group(1) in METHODS:
                entry = _Entry(_new_step(request.group(1), request.group(2)))
                flow.steps.append(entry.step)
            else:
                entry = None
                skip(f"the method {request.group(1)} is not one a check sends")
            continue
        if entry is None:
            skip("outside a request")
            continue
        if response := _RESPONSE.match(line):
            if response.group(1) != "*":
                entry.step["expect"]["status"] = response.group(1)
            entry.section = "response"
        elif section := _SECTION.match(line):
            name = section.group(1)
            entry.section = name
            if name not in ("Captures", "Asserts"):
                skip(f"[{name}] is not read: only [Captures] and [Asserts] are")
        elif entry.section in ("request", "response") and (
            header := _HEADER.match(line)
        ):
            _header(entry, header.group(1), header.group(2))
        elif entry.section == "request" and line.startswith(("{", "[")):
            entry.step["body"] = _json_body(lines, number)
            entry.section = "body"
        elif entry.section == "request" and line.startswith("```"):
            body = []  # ```json and the like: the language is not needed
        elif entry.section == "body":
            continue  # the rest of a JSON body, read with its first line
        elif entry.section == "Captures":
            if why := _capture(entry.step, line):
                skip(why)
        elif entry.section == "Asserts":
            if why := _assert(entry.step, line):
                skip(why)
        elif entry.section in ("request", "response"):
            skip("not a header, body or section this import reads")
        else:
            skip(f"a line of [{entry.section}], which is not read")
    _name_steps(flow.steps)
    for step in flow.steps:
        _placeholders(step, secrets)
    return flow


def _new_step(method: str, url: str) -> dict:
    return {
        "name": f"{method} {url}",
        "method": method,
        "url": url,
        "headers": {},
        "body": "",
        "expect": {},
        "capture": {},
    }


def _header(entry: _Entry, name: str, value: str) -> None:
    if entry.section == "request":
        entry.step["headers"][name] = value
    else:
        entry.step["expect"].setdefault("headers", {})[name] = value


def _json_body(lines: list[str], first: int) -> str:
    """The JSON body starting at line `first` (1-based): lines up to the
    one where the brackets balance."""
    depth, taken = 0, []
    for raw in lines[first - 1 :]:
        taken.append(raw)
        depth += sum(raw.count(c) for c in "{[") - sum(raw.count(c) for c in "}]")
        if depth <= 0:
            break
    return "\n".join(taken)


def _capture(step: dict, line: str) -> str:
    if status := _CAPTURE_STATUS.match(line):
        step["capture"][status.group(1)] = "status"
        return ""
    capture = _CAPTURE.match(line)
    if not capture:
        return "not a capture this import reads (jsonpath, header, regex, status)"
    name, kind, spec = capture.group(1), capture.group(2), _unquote(capture.group(3))
    if kind == "jsonpath":
        query = _jmespath(spec)
        if query is None:
            return f"the JSONPath {spec} is beyond the dotted subset ($.a.b[0])"
        step["capture"][name] = f"json:{query}"
    else:
        step["capture"][name] = f"{kind}:{spec}"
    return ""


def _assert(step: dict, line: str) -> str:
    expect = step["expect"]
    if status := _STATUS_ASSERT.match(line):
        expect["status"] = status.group(1)
    elif json_rule := _JSON_ASSERT.match(line):
        return _json_assert(expect, *json_rule.groups())
    elif body := _BODY_ASSERT.match(line):
        if "keyword" in expect:
            return "only one body assert per step"
        expect["keyword"] = _unquote(body.group(2))
        if body.group(1):
            expect["keyword_mode"] = "not_contains"
    elif header := _HEADER_ASSERT.match(line):
        name, text = _unquote(header.group(1)), _unquote(header.group(2))
        expect.setdefault("headers", {})[name] = text
    elif duration := _DURATION_ASSERT.match(line):
        expect["max_response_time_ms"] = int(duration.group(1))
    else:
        return "not an assert this import reads"
    return ""


def _json_assert(expect: dict, path: str, operator: str, value: str) -> str:
    query = _jmespath(_unquote(path))
    if query is None:
        return f"the JSONPath {path} is beyond the dotted subset ($.a.b[0])"
    if operator == "exists":
        rule = {"query": query, "operator": "!=", "expected": None}
    else:
        try:
            expected = json.loads(value)
        except ValueError:
            return (
                f"the value {value} is not a number, a quoted text, true, false or null"
            )
        rule = {"query": query, "operator": operator, "expected": expected}
    expect.setdefault("json", []).append(rule)
    return ""


def _jmespath(jsonpath: str) -> str | None:
    """$.a.b[0].c as a.b[0].c; None beyond that subset."""
    match = _JSONPATH.match(jsonpath)
    if not match or not match.group(1):
        return None
    return match.group(1).removeprefix(".")


def _unquote(text: str) -> str:
    return json.loads(f'"{text}"')


def _name_steps(steps: list[dict]) -> None:
    """Names as the flow rules want them: unique, without '."""
    seen: dict[str, int] = {}
    for step in steps:
        name = step["name"].replace("'", "")[:190]
        seen[name] = seen.get(name, 0) + 1
        step["name"] = name if seen[name] == 1 else f"{name} ({seen[name]})"


def _placeholders(step: dict, secrets: frozenset[str]) -> None:
    def rewrite(text: str) -> str:
        return _VARIABLE.sub(
            lambda m: (
                f"{{{{secrets.{m.group(1)}}}}}" if m.group(1) in secrets else m.group(0)
            ),
            text,
        )

    step["url"] = rewrite(step["url"])
    step["body"] = rewrite(step["body"])
    step["headers"] = {name: rewrite(v) for name, v in step["headers"].items()}
