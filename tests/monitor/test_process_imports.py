"""Each long-running process imports what it uses (docs/operations.md,
memory and sizing): the poller and the tasks process start without the
admin, the pages, the API and its schema, which only the web process
serves. Each is started as its command starts, in a fresh interpreter,
up to and including its system checks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.processes import ROOT, process_env

# Modules only the web process needs, and a few heavy libraries it loads
# with them.
WEB_ONLY = (
    "projects.admin",
    "projects.dashboard.views",
    "projects.api.views",
    "drf_spectacular.plumbing",
    "rest_framework.views",
    "apprise",
    "httpx",
    "allauth.account.views",
)

STARTS_AS = """
import json, sys
import django
django.setup()
from django.core.management import load_command_class
command = load_command_class({app!r}, {name!r})
command.check(tags=command.requires_system_checks)
{then}
print(json.dumps(sorted(sys.modules)))
"""


def modules_at_start(app: str, name: str, then: str = "") -> set[str]:
    script = STARTS_AS.format(app=app, name=name, then=then)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=process_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    ("app", "name", "then"),
    [
        ("polling", "runpoller", "import polling.run.poller, polling.run.parts"),
        ("projects", "qcluster", "import django_q.cluster"),
    ],
)
def test_the_poller_and_the_tasks_start_without_the_webs_modules(app, name, then):
    loaded = modules_at_start(app, name, then)

    assert "django.contrib.admin" in loaded  # the app itself is installed
    assert sorted(m for m in WEB_ONLY if m in loaded) == []


def test_the_admin_checks_still_see_every_model_admin():
    """`manage.py check` discovers the admin before checking it."""
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--tag", "admin"],
        cwd=ROOT,
        env=process_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    script = (
        "import django; django.setup()\n"
        "from django.core import checks\n"
        "from django.contrib import admin\n"
        "checks.run_checks(tags=['admin'])\n"
        "print(len(admin.site._registry))\n"
    )
    counted = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=process_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(counted.stdout.split()[-1]) > 20


def test_on_sqlite_the_web_process_does_not_load_psycopg(tmp_path):
    """DRF would import it through django.contrib.postgres: 9 MiB in each
    web worker of an install that never connects to PostgreSQL."""
    script = (
        "import json, sys\n"
        "import django; django.setup()\n"
        "import monitor.urls, projects.api.serializers\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=process_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}"),
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(done.stdout.splitlines()[-1]))

    assert "rest_framework.serializers" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] == "psycopg") == []
