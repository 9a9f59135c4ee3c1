from __future__ import annotations

import itertools
import ssl

import pytest
import trustme

from projects.models import Project
from tests.target_server import TargetServer

_names = itertools.count(1)


@pytest.fixture
def make_project(db):
    """Create a saved, valid Project; keyword arguments override fields."""

    def make(**fields) -> Project:
        number = next(_names)
        fields.setdefault("name", f"project {number}")
        fields.setdefault("url", f"http://127.0.0.1:9/{number}")
        project = Project(**fields)
        project.full_clean()
        project.save()
        return project

    return make


@pytest.fixture
def target_server():
    """A TargetServer on 127.0.0.1 (see tests/target_server.py)."""
    with TargetServer() as server:
        yield server


@pytest.fixture(scope="session")
def tls_ca() -> trustme.CA:
    """A throwaway certificate authority that no client trusts by default."""
    return trustme.CA()


@pytest.fixture
def tls_target_server(tls_ca):
    """A TargetServer speaking https with a certificate from tls_ca."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert("127.0.0.1").configure_cert(context)
    with TargetServer(ssl_context=context) as server:
        yield server


@pytest.fixture
def running_poller(transactional_db, settings):
    """A Coordinator and its control server on a free port, with the web
    side's settings pointing at it. Yields the RunningPoller."""
    from polling.config import PollerConfig
    from polling.control import ControlServer
    from polling.coordinator import Coordinator

    coordinator = Coordinator(PollerConfig(spread_seconds=1, reload_interval=3600))
    coordinator.start()
    control = ControlServer(
        coordinator, host="127.0.0.1", port=0, token=settings.POLLER_CONTROL_TOKEN
    )
    control.start()
    settings.POLLER_CONTROL_URL = f"http://127.0.0.1:{control.port}"
    yield RunningPoller(coordinator, control, settings.POLLER_CONTROL_URL)
    control.stop()
    coordinator.stop(timeout=10)


class RunningPoller:
    def __init__(self, coordinator, control, url: str) -> None:
        self.coordinator = coordinator
        self.control = control
        self.url = url
