"""CI's reading of pip-audit's report (.ci/audit_report.py): a known
advisory fails CI; an advisory service out of reach only warns."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

from tests.support.processes import ROOT

SCRIPT = ROOT / ".ci" / "audit_report.py"
_spec = importlib.util.spec_from_file_location("audit_report", SCRIPT)
audit_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(audit_report)


def report(tmp_path, *dependencies):
    path = tmp_path / "audit.json"
    path.write_text(json.dumps({"dependencies": list(dependencies), "fixes": []}))
    return path


def test_a_known_advisory_fails(tmp_path):
    path = report(
        tmp_path,
        {
            "name": "django",
            "version": "5.2.0",
            "vulns": [{"id": "GHSA-xxxx", "fix_versions": ["5.2.1"], "aliases": []}],
        },
        {"name": "httpx", "version": "0.28.1", "vulns": []},
    )

    status, lines = audit_report.verdict(path, 1)

    assert status == 1
    assert "django 5.2.0: GHSA-xxxx (fixed in 5.2.1)" in lines


def test_clean_dependencies_pass(tmp_path):
    path = report(tmp_path, {"name": "httpx", "version": "0.28.1", "vulns": []})

    assert audit_report.verdict(path, 0) == (
        0,
        ["pip-audit: 1 dependencies audited, no known vulnerabilities."],
    )


def test_nothing_audited_warns_but_passes(tmp_path):
    reason = "Dependency not found on PyPI and could not be audited: django (5.2.19)"
    path = report(tmp_path, {"name": "django", "skip_reason": reason})

    status, lines = audit_report.verdict(path, 0)

    assert status == 0
    assert lines[0].startswith("WARNING: pip-audit could not reach")


def test_no_report_at_all_warns_but_passes(tmp_path):
    status, lines = audit_report.verdict(tmp_path / "missing.json", 1)

    assert status == 0
    assert "NOT audited" in lines[0]


def test_the_script_exits_with_the_verdict(tmp_path):
    path = report(
        tmp_path,
        {"name": "django", "version": "5.2.0", "vulns": [{"id": "PYSEC-1"}]},
    )

    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(path), "1"], capture_output=True, text=True
    )

    assert result.returncode == 1
    assert "PYSEC-1" in result.stderr


def test_the_constraints_pin_the_floors_of_pyproject():
    pins = dict(
        line.split("==")
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in line
    )
    django = tuple(int(p) for p in pins["Django"].split("."))
    gunicorn = int(pins["gunicorn"].split(".")[0])

    assert django >= (5, 2, 17)
    assert gunicorn >= 23
