"""The kinds of check: one registry on each side (the rules in
projects/checks/kinds/, the probes in polling/engine/probes/), serving the
same schemes, and nothing else choosing a kind by its URL's prefix."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from django.core.exceptions import ValidationError

from polling.engine.probes import PROBES, probe_for
from projects.checks.kinds import BY_SCHEME, kind_of, scheme_list
from projects.checks.validators import validate_http_url

ROOT = Path(__file__).resolve().parents[2]


def test_every_scheme_with_rules_has_a_probe_and_back():
    assert sorted(BY_SCHEME) == sorted(PROBES)


def test_each_kind_module_declares_its_probe_under_the_same_name():
    for kind in set(BY_SCHEME.values()):
        for scheme in kind.schemes:
            assert PROBES[scheme].__module__ == f"polling.engine.probes.{kind.name}"


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://example.com/", "http"),
        ("HTTP://example.com/", "http"),
        ("tcp://db.example.com:5432", "tcp"),
        ("ftp://example.com/", None),
        ("example.com", None),
    ],
)
def test_the_scheme_chooses_the_kind(url, name):
    kind = kind_of(url)
    assert (kind.name if kind else None) == name
    assert (probe_for(url) is not None) is (name is not None)


def test_an_unknown_scheme_is_refused_naming_every_known_one():
    with pytest.raises(ValidationError) as refused:
        validate_http_url("ftp://example.com/")
    [message] = refused.value.messages
    assert message == f"Only {scheme_list()} URLs can be polled, not ftp:."
    assert "http://" in message
    assert "tcp://" in message


def prefix_branches(root: Path) -> list[str]:
    """Calls like url.startswith("tcp://") outside the registries."""
    found = []
    for package in ("projects", "polling"):
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts or "kinds" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "startswith"
                    and any(
                        isinstance(arg, ast.Constant)
                        and isinstance(arg.value, str)
                        and arg.value.rstrip("/").endswith(":")
                        and arg.value.split(":")[0] in BY_SCHEME
                        for arg in node.args
                    )
                ):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_kind_is_chosen_by_a_prefix_outside_the_registries():
    assert prefix_branches(ROOT) == []


def test_the_prefix_check_finds_a_branch(tmp_path):
    (tmp_path / "projects").mkdir()
    (tmp_path / "polling").mkdir()
    (tmp_path / "polling" / "thing.py").write_text(
        'def f(url):\n    return url.startswith("tcp://")\n'
    )
    assert prefix_branches(tmp_path) == ["polling/thing.py:2"]
