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
