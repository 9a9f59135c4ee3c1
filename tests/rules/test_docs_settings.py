"""Every setting monitor/settings.py reads from the environment has its
row in the configuration reference, docs/configuration.md.

The names are read from settings.py's source: every call of `env(...)` or
`env.<type>(...)` (env.str, env.bool, env.int, env.float, env.list,
env.email_url ...) whose first argument is a string literal.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "monitor" / "settings.py"
REFERENCE = ROOT / "docs" / "configuration.md"
# A reference row: a table line whose first cell is the name in backticks.
_ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|", re.MULTILINE)


def settings_read_from_environment(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        function = node.func
        if isinstance(function, ast.Attribute):
            function = function.value
        first = node.args[0]
        if (
            isinstance(function, ast.Name)
            and function.id == "env"
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
        ):
            names.add(first.value)
    return names


def documented_settings(reference: str) -> set[str]:
    return set(_ROW.findall(reference))


def test_every_setting_read_from_the_environment_is_documented():
    read = settings_read_from_environment(SETTINGS.read_text())
    missing = read - documented_settings(REFERENCE.read_text())
    assert sorted(missing) == []


def test_the_parser_finds_the_settings_as_settings_py_reads_them():
    read = settings_read_from_environment(SETTINGS.read_text())
    # One of each way settings.py reads a variable, so a parser that
    # misses a kind of call fails here rather than passing on nothing.
    assert {
        "ENV_FILE",  # env.str, before the .env file is read
        "DEBUG",  # env.bool
        "ALLOWED_HOSTS",  # env.list
        "MAX_CONCURRENT_HTTP",  # env.int
        "POLLER_LEASE_TTL",  # env.float
        "EMAIL_URL",  # env.email_url, spread into globals()
        "CONN_MAX_AGE",  # only on PostgreSQL
        "RESULT_RETENTION_DAYS",
        "HOURLY_RETENTION_DAYS",
        "DAILY_RETENTION_DAYS",
    } <= read
    assert len(read) >= 45


def test_a_setting_missing_from_the_reference_is_caught():
    source = (
        'X = env.int("BRAND_NEW_SETTING", default=1)\nY = env("PLAIN", default="")\n'
    )
    reference = (
        "| `PLAIN` | empty | read with env() |\nBRAND_NEW_SETTING in prose only\n"
    )
    read = settings_read_from_environment(source)
    assert read == {"BRAND_NEW_SETTING", "PLAIN"}
    assert read - documented_settings(reference) == {"BRAND_NEW_SETTING"}
