"""domain_expiry_warning_days: one rule set for the admin, the API and the
YAML import (the same messages), and the domain's date shown where the
certificate's is: the project page, the API and the badges."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
import yaml

from django.core.management import CommandError, call_command
from django.utils import timezone

from projects.models import DomainRegistration, Project
from tests.support.admin_forms import ADD_URL, FORM

pytestmark = pytest.mark.django_db

API = "/api/v1/projects/"
NO_DOMAIN = "No domain registration to watch: {}; leave this empty."


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"domain_expiry_warning_days": "0"}, "greater than or equal to 1."),
        ({"domain_expiry_warning_days": "366"}, "less than or equal to 365."),
        (
            {"url": "https://192.0.2.10/", "domain_expiry_warning_days": "30"},
            NO_DOMAIN.format("192.0.2.10 is an address, not a host name"),
        ),
        (
            {"url": "https://co.uk/", "domain_expiry_warning_days": "30"},
            NO_DOMAIN.format("co.uk is a public suffix, which nobody registers"),
        ),
    ],
)
def test_the_admin_refuses_a_warning_that_cannot_hold(admin_client, changes, message):
    response = admin_client.post(ADD_URL, {**FORM, **changes})

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["domain_expiry_warning_days"]
    assert message in errors["domain_expiry_warning_days"][0]
    assert Project.objects.exists() is False


def test_the_admin_saves_the_warning_and_empty_turns_it_off(admin_client):
    response = admin_client.post(ADD_URL, {**FORM, "domain_expiry_warning_days": "45"})
    assert response.status_code == 302
    project = Project.objects.get()
    assert project.domain_expiry_warning_days == 45
    # Its domain is known to the cache at once, to be looked up.
    assert DomainRegistration.objects.get().domain == "example.com"

    url = f"/admin/projects/project/{project.pk}/change/"
    response = admin_client.post(url, {**FORM, "domain_expiry_warning_days": ""})

    assert response.status_code == 302
    project.refresh_from_db()
    assert project.domain_expiry_warning_days is None


def test_the_admin_form_has_it_beside_the_certificate_warning(admin_client):
    page = admin_client.get(ADD_URL).content.decode()

    assert 'name="domain_expiry_warning_days"' in page
    assert page.index('name="tls_expiry_warning_days"') < page.index(
        'name="domain_expiry_warning_days"'
    )


def test_the_api_takes_it_and_refuses_it_on_a_heartbeat(write_api):
    created = write_api.post(
        API,
        {
            "name": "shop",
            "url": "https://shop.example.com/",
            "domain_expiry_warning_days": 20,
        },
        format="json",
    )
    refused = write_api.post(
        API,
        {"name": "cron", "kind": "heartbeat", "domain_expiry_warning_days": 20},
        format="json",
    )

    assert created.status_code == 201, created.json()
    assert created.json()["domain_expiry_warning_days"] == 20
    assert created.json()["domain_expires_at"] is None
    assert refused.status_code == 400
    assert refused.json() == {
        "domain_expiry_warning_days": [
            NO_DOMAIN.format("a heartbeat project has no host name")
        ]
    }


def test_the_api_shows_the_domains_date_as_it_shows_the_certificates(
    read_api, make_project
):
    project = make_project(url="https://example.com/", domain_expiry_warning_days=30)
    expires = timezone.now().replace(microsecond=0) + timedelta(days=200)
    Project.objects.filter(pk=project.pk).update(domain_expires_at=expires)

    body = read_api.get(f"{API}{project.pk}/").json()

    assert body["domain_expires_at"] == expires.isoformat().replace("+00:00", "Z")
    schema = read_api.get("/api/v1/schema/?format=json").json()
    fields = schema["components"]["schemas"]["Project"]["properties"]
    assert fields["domain_expiry_warning_days"]["nullable"] is True
    assert fields["domain_expires_at"]["readOnly"] is True


def run_import(tmp_path, document: dict) -> str:
    path = tmp_path / "projects.yaml"
    path.write_text(yaml.safe_dump(document))
    out = StringIO()
    call_command("importprojects", str(path), stdout=out)
    return out.getvalue()


def test_yaml_goes_out_and_comes_back_with_it(make_project, tmp_path):
    make_project(
        name="router", url="icmp://router.example.net", domain_expiry_warning_days=21
    )
    make_project(name="plain", url="https://example.org/")
    out = StringIO()
    call_command("exportprojects", stdout=out)
    document = yaml.safe_load(out.getvalue())
    entries = {entry["name"]: entry for entry in document["projects"]}

    assert entries["router"]["domain_expiry_warning_days"] == 21
    assert "domain_expiry_warning_days" not in entries["plain"]  # off: the default

    Project.objects.all().delete()
    run_import(tmp_path, document)

    assert Project.objects.get(name="router").domain_expiry_warning_days == 21
    assert Project.objects.get(name="plain").domain_expiry_warning_days is None


def test_yaml_refuses_it_with_the_admins_message(tmp_path):
    document = {
        "version": 1,
        "projects": [
            {
                "name": "db",
                "url": "tcp://db.corp.internal:5432",
                "domain_expiry_warning_days": 30,
            }
        ],
    }

    with pytest.raises(CommandError) as caught:
        run_import(tmp_path, document)

    assert (
        "projects[db].domain_expiry_warning_days: "
        + NO_DOMAIN.format(
            "db.corp.internal is under no public suffix, so no registry holds it"
        )
    ) in str(caught.value)


def test_the_project_page_shows_the_domain_and_its_date(admin_client, make_project):
    project = make_project(
        url="https://www.example.com/", domain_expiry_warning_days=30
    )
    expires = timezone.now() + timedelta(days=200)
    DomainRegistration.objects.filter(domain="example.com").update(
        expires_at=expires, checked_at=timezone.now(), attempted_at=timezone.now()
    )
    Project.objects.filter(pk=project.pk).update(domain_expires_at=expires)

    page = admin_client.get(project.get_absolute_url()).content.decode()

    assert f'Domain example.com expires <time datetime="{expires:%Y-%m-%d}' in page


def test_the_project_page_says_why_a_lookup_failed(admin_client, make_project):
    project = make_project(url="https://www.example.de/", domain_expiry_warning_days=30)
    DomainRegistration.objects.filter(domain="example.de").update(
        attempted_at=timezone.now(),
        last_error="the registry publishes no expiration date for example.de",
    )

    page = admin_client.get(project.get_absolute_url()).content.decode()

    assert (
        "Domain example.de expiry unknown · last lookup failed: the registry " in page
    )


def test_the_project_page_says_a_new_domain_is_not_looked_up_yet(
    admin_client, make_project
):
    project = make_project(url="https://www.example.de/", domain_expiry_warning_days=30)

    page = admin_client.get(project.get_absolute_url()).content.decode()

    assert "Domain example.de not looked up yet" in page


def test_the_domain_badge_counts_the_days_left(client, make_project):
    project = make_project(url="https://example.com/", domain_expiry_warning_days=30)
    expires = timezone.now() + timedelta(days=10, hours=1)
    Project.objects.filter(pk=project.pk).update(domain_expires_at=expires)

    badge = client.get(f"/badge/{project.badge_key}/domain.svg")
    unknown = make_project(url="https://example.org/")
    no_data = client.get(f"/badge/{unknown.badge_key}/domain.svg")

    assert badge.status_code == 200
    assert "10 days left" in badge.content.decode()
    assert "no data" in no_data.content.decode()
