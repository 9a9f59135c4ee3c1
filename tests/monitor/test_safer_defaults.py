"""Safer defaults: HSTS preload off, a Content-Security-Policy on every
page, error pages without secrets, no fallback SECRET_KEY, an acknowledge
page that is neither cached nor chatty, and django-q2's schedules for
superusers only."""

from __future__ import annotations

import sys

import pytest
from django_q.models import Failure, Schedule

from django.contrib.auth.models import Permission, User
from django.test import RequestFactory
from django.utils import timezone
from django.views.debug import technical_500_response

from projects.models import Incident
from projects.notifications.links import acknowledge_url
from tests.support.production import PRODUCTION_ENV, manage

DB_PASSWORD = "hunter2-db-password"
REDIS_PASSWORD = "redis-pa55word"
MAIL_PASSWORD = "mail-pa55word"


def setting_of_the_product(name: str, env: dict[str, str]):
    result = manage(
        "shell",
        "-c",
        f"from django.conf import settings; print(repr(settings.{name}))",
        env=env,
    )
    return result


def test_hsts_preload_is_off_unless_the_operator_opts_in():
    off = setting_of_the_product("SECURE_HSTS_PRELOAD", PRODUCTION_ENV)
    on = setting_of_the_product(
        "SECURE_HSTS_PRELOAD", {**PRODUCTION_ENV, "SECURE_HSTS_PRELOAD": "true"}
    )

    last_lines = [r.stdout.strip().splitlines()[-1] for r in (off, on)]
    assert last_lines == ["False", "True"]


def test_debug_without_a_secret_key_refuses_to_start():
    env = {**PRODUCTION_ENV, "DEBUG": "true", "SECRET_KEY": ""}

    result = manage("check", env=env)

    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/admin/login/", "/incidents/", "/ping/x"])
def test_every_page_has_a_content_security_policy(client, path):
    policy = client.get(path)["Content-Security-Policy"]

    assert "script-src 'self'" in policy
    assert "style-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy


@pytest.mark.django_db
def test_an_empty_setting_sends_no_policy(client, settings):
    settings.CONTENT_SECURITY_POLICY = ""

    assert "Content-Security-Policy" not in client.get("/admin/login/")


def debug_page(settings, monkeypatch) -> str:
    settings.DEBUG = True
    settings.DATABASE_URL = f"postgres://monitor:{DB_PASSWORD}@db.internal/monitor"
    settings.REDIS_URL = f"redis://:{REDIS_PASSWORD}@cache.internal:6379/0"
    settings.Q_CLUSTER = {"redis": settings.REDIS_URL}
    settings.SENTRY_DSN = "https://abc@o1.ingest.example/1"
    monkeypatch.setenv("EMAIL_URL", f"smtp://ops:{MAIL_PASSWORD}@mail.internal:587")
    request = RequestFactory().get(
        "/", HTTP_X_UPSTREAM=f"http://user:{DB_PASSWORD}@upstream/"
    )
    request.META["EMAIL_URL"] = f"smtp://ops:{MAIL_PASSWORD}@mail.internal:587"
    try:
        database_url = settings.DATABASE_URL  # noqa: F841 - shown as a local
        raise RuntimeError("boom")
    except RuntimeError:
        response = technical_500_response(request, *sys.exc_info())
    return response.content.decode()


def test_a_debug_error_page_shows_no_url_passwords(settings, monkeypatch):
    page = debug_page(settings, monkeypatch)

    assert "boom" in page
    for secret in (DB_PASSWORD, REDIS_PASSWORD, MAIL_PASSWORD):
        assert secret not in page
    assert "db.internal" not in page.split("DATABASE_URL")[1][:200]


@pytest.fixture
def incident(make_project):
    project = make_project(name="shop")
    return Incident.objects.create(
        project=project,
        started_at=timezone.now(),
        confirmed_at=timezone.now(),
        first_error="connection refused by 10.0.0.7:5432 (internal-db)",
        last_error="password authentication failed for user deploy",
    )


def test_the_acknowledge_page_is_not_cached_and_shows_no_error(
    client, incident, settings
):
    settings.SITE_URL = ""

    response = client.get(acknowledge_url(incident.pk))

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    page = response.content.decode()
    assert "shop" in page
    assert "10.0.0.7" not in page
    assert "password authentication" not in page


def test_a_bad_acknowledge_link_is_not_cached_either(client):
    response = client.get("/incidents/acknowledge/nonsense/")

    assert response.status_code == 404
    assert "no-store" in response["Cache-Control"]


@pytest.fixture
def task_staff(db, client):
    """A staff user with every permission on django-q2's models."""
    user = User.objects.create_user("ops", password="pw", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="django_q")
    )
    client.force_login(user)
    return client


def test_staff_cannot_add_or_change_schedules(task_staff):
    schedule = Schedule.objects.create(func="math.floor", args="1")
    form = {"func": "os.system", "args": "'id'", "schedule_type": "O", "repeats": "-1"}

    added = task_staff.post("/admin/django_q/schedule/add/", form)
    changed = task_staff.post(f"/admin/django_q/schedule/{schedule.pk}/change/", form)
    deleted = task_staff.post(
        f"/admin/django_q/schedule/{schedule.pk}/delete/", {"post": "yes"}
    )

    assert (added.status_code, changed.status_code, deleted.status_code) == (
        403,
        403,
        403,
    )
    schedule.refresh_from_db()
    assert schedule.func == "math.floor"
    assert Schedule.objects.filter(func="os.system").exists() is False


def test_staff_can_still_see_schedules(task_staff):
    schedule = Schedule.objects.create(func="math.floor", args="1")

    assert task_staff.get("/admin/django_q/schedule/").status_code == 200
    page = task_staff.get(f"/admin/django_q/schedule/{schedule.pk}/change/")
    assert page.status_code == 200
    assert b"math.floor" in page.content


def test_only_superusers_may_resubmit_tasks(task_staff, admin_client):
    now = timezone.now()
    Failure.objects.create(
        id="f" * 32, name="t", func="os.system", started=now, stopped=now, success=False
    )

    staff_page = task_staff.get("/admin/django_q/failure/")
    admin_page = admin_client.get("/admin/django_q/failure/")

    assert b"Resubmit selected tasks" not in staff_page.content
    assert b"Resubmit selected tasks" in admin_page.content


def test_a_superuser_may_add_a_schedule(admin_client):
    form = {
        "func": "math.floor",
        "args": "1",
        "schedule_type": "O",
        "repeats": "-1",
        "next_run_0": "2030-01-01",
        "next_run_1": "00:00:00",
        "cluster": "",
    }

    response = admin_client.post("/admin/django_q/schedule/add/", form)

    assert response.status_code == 302, response.content[:2000]
    assert Schedule.objects.filter(func="math.floor").exists()
