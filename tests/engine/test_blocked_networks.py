"""POLL_BLOCKED_NETWORKS: an untrusted team's poll never connects to a
blocked network, whether its URL names the address, a name resolves to
it, a redirect leads there or a trusted poll left a connection open to
it; a trusted team's poll does. The saved URL is refused up front when
it names such an address."""

from __future__ import annotations

import pytest

from django.core.exceptions import ValidationError

from polling.engine.types import Target, Task
from projects.models import Project, Team
from tests.support.executor_probe import open_handle, run_poll
from tests.support.outcomes import T0

LOOPBACK = ("127.0.0.0/8",)  # stands in for 169.254.0.0/16: tests stay on 127.x


def poll(handle, url: str, *, trusted: bool = False):
    return run_poll(handle, Task(Target(project_id=7, url=url, trusted=trusted), T0))


@pytest.fixture
def handle(poll_mode):
    handle = open_handle(poll_mode, blocked_networks=LOOPBACK)
    yield handle
    handle.close()


def blocked(address: str) -> str:
    return f"{address} is in a blocked network (POLL_BLOCKED_NETWORKS)"


def test_an_untrusted_poll_never_connects_to_a_blocked_network(handle, target_server):
    outcome = poll(handle, target_server.url("/ok"))

    assert outcome.up is False
    assert outcome.error == blocked("127.0.0.1")
    assert target_server.count() == 0


def test_a_trusted_poll_does(handle, target_server):
    outcome = poll(handle, target_server.url("/ok"), trusted=True)

    assert outcome.up is True
    assert target_server.count() == 1


def test_a_redirect_into_a_blocked_network_is_refused(poll_mode, target_server):
    handle = open_handle(poll_mode, blocked_networks=("127.0.0.2/32",))
    inside = "http://127.0.0.2:9/latest/meta-data/"
    try:
        outcome = poll(handle, target_server.url(f"/redirect-to?location={inside}"))
    finally:
        handle.close()

    assert outcome.error == blocked("127.0.0.2")
    assert target_server.count("/redirect-to") == 1


def test_a_name_that_resolves_into_a_blocked_network_is_refused(
    poll_mode, target_server
):
    resolve = [f"metadata.test:{target_server.port}:127.0.0.1"]
    handle = open_handle(poll_mode, blocked_networks=LOOPBACK, resolve=resolve)
    try:
        outcome = poll(handle, f"http://metadata.test:{target_server.port}/ok")
    finally:
        handle.close()

    assert outcome.error == blocked("127.0.0.1")
    assert target_server.count() == 0


def test_a_connection_a_trusted_poll_left_open_is_not_reused(handle, target_server):
    assert poll(handle, target_server.url("/ok"), trusted=True).up is True

    outcome = poll(handle, target_server.url("/ok"))

    assert outcome.error == blocked("127.0.0.1")
    assert target_server.count() == 1


def test_a_port_check_into_a_blocked_network_is_refused(handle, target_server):
    outcome = poll(handle, f"tcp://127.0.0.1:{target_server.port}")

    assert outcome.error == blocked("127.0.0.1")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://2852039166/",  # 169.254.169.254 as one number
        "http://0xa9fea9fe/",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
        "tcp://169.254.169.254:80",
    ],
)
def test_an_untrusted_team_cannot_save_a_url_in_a_blocked_network(url):
    team = Team.objects.create(name="Guests", slug="guests")
    project = Project(team=team, name="metadata", url=url)

    with pytest.raises(ValidationError) as caught:
        project.full_clean()

    assert "blocked network" in caught.value.message_dict["url"][0]


@pytest.mark.django_db
def test_a_trusted_team_can():
    team = Team.objects.create(name="Ops", slug="ops", trusted=True)

    Project(team=team, name="metadata", url="http://169.254.169.254/").full_clean()


@pytest.mark.django_db
def test_an_ordinary_address_is_fine():
    team = Team.objects.create(name="Guests", slug="guests")

    # TEST-NET-3: public, never connected to (saving opens no connection).
    Project(team=team, name="site", url="http://203.0.113.9:9/").full_clean()
