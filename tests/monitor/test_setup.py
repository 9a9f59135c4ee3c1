"""The project as a newcomer meets it: migrations, settings, first admin."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest

from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection

from tests.support.production import PRODUCTION_ENV, manage

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_migrations_match_the_models():
    call_command("makemigrations", "--check", "--dry-run", stdout=StringIO())


def test_the_deploy_check_is_clean_with_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {**PRODUCTION_ENV, "SECRET_KEY": ""}
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


@pytest.mark.django_db
def test_sqlite_runs_in_wal_mode_with_a_busy_timeout():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite only")
    with connection.cursor() as cursor:
        journal_mode = cursor.execute("PRAGMA journal_mode").fetchone()[0]
        busy_timeout = cursor.execute("PRAGMA busy_timeout").fetchone()[0]
    assert journal_mode == "wal"
    assert busy_timeout >= 5000
    assert connection.transaction_mode == "IMMEDIATE"


@pytest.mark.django_db
def test_ensureadmin_creates_one_admin_and_prints_the_password(monkeypatch):
    monkeypatch.setenv("ADMIN_PASSWORD", "correct horse battery")
    out = StringIO()
    call_command("ensureadmin", stdout=out)
    assert "Created admin user 'admin' with password: correct horse battery" in (
        out.getvalue()
    )
    admin = User.objects.get()
    assert admin.is_superuser is True
    assert admin.check_password("correct horse battery") is True

    again = StringIO()
    call_command("ensureadmin", stdout=again)
    assert "password" not in again.getvalue()
    assert User.objects.count() == 1


@pytest.mark.django_db
def test_ensureadmin_generates_a_password_when_none_is_given(monkeypatch):
    monkeypatch.delenv("ADMIN_PASSWORD", raising=False)
    out = StringIO()
    call_command("ensureadmin", stdout=out)
    password = out.getvalue().split("password: ")[1].split()[0]
    assert len(password) >= 12
    assert User.objects.get().check_password(password) is True


@pytest.mark.parametrize(
    ("redis_url", "broker"),
    [("", "ORM"), ("redis://127.0.0.1:6379/0", "Redis")],
)
def test_redis_url_chooses_the_task_queue(redis_url, broker):
    """The broker object is made without connecting, so no Redis is needed."""
    show = (
        "from django_q.brokers import get_broker; from django_q.conf import Conf; "
        "print(type(get_broker()).__name__, Conf.WORKERS)"
    )
    result = manage(
        "shell", "-v", "0", "-c", show, env={**PRODUCTION_ENV, "REDIS_URL": redis_url}
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [broker, "1"]  # sized for a small install
